"""An in-process, thread-safe store: the test double, and fine for single-process apps."""

from __future__ import annotations

import threading
from typing import ClassVar

from .base import ArchiveRecord, BaseSnapshotStore

__all__ = ["InMemorySnapshotStore"]


class _Session:
    """One session's snapshot, log and archive."""

    __slots__ = ("archive", "archive_seqs", "archived_ids", "data", "head", "log", "version")

    def __init__(self) -> None:
        self.version = 0
        self.data = ""
        self.head = 0
        self.log: dict[int, str] = {}
        self.archive: dict[str, str] = {}  # handle -> data
        self.archive_seqs: list[str] = []  # handle of archive entry seq i + 1
        self.archived_ids: dict[str, int] = {}  # message id -> lowest log_seq


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

    def _put_archive(self, session_id: str, records: list[ArchiveRecord]) -> list[int]:
        with self._lock:
            session = self._get(session_id)
            seqs: list[int] = []
            for record in records:
                if record.handle in session.archive:
                    seqs.append(0)
                    continue
                session.archive[record.handle] = record.data
                session.archive_seqs.append(record.handle)
                if record.message_id is not None:
                    known = session.archived_ids.get(record.message_id, record.log_seq)
                    session.archived_ids[record.message_id] = min(known, record.log_seq)
                seqs.append(len(session.archive_seqs))
            return seqs

    def _get_archive(self, session_id: str, handles: list[str]) -> dict[str, str]:
        with self._lock:
            session = self._sessions.get(session_id)
            stored = session.archive if session is not None else {}
            return {handle: stored[handle] for handle in handles if handle in stored}

    def _read_archive(self, session_id: str, after: int, limit: int | None) -> list[tuple[int, str, str]]:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return []
            end = len(session.archive_seqs) if limit is None else min(len(session.archive_seqs), after + limit)
            return [(seq + 1, h, session.archive[h]) for seq, h in enumerate(session.archive_seqs[after:end], after)]

    def _archive_head(self, session_id: str) -> int:
        with self._lock:
            session = self._sessions.get(session_id)
            return len(session.archive_seqs) if session is not None else 0

    def _archived_ids(self, session_id: str, message_ids: list[str]) -> dict[str, int]:
        with self._lock:
            session = self._sessions.get(session_id)
            known = session.archived_ids if session is not None else {}
            return {i: known[i] for i in message_ids if i in known}

    def _trim_log(self, session_id: str, upto: int) -> int:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return 0
            doomed = [seq for seq in session.log if seq <= upto]
            for seq in doomed:
                del session.log[seq]
            return len(doomed)
