"""An in-process, thread-safe store: the test double, and fine for single-process apps."""

from __future__ import annotations

import threading
from typing import ClassVar

from .base import BaseSnapshotStore

__all__ = ["InMemorySnapshotStore"]


class _Session:
    """One session's snapshot and log."""

    __slots__ = ("data", "head", "log", "version")

    def __init__(self) -> None:
        self.version = 0
        self.data = ""
        self.head = 0
        self.log: dict[int, str] = {}


class InMemorySnapshotStore(BaseSnapshotStore):
    """Keeps snapshots and logs in dicts behind one lock; nothing survives the process."""

    backend_name: ClassVar[str] = "memory"

    def __init__(self) -> None:
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()

    def _get(self, session_id: str) -> _Session:
        return self._sessions.setdefault(session_id, _Session())

    def _load(self, session_id: str) -> tuple[int, str] | None:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or session.version == 0:
                return None
            return session.version, session.data

    def _save(self, session_id: str, data: str, expected: int) -> tuple[bool, int]:
        with self._lock:
            session = self._get(session_id)
            if session.version != expected:
                return False, session.version
            session.version += 1
            session.data = data
            return True, session.version

    def _delete(self, session_id: str, expected: int) -> tuple[bool, int]:
        with self._lock:
            session = self._sessions.get(session_id)
            version = session.version if session is not None else 0
            if version != expected:
                return False, version
            del self._sessions[session_id]
            return True, 0

    def _append(self, session_id: str, records: list[str]) -> int:
        with self._lock:
            session = self._get(session_id)
            first = session.head + 1
            for offset, record in enumerate(records):
                session.log[first + offset] = record
            session.head += len(records)
            return first

    def _read_log(self, session_id: str, after: int) -> list[tuple[int, str]]:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return []
            # dicts keep insertion order, and records are inserted in sequence order
            return [(seq, record) for seq, record in session.log.items() if seq > after]

    def _log_head(self, session_id: str) -> int:
        with self._lock:
            session = self._sessions.get(session_id)
            return session.head if session is not None else 0

    def _trim_log(self, session_id: str, upto: int) -> int:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return 0
            doomed = [seq for seq in session.log if seq <= upto]
            for seq in doomed:
                del session.log[seq]
            return len(doomed)
