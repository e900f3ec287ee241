"""Refusing an add that reuses a message id of the shared session with different content.

A load replays the first message it meets under an id and skips the later ones (a retried append is a duplicate,
not a new message), so an append of a *different* message under an id the session already holds would be
acknowledged and then never seen. :meth:`~ctxbudget.shared_session.session.SharedSession.add` checks first, as
:meth:`~ctxbudget.session.session.ContextSession.add` does, and raises :class:`InvalidMessageError` naming the id;
re-adding the identical message (the same id and content: a retry) stays allowed.

The check reads the snapshot, the archive entries of the ids the store says are archived, and the log past the
snapshot. :class:`LogIds` keeps, per handle, the id and content digest of every log record it has read past the
snapshot, so each record is read and decoded once per handle, not once per add. The check and the append are two
store calls: two writers adding different messages under one new id at the same moment can both pass it (the load
keeps the first).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Sequence
from typing import get_args

from ..archive.entry import ArchiveReason, content_digest
from ..errors import InvalidMessageError, SnapshotFormatError
from ..messages.message import Message
from ..session.snapshot import SessionSnapshot
from ._log import decode

__all__ = ["LogIds", "archive_handles", "digest_of", "held_digests", "refuse_reused"]


def digest_of(message: Message) -> str:
    """The content digest of ``message`` (every field, id included), as JSON."""
    return content_digest(message.model_dump(mode="json"))


class LogIds:
    """The ``{id: (seq, digest)}`` of the first log record of each message id past the snapshot, read once."""

    def __init__(self) -> None:
        self.synced = 0  # the last log seq read
        self._first: dict[str, tuple[int, str]] = {}
        self._seqs: deque[tuple[int, str]] = deque()  # (seq, id) in seq order, to forget what a snapshot absorbed
        self._lock = threading.Lock()

    def after(self, log_seq: int) -> int:
        """Where the next read of the log starts, for a snapshot that absorbed up to ``log_seq``."""
        with self._lock:
            return max(self.synced, log_seq)

    def absorb(self, log_seq: int, records: Iterable[tuple[int, str]]) -> None:
        """Forget the records the snapshot absorbed (live or archived now), keep the ids of the new ones."""
        with self._lock:
            while self._seqs and self._seqs[0][0] <= log_seq:
                seq, message_id = self._seqs.popleft()
                if self._first.get(message_id, (None,))[0] == seq:
                    del self._first[message_id]
            for seq, record in records:
                if seq <= self.synced:
                    continue
                self.synced = seq
                try:
                    message = decode(seq, record)
                except SnapshotFormatError:
                    continue  # a load skips it too
                if message.id not in self._first:
                    self._first[message.id] = (seq, digest_of(message))
                    self._seqs.append((seq, message.id))
            self.synced = max(self.synced, log_seq)

    def digest(self, message_id: str) -> str | None:
        """The digest of the first log record holding ``message_id`` past the snapshot, if any."""
        with self._lock:
            found = self._first.get(message_id)
        return found[1] if found is not None else None


def archive_handles(message_ids: Iterable[str]) -> list[str]:
    """Every handle an archived message of these ids can be under (one per archive reason)."""
    return [f"ctx://archive/{message_id}.{reason}" for message_id in message_ids for reason in get_args(ArchiveReason)]


def held_digests(snapshot: SessionSnapshot | None) -> dict[str, str]:
    """Digests of the messages the snapshot holds: its inline archive's originals first, then live messages."""
    held: dict[str, str] = {}
    if snapshot is None:
        return held
    for entry in snapshot.archive:  # a whole-history snapshot keeps its archive inside
        if entry.message is not None:
            held.setdefault(entry.message.id, digest_of(entry.message))
    for message in (*snapshot.history, *snapshot.system_messages, *snapshot.pinned):
        held.setdefault(message.id, digest_of(message))
    return held


def refuse_reused(messages: Sequence[Message], held: dict[str, str], log: LogIds) -> None:
    """Raise :class:`InvalidMessageError` for a message whose id the session holds with different content."""
    for message in messages:
        digest = held.get(message.id) or log.digest(message.id)
        if digest is not None and digest != digest_of(message):
            raise InvalidMessageError(
                f"message.id: {message.id!r} is already in this session with different content; a shared "
                "session keeps the first message under an id (re-adding the identical message is a harmless "
                "retry), so give the new message its own id; nothing was appended",
                field="id",
            )
