"""``SharedSession``: many workers, threads or processes on one session through a :class:`SnapshotStore`.

The stored state of a shared session is three things, kept by the store:

* **the snapshot**: one JSON document (:class:`~ctxbudget.session.snapshot.SessionSnapshot`) holding the *live* state:
  live history, summary, goal, pinned content, the add positions of the live messages and how many messages were
  ever added. It is written by one atomic compare-and-set, and its size is bounded by the window, not by the
  conversation's past: a process that dies anywhere leaves either the old snapshot or the new one.
* **the archive**: every original that left the live state, one entry per handle, append-only beside the snapshot
  (:meth:`~ctxbudget.stores.base.SnapshotStore.put_archive`). An entry is written once, *before* the snapshot that
  refers to it, so no snapshot ever names an entry that is missing. An entry written by a compaction that then
  lost its compare-and-set stays: it holds a genuine original of one of the session's messages, and entries are
  never changed. Loads never read the archive; reading an original (``read_archived``, ``originals()``,
  ``search_archive``) fetches it by handle or, for a listing, by range: each handle keeps the entries it has read,
  so after a conflict or on the next load it reads only the entries written since.
* **the append log**: workers add messages by appending one record per message. Appends never conflict and
  never touch the snapshot.

Reading (:meth:`SharedSession.load`) takes the snapshot, then replays the log records after the snapshot's
``log_seq``, skipping any message the session already holds: live, or archived from a log record the snapshot
absorbed (the store says so by message id, :meth:`~ctxbudget.stores.base.SnapshotStore.archived_ids`). So a
record appended twice (a retried append whose first attempt did land) is never duplicated. Compaction
(:meth:`SharedSession.compact`, or automatically in :meth:`SharedSession.build_request`) runs on a loaded version
and saves with ``expected_version``; the new snapshot's ``log_seq`` is the last record it absorbed. Messages appended
meanwhile sit after that ``log_seq`` and are replayed on top by the next load. A stale compaction loses the
compare-and-set, is discarded, and is recomputed on a fresh load (bounded retries, then
:class:`~ctxbudget.errors.SnapshotConflictError`). Log records are trimmed only after a snapshot absorbing
them was saved; a load that finds records it needed already trimmed (a newer snapshot absorbed them) reloads.

A snapshot written before the archive moved out of it (its archive inside, ``archive_in_store`` false) is read as it
is; the next save writes its archive to the store and a live-only snapshot (the migration).

Integrity: the snapshot and every archive entry carry a content digest, checked when read; an edited or corrupted
one raises :class:`~ctxbudget.errors.SnapshotIntegrityError` naming the store key or handle and both digests.

A log record that cannot be decoded or validated on replay (written by hand, by another version, or holding
text that cannot be serialized, such as a lone surrogate) never wedges the session: the load skips it, counts it
(:attr:`LoadedSession.invalid`, :attr:`SharedSessionStats.skipped_records`) and logs a warning naming its
sequence number and the problem. Every valid message around it is replayed as usual, and the next compaction
absorbs and trims the bad record with the rest.

Every operation has an async twin (:meth:`SharedSession.aload`, ``aadd``, ``abuild_request``, ``acompact``,
``aoriginals``) for use inside asyncio: store calls are awaited (``redis.asyncio`` for Redis, a worker thread for
SQLite and the in-memory store) and the summarizer of an async compaction is awaited.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..archive.search import ArchiveHit
from ..compaction.summarize import AsyncSummarizer, Summarizer
from ..errors import InvalidPolicyError, SnapshotFormatError, UsageError
from ..messages.message import Message
from ..messages.registry import DEFAULT_REGISTRY, ModelRegistry
from ..messages.tokens import TokenCounter
from ..session.events import ContextCompacted
from ..session.request import BuiltRequest
from ..session.session import ContextSession
from ..session.snapshot import SessionSnapshot
from ..stores.base import SnapshotStore
from ._archive import encode_entry
from ._async import aload, arefuse_reused, astore, awith_retries
from ._log import LOG_RECORD_SCHEMA, records_of
from ._models import LoadedSession, SharedSessionStats
from ._state import built_compaction, itself
from ._store_io import SessionStoreIO

__all__ = ["LOG_RECORD_SCHEMA", "LoadedSession", "SharedSession", "SharedSessionStats"]

_DEFAULT_ATTEMPTS = 8


class SharedSession:
    """A handle on one session shared by many workers through a :class:`SnapshotStore`.

    Handles are cheap and hold no session state between calls (every operation loads fresh state); a handle keeps
    only the archive entries it has read (written once, so never stale). Each worker, thread or process may hold its
    own handle, or share one. Create the stored session once with :meth:`create`.

    Args:
        store: where the snapshot, the archive and the append log live.
        session_id: the shared session's id.
        counter: token counter for loaded sessions (default: as :meth:`ContextSession.restore` picks).
        summarizer: summarizer for compactions (default: the offline extractive one).
        registry: model registry for loaded sessions.
        max_attempts: how many times a load or a save is tried against concurrent writers before giving up.
    """

    def __init__(
        self,
        store: SnapshotStore,
        session_id: str,
        *,
        counter: TokenCounter | None = None,
        summarizer: Summarizer | AsyncSummarizer | None = None,
        registry: ModelRegistry = DEFAULT_REGISTRY,
        max_attempts: int = _DEFAULT_ATTEMPTS,
    ) -> None:
        if not isinstance(session_id, str) or not session_id.strip():
            raise UsageError(f"session_id: must be a non-blank str, got {session_id!r}", field="session_id")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise InvalidPolicyError(f"max_attempts: must be an int >= 1, got {max_attempts!r}", field="max_attempts")
        self.store = store
        self.session_id = session_id
        self.counter = counter
        self.summarizer = summarizer
        self.registry = registry
        self.max_attempts = max_attempts
        self.stats = SharedSessionStats()
        self._io = SessionStoreIO(self)

    @classmethod
    def create(
        cls,
        store: SnapshotStore,
        session: ContextSession,
        *,
        counter: TokenCounter | None = None,
        summarizer: Summarizer | AsyncSummarizer | None = None,
        registry: ModelRegistry = DEFAULT_REGISTRY,
        max_attempts: int = _DEFAULT_ATTEMPTS,
    ) -> SharedSession:
        """Store ``session`` as the first snapshot of a new shared session and return a handle on it.

        The session's configuration (window, policy, system prompt, tools) and any messages it already holds
        become version 1: its archive goes to the store's archive, its live state to the snapshot. Its
        ``log_seq`` is kept, so log records appended before creation are replayed.

        Raises:
            SnapshotFormatError: the session cannot be serialized; nothing was created.
            SnapshotConflictError: a session with this id already exists in the store.
            SnapshotStoreError: the store failed (the session may or may not have been created; a retry that
                gets :class:`SnapshotConflictError` finds it created).
        """
        whole = _serialized(session, "create", session.snapshot)
        if store.load(session.session_id) is not None:
            # checked before the archive is written, so a duplicate create never adds entries to another session
            store.save(session.session_id, whole.to_json(), expected_version=None)  # raises the conflict
        positions = whole.order
        records = [
            encode_entry(entry, positions.get(entry.message.id) if entry.message else None, whole.log_seq)
            for entry in whole.archive
        ]
        head = max(store.put_archive(session.session_id, records), default=0) if records else 0
        live = {m.id for m in whole.history} | {m.id for m in whole.system_messages}
        first = whole.model_copy(
            update={
                "archive": (),
                "order": {i: p for i, p in positions.items() if i in live},
                "added": whole.next_position,
                "archive_in_store": True,
                "archive_head": head,
            }
        )
        store.save(session.session_id, first.to_json(), expected_version=None)
        return cls(
            store,
            session.session_id,
            counter=counter if counter is not None else session.counter,
            summarizer=summarizer,
            registry=registry,
            max_attempts=max_attempts,
        )

    # -- writing ---------------------------------------------------------------------------------------------------
    def add(self, *messages: Message) -> list[int]:
        """Append messages to the shared log (one atomic append); never conflicts with other writers.

        Appending a message the session already holds (the same id and content) is harmless: loads skip it. So
        after an append that raised :class:`SnapshotStoreError` the caller may simply append the same messages
        again. A *different* message under an id the session holds is refused, as :meth:`ContextSession.add`
        refuses it (a load keeps the first message of an id, so it would never be seen): the snapshot, the
        archive entries of those ids and the log records past the snapshot (each read once per handle) are
        checked before the append. Two writers adding different messages under one new id at the same moment
        can both pass the check; the load keeps the first.

        Returns:
            The log sequence numbers of the records, in order.

        Raises:
            InvalidMessageError: an argument is not a :class:`Message`, two of them share an id, one reuses an
                id the session holds with different content, or one holds text that cannot be encoded as UTF-8
                (a lone surrogate); nothing was appended.
            SnapshotFormatError, SnapshotIntegrityError: the stored snapshot (or an archive entry of a reused
                id) is malformed or corrupted; nothing was appended.
            SnapshotStoreError: the store failed; the messages may or may not have been appended (a commit can
                land and its reply be lost). Re-appending the same messages is safe: loads skip duplicate ids.
        """
        records = records_of(messages)
        self._io.refuse_reused(messages)
        seqs = self.store.append(self.session_id, records)
        self.stats.bump("appended", len(seqs))
        return seqs

    def add_user(self, text: str, **metadata: Any) -> Message:
        """Append a user message and return it."""
        message = Message(role="user", content=text, metadata=metadata)
        self.add(message)
        return message

    # -- reading ---------------------------------------------------------------------------------------------------
    def load(self) -> LoadedSession:
        """Return a consistent view: the latest snapshot plus every log message after its ``log_seq``.

        A log record that does not decode or validate is skipped, counted and logged (see the module docs); the
        load still returns every valid message. The archive is not read (its entries are fetched when read).

        Raises:
            UsageError: the store has no snapshot for this session (create it with :meth:`create`).
            SnapshotFormatError: the stored snapshot does not validate (field named).
            SnapshotIntegrityError: the stored snapshot does not match its digest (edited or corrupted).
            SnapshotConflictError: records kept being trimmed under this reader for ``max_attempts`` tries.
            SnapshotStoreError: the store failed.
        """
        for _ in range(self.max_attempts):
            fetched = self._io.fetch()
            if fetched is not None:
                return self._io.build(fetched)
            self.stats.bump("stale_reloads")
        raise self._io.kept_moving(self._io.stored_version())

    def originals(self) -> list[Message]:
        """Every message ever added to the shared session, as given, in add order (see :meth:`load`)."""
        return self.load().session.originals()

    def search_archive(self, query: str, k: int = 5) -> list[ArchiveHit]:
        """Rank every archived original of the shared session for ``query`` (entries are read from the store once)."""
        return self.load().session.search_archive(query, k)

    # -- requests and compaction -----------------------------------------------------------------------------------
    def build_request(self) -> BuiltRequest:
        """Load fresh state and build a request; an auto-compaction it ran is saved (compare-and-set).

        Raises:
            ContextOverflowError: the request is past the hard stop even after compaction.
            SnapshotConflictError: the compaction lost to other writers on ``max_attempts`` tries in a row.
            SnapshotStoreError: the store failed; nothing was written.
        """
        return self._io.with_retries(
            "build_request", self.load, lambda loaded: loaded.session.build_request(), built_compaction
        )

    def compact(self, instructions: str | None = None) -> ContextCompacted:
        """Compact the shared session now (manual trigger) and save the result with compare-and-set.

        A compaction computed on a version someone else replaced is never written: it is discarded and
        recomputed on a fresh load, up to ``max_attempts`` times.

        Raises:
            CompactionError: compaction failed; nothing was written.
            SnapshotConflictError: the save lost to other writers on ``max_attempts`` tries in a row.
            SnapshotStoreError: the store failed; the stored state is the old snapshot or the new one, whole.
        """
        return self._io.with_retries("compact", self.load, lambda loaded: loaded.session.compact(instructions), itself)

    def _save(self, loaded: LoadedSession) -> int:
        """Write what ``loaded`` archived, then its snapshot over exactly the version it came from; trim the log."""
        return self._io.save(loaded)

    # -- async twins (store calls and an async summarizer are awaited, see ctxbudget.shared_session._async) ------------
    async def aadd(self, *messages: Message) -> list[int]:
        """Async :meth:`add`."""
        records = records_of(messages)
        await arefuse_reused(self._io, messages)
        seqs: list[int] = await astore(self.store, "append", self.session_id, records)
        self.stats.bump("appended", len(seqs))
        return seqs

    async def aadd_user(self, text: str, **metadata: Any) -> Message:
        """Async :meth:`add_user`."""
        message = Message(role="user", content=text, metadata=metadata)
        await self.aadd(message)
        return message

    async def aload(self) -> LoadedSession:
        """Async :meth:`load`."""
        return await aload(self._io)

    async def aoriginals(self) -> list[Message]:
        """Async :meth:`originals` (the archive is read in a worker thread)."""
        loaded = await self.aload()
        return await asyncio.to_thread(loaded.session.originals)

    async def abuild_request(self) -> BuiltRequest:
        """Async :meth:`build_request`: store calls and an async summarizer are awaited."""
        return await awith_retries(
            self._io, "build_request", self.aload, lambda loaded: loaded.session.abuild_request(), built_compaction
        )

    async def acompact(self, instructions: str | None = None) -> ContextCompacted:
        """Async :meth:`compact`: store calls and the summarizer are awaited.

        Cancelling the calling task while the summarizer runs writes nothing.
        """
        return await awith_retries(
            self._io, "compact", self.aload, lambda loaded: loaded.session.acompact(instructions), itself
        )


def _serialized(session: ContextSession, operation: str, take: Callable[[], SessionSnapshot]) -> SessionSnapshot:
    """``take()``, checked to serialize; a failure becomes :class:`SnapshotFormatError`."""
    try:
        snapshot = take()
        snapshot.to_json()
    except (ValueError, RecursionError) as exc:  # PydanticSerializationError and UnicodeError are ValueErrors
        message = f"snapshot: {operation} of session {session.session_id!r} failed, it cannot be serialized: {exc}"
        raise SnapshotFormatError(message, field="snapshot") from exc
    return snapshot
