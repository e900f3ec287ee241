"""One shared session's reads and writes against its store: fetch, build, save, and the retries around a save.

A :class:`SessionStoreIO` belongs to one :class:`~ctxbudget.shared_session.session.SharedSession` handle and reads
the handle's public configuration (:class:`SharedHandle`) on every call, so a changed ``summarizer`` or
``max_attempts`` applies to the next operation. A load is split in two: :meth:`SessionStoreIO.fetch` reads the
store (the I/O half, with an async twin in :mod:`ctxbudget.shared_session._async`), :meth:`SessionStoreIO.build`
restores and replays on the CPU. Every save writes the archive entries first, then the snapshot with compare-and-set,
then trims the absorbed log.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol, TypeVar, cast

from ..compaction.summarize import AsyncSummarizer, Summarizer
from ..errors import InvalidMessageError, SnapshotConflictError, SnapshotIntegrityError, SnapshotStoreError, UsageError
from ..messages.message import Message
from ..messages.registry import ModelRegistry
from ..messages.tokens import TokenCounter
from ..session.events import ContextCompacted
from ..session.snapshot import SessionSnapshot
from ..stores.base import SnapshotStore, StoredSnapshot
from ._archive import ArchiveCache, decode_entry
from ._log import decoded
from ._models import LoadedSession, SharedSessionStats
from ._reuse import LogIds, archive_handles, digest_of, held_digests, refuse_reused
from ._state import Fetched, StoreBackedSession, archive_records, restore_from_store, snapshot_json, stale, unknown_ids

__all__ = ["SessionStoreIO", "SharedHandle"]

_T = TypeVar("_T")
_WARNED_LIMIT = 1024
"""How many invalid record seqs one handle remembers having warned about (then it forgets and warns again)."""

logger = logging.getLogger("ctxbudget.shared_session.session")


class SharedHandle(Protocol):
    """The configuration of a shared-session handle that its store I/O reads (SharedSession's public attributes)."""

    store: SnapshotStore
    session_id: str
    counter: TokenCounter | None
    summarizer: Summarizer | AsyncSummarizer | None
    registry: ModelRegistry
    max_attempts: int
    stats: SharedSessionStats


class SessionStoreIO:
    """Loads and saves for one handle: what its store holds in, a :class:`LoadedSession` out, and back.

    Args:
        handle: the handle whose store, id, restore options, attempts and stats are used.
    """

    def __init__(self, handle: SharedHandle) -> None:
        self.handle = handle
        self.cache = ArchiveCache(handle.store, handle.session_id)
        self.log_ids = LogIds()
        self._held_at: tuple[int, int, bool, dict[str, str]] | None = None  # version, log_seq, in store, digests
        self._warned: set[int] = set()
        self._warned_lock = threading.Lock()

    # -- loading -----------------------------------------------------------------------------------------------------
    def fetch(self) -> Fetched | None:
        """Read the snapshot and the log after it; ``None`` when a newer snapshot trimmed records it needs."""
        store, session_id = self.handle.store, self.handle.session_id
        snapshot, version = self.parse(store.load(session_id))
        head = store.log_head(session_id)
        records = store.read_log(session_id, after=snapshot.log_seq)
        if stale(snapshot, records, head):
            return None
        items = decoded(records)
        unknown = unknown_ids(snapshot, items)
        archived = store.archived_ids(session_id, unknown) if unknown else {}
        return Fetched(version, snapshot, items, archived)

    def parse(self, stored: StoredSnapshot | None) -> tuple[SessionSnapshot, int]:
        """The snapshot model and version of what the store returned.

        Raises:
            UsageError: the store has no snapshot for this session.
            SnapshotIntegrityError: the snapshot does not match its digest, or it names another session (the store
                and version named).
        """
        if stored is None:
            raise UsageError(
                f"session_id: {self.handle.session_id!r} has no snapshot in the store; create it with "
                "SharedSession.create",
                field="session_id",
            )
        try:
            snapshot = SessionSnapshot.from_json(stored.data)
        except SnapshotIntegrityError as exc:
            where = f"{exc.where} (version {stored.version} in {describe(self.handle.store)})"
            raise SnapshotIntegrityError(
                str(exc).replace(exc.where, where, 1), where=where, expected=exc.expected, actual=exc.actual
            ) from None
        if snapshot.session_id != self.handle.session_id:
            where = f"snapshot stored for session {self.handle.session_id!r} (version {stored.version} in "
            where += f"{describe(self.handle.store)})"
            raise SnapshotIntegrityError(
                f"{where}: it is the snapshot of session {snapshot.session_id!r}, filed under another session's "
                "key (a misplaced copy or restore); refusing to load it as this session",
                where=where,
                expected=self.handle.session_id,
                actual=snapshot.session_id,
            )
        return snapshot, stored.version

    def build(self, fetched: Fetched) -> LoadedSession:
        """Restore the snapshot and replay the log on top (CPU only: no store call)."""
        handle, snapshot = self.handle, fetched.snapshot
        sources: dict[str, int] = {}
        session = restore_from_store(
            snapshot,
            self.cache,
            sources,
            counter=handle.counter,
            summarizer=handle.summarizer,
            registry=handle.registry,
        )
        held = set(snapshot.order)
        replayed = skipped = invalid = 0
        for seq, item in fetched.decoded:
            if isinstance(item, str):
                invalid += 1
                self.report_invalid(seq, item)
                continue
            if item.id in held or fetched.archived.get(item.id, seq) <= snapshot.log_seq:
                skipped += 1  # live, or archived from a record the snapshot absorbed
                continue
            try:
                session.add(item)
            except (InvalidMessageError, UsageError) as exc:
                invalid += 1
                self.report_invalid(seq, f"log[{seq}].message: {exc}")
                continue
            held.add(item.id)
            sources[item.id] = seq
            replayed += 1
        handle.stats.bump("duplicates_skipped", skipped)
        if invalid:
            handle.stats.bump("skipped_records", invalid)
        session.log_seq = fetched.decoded[-1][0] if fetched.decoded else snapshot.log_seq
        handle.stats.bump("loads")
        return LoadedSession(session, fetched.version, session.log_seq, replayed, skipped, invalid)

    def report_invalid(self, seq: int, problem: str) -> None:
        """Warn once per handle about a log record that cannot be replayed (it is skipped on every load)."""
        with self._warned_lock:
            if seq in self._warned:
                return
            if len(self._warned) >= _WARNED_LIMIT:
                self._warned.clear()
            self._warned.add(seq)
        logger.warning(
            "shared session %r: skipped log record %d, which cannot be replayed (%s); the other records are "
            "replayed, and the next compaction trims it",
            self.handle.session_id,
            seq,
            problem,
        )

    def kept_moving(self, version: int) -> SnapshotConflictError:
        """The error of a load whose log was trimmed under it on every attempt."""
        attempts, session_id = self.handle.max_attempts, self.handle.session_id
        return SnapshotConflictError(
            f"load: session {session_id!r} kept moving: its log was trimmed under this reader on "
            f"{attempts} attempts in a row (max_attempts={attempts})",
            expected_version=version,
            actual_version=version,
        )

    def stored_version(self) -> int:
        """The stored snapshot's version (0: none)."""
        stored = self.handle.store.load(self.handle.session_id)
        return stored.version if stored is not None else 0

    # -- adding ------------------------------------------------------------------------------------------------------
    def refuse_reused(self, messages: tuple[Message, ...]) -> None:
        """Raise :class:`InvalidMessageError` when one of ``messages`` reuses a held id with different content."""
        store, session_id = self.handle.store, self.handle.session_id
        log_seq, in_store, held = self.held(store.load(session_id))
        self.log_ids.absorb(log_seq, store.read_log(session_id, after=self.log_ids.after(log_seq)))
        archived = store.archived_ids(session_id, [message.id for message in messages]) if in_store else {}
        found = store.get_archive(session_id, archive_handles(archived)) if archived else {}
        self.refuse(messages, held, found)

    def held(self, stored: StoredSnapshot | None) -> tuple[int, bool, dict[str, str]]:
        """The snapshot's log seq, whether its archive is in the store, and its messages' digests.

        Parsed and digested once per snapshot version, not once per add.
        """
        version = stored.version if stored is not None else 0
        held_at = self._held_at
        if held_at is None or held_at[0] != version:
            snapshot = self.parse(stored)[0] if stored is not None else None
            in_store = snapshot is not None and snapshot.archive_in_store
            held_at = (version, snapshot.log_seq if snapshot is not None else 0, in_store, held_digests(snapshot))
            self._held_at = held_at
        return held_at[1:]

    def refuse(self, messages: tuple[Message, ...], held: dict[str, str], found: dict[str, str]) -> None:
        """:func:`refuse_reused` against ``held`` and the archive entries ``found`` of the added ids (read first)."""
        session_id = self.handle.session_id
        originals = [decode_entry(key, data, session_id)[0].message for key, data in found.items()]
        held = {**held, **{message.id: digest_of(message) for message in originals if message is not None}}
        refuse_reused(messages, held, self.log_ids)

    # -- saving ------------------------------------------------------------------------------------------------------
    def save(self, loaded: LoadedSession) -> int:
        """Write what ``loaded`` archived, then its snapshot over exactly the version it came from; trim the log."""
        store, session_id, stats = self.handle.store, self.handle.session_id, self.handle.stats
        session = cast(StoreBackedSession, loaded.session)
        records = archive_records(session)
        seqs = store.put_archive(session_id, records) if records else []
        data = snapshot_json(session, max(seqs, default=session.origin.archive_head))
        version = store.save(session_id, data, expected_version=loaded.version)
        stats.bump("compactions_saved")
        if loaded.log_seq > 0:
            try:
                store.trim_log(session_id, upto=loaded.log_seq)
            except SnapshotStoreError:
                # The snapshot is saved; the absorbed records are skipped by every load (they are <= log_seq)
                # and the next successful save trims past them.
                stats.bump("trim_failures")
        return version

    def with_retries(
        self,
        operation: str,
        load: Callable[[], LoadedSession],
        run: Callable[[LoadedSession], _T],
        compaction_of: Callable[[_T], ContextCompacted | None],
    ) -> _T:
        """Run ``run`` on a fresh ``load()``; save a compaction it ran, reloading and rerunning on a conflict."""
        for attempt in range(1, self.handle.max_attempts + 1):
            loaded = load()
            result = run(loaded)
            if compaction_of(result) is None:
                return result
            try:
                self.save(loaded)
            except SnapshotConflictError as exc:
                self.note_conflict(exc, attempt, operation)
                continue
            return result
        raise AssertionError("unreachable: note_conflict raises on the last attempt")  # pragma: no cover

    def note_conflict(self, exc: SnapshotConflictError, attempt: int, operation: str) -> None:
        """Count a lost compare-and-set; on the last attempt raise the conflict, naming the attempts."""
        attempts = self.handle.max_attempts
        if attempt >= attempts:
            raise SnapshotConflictError(
                f"{operation}: session {self.handle.session_id!r} was saved by other writers on each of "
                f"{attempts} attempts (max_attempts={attempts}); last: {exc}",
                expected_version=exc.expected_version,
                actual_version=exc.actual_version,
            ) from exc
        self.handle.stats.bump("conflicts_retried")


def describe(store: object) -> str:
    """Name ``store`` in an error message (its own description when it has one, else its type)."""
    described = getattr(store, "_describe", None)
    return str(described()) if callable(described) else type(store).__name__
