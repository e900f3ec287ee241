"""The async half of a shared session's store I/O, for the ``a``-methods of ``SharedSession``.

Store calls are awaited: a store's own async twin when it has one (``aload``, ``aappend``, ...: ``redis.asyncio``
for :class:`~ctxbudget.stores.redis.RedisSnapshotStore`, a worker thread for SQLite and the in-memory store), else
the sync method in a worker thread. Restoring and replaying a loaded session is CPU only and bounded by the window
(:meth:`~ctxbudget.shared_session._store_io.SessionStoreIO.build`, shared with the sync path); an async compaction
awaits its summarizer. Reading an archived original that is not cached yet is a sync store call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from ..errors import SnapshotConflictError, SnapshotStoreError
from ..messages.message import Message
from ..session.events import ContextCompacted
from ..stores.base import SnapshotStore
from ._log import decoded
from ._models import LoadedSession
from ._reuse import archive_handles
from ._state import Fetched, StoreBackedSession, archive_records, snapshot_json, stale, unknown_ids
from ._store_io import SessionStoreIO

__all__ = ["afetch", "aload", "arefuse_reused", "asave", "astore", "awith_retries"]

_T = TypeVar("_T")


async def astore(store: SnapshotStore, name: str, *args: Any, **kwargs: Any) -> Any:
    """Await the store's async twin of ``name`` (``aload`` ...), or run ``name`` in a worker thread."""
    twin = getattr(store, f"a{name}", None)
    if twin is not None:
        return await twin(*args, **kwargs)
    return await asyncio.to_thread(getattr(store, name), *args, **kwargs)


async def afetch(io: SessionStoreIO) -> Fetched | None:
    """Async :meth:`~ctxbudget.shared_session._store_io.SessionStoreIO.fetch`."""
    store, session_id = io.handle.store, io.handle.session_id
    snapshot, version = io.parse(await astore(store, "load", session_id))
    head = await astore(store, "log_head", session_id)
    records = await astore(store, "read_log", session_id, after=snapshot.log_seq)
    if stale(snapshot, records, head):
        return None
    items = decoded(records)
    unknown = unknown_ids(snapshot, items)
    archived = await astore(store, "archived_ids", session_id, unknown) if unknown else {}
    return Fetched(version, snapshot, items, archived)


async def arefuse_reused(io: SessionStoreIO, messages: tuple[Message, ...]) -> None:
    """Async :meth:`~ctxbudget.shared_session._store_io.SessionStoreIO.refuse_reused`."""
    store, session_id = io.handle.store, io.handle.session_id
    log_seq, in_store, held = io.held(await astore(store, "load", session_id))
    io.log_ids.absorb(log_seq, await astore(store, "read_log", session_id, after=io.log_ids.after(log_seq)))
    ids = [message.id for message in messages]
    archived = await astore(store, "archived_ids", session_id, ids) if in_store else {}
    found = await astore(store, "get_archive", session_id, archive_handles(archived)) if archived else {}
    io.refuse(messages, held, found)


async def aload(io: SessionStoreIO) -> LoadedSession:
    """A consistent view (snapshot plus log), retried while records it needs are trimmed under it."""
    for _ in range(io.handle.max_attempts):
        fetched = await afetch(io)
        if fetched is not None:
            return io.build(fetched)
        io.handle.stats.bump("stale_reloads")
    stored = await astore(io.handle.store, "load", io.handle.session_id)
    raise io.kept_moving(stored.version if stored is not None else 0)


async def asave(io: SessionStoreIO, loaded: LoadedSession) -> int:
    """Async :meth:`~ctxbudget.shared_session._store_io.SessionStoreIO.save`."""
    store, session_id, stats = io.handle.store, io.handle.session_id, io.handle.stats
    session = cast(StoreBackedSession, loaded.session)
    records = archive_records(session)
    seqs = await astore(store, "put_archive", session_id, records) if records else []
    data = snapshot_json(session, max(seqs, default=session.origin.archive_head))
    version: int = await astore(store, "save", session_id, data, expected_version=loaded.version)
    stats.bump("compactions_saved")
    if loaded.log_seq > 0:
        try:
            await astore(store, "trim_log", session_id, upto=loaded.log_seq)
        except SnapshotStoreError:
            stats.bump("trim_failures")
    return version


async def awith_retries(
    io: SessionStoreIO,
    operation: str,
    load: Callable[[], Awaitable[LoadedSession]],
    run: Callable[[LoadedSession], Awaitable[_T]],
    compaction_of: Callable[[_T], ContextCompacted | None],
) -> _T:
    """Async :meth:`~ctxbudget.shared_session._store_io.SessionStoreIO.with_retries`."""
    for attempt in range(1, io.handle.max_attempts + 1):
        loaded = await load()
        result = await run(loaded)
        if compaction_of(result) is None:
            return result
        try:
            await asave(io, loaded)
        except SnapshotConflictError as exc:
            io.note_conflict(exc, attempt, operation)
            continue
        return result
    raise AssertionError("unreachable: note_conflict raises on the last attempt")  # pragma: no cover
