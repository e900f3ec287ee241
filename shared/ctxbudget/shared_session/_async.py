"""The async twins of :class:`~ctxbudget.shared_session.session.SharedSession`'s operations, for asyncio agents.

Store calls are awaited: a store's own async twin when it has one (``aload``, ``aappend``, ...: ``redis.asyncio``
for :class:`~ctxbudget.stores.redis.RedisSnapshotStore`, a worker thread for SQLite and the in-memory store), else
the sync method in a worker thread. Restoring and replaying a loaded session is CPU only and bounded by the window;
an async compaction awaits its summarizer. Reading an archived original that is not cached yet is a sync store call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..errors import SnapshotConflictError, SnapshotStoreError
from ..messages.message import Message
from ..session.events import ContextCompacted
from ..session.request import BuiltRequest
from ._log import decoded, records_of
from ._state import (
    Fetched,
    StoreBackedSession,
    archive_records,
    built_compaction,
    itself,
    snapshot_json,
    stale,
    unknown_ids,
)

if TYPE_CHECKING:
    from ..session.snapshot import SessionSnapshot
    from ..stores.base import SnapshotStore, StoredSnapshot
    from .session import LoadedSession, SharedSessionStats

__all__ = ["AsyncSharedMethods"]

_T = TypeVar("_T")


class AsyncSharedMethods:
    """The ``a``-methods of :class:`~ctxbudget.shared_session.session.SharedSession` (a mixin of it)."""

    if TYPE_CHECKING:  # provided by SharedSession
        store: SnapshotStore
        session_id: str
        max_attempts: int
        stats: SharedSessionStats

        def _parse(self, stored: StoredSnapshot | None) -> tuple[SessionSnapshot, int]: ...
        def _build(self, fetched: Fetched) -> LoadedSession: ...
        def _kept_moving(self, version: int) -> SnapshotConflictError: ...
        def _note_conflict(self, exc: SnapshotConflictError, attempt: int, operation: str) -> None: ...

    async def aadd(self, *messages: Message) -> list[int]:
        """Async :meth:`add`."""
        seqs: list[int] = await self._astore("append", self.session_id, records_of(messages))
        self.stats.bump("appended", len(seqs))
        return seqs

    async def aadd_user(self, text: str, **metadata: Any) -> Message:
        """Async :meth:`add_user`."""
        message = Message(role="user", content=text, metadata=metadata)
        await self.aadd(message)
        return message

    async def aload(self) -> LoadedSession:
        """Async :meth:`load`."""
        for _ in range(self.max_attempts):
            fetched = await self._afetch()
            if fetched is not None:
                return self._build(fetched)
            self.stats.bump("stale_reloads")
        stored = await self._astore("load", self.session_id)
        raise self._kept_moving(stored.version if stored is not None else 0)

    async def aoriginals(self) -> list[Message]:
        """Async :meth:`originals` (the archive is read in a worker thread)."""
        loaded = await self.aload()
        return await asyncio.to_thread(loaded.session.originals)

    async def _afetch(self) -> Fetched | None:
        snapshot, version = self._parse(await self._astore("load", self.session_id))
        head = await self._astore("log_head", self.session_id)
        records = await self._astore("read_log", self.session_id, after=snapshot.log_seq)
        if stale(snapshot, records, head):
            return None
        items = decoded(records)
        unknown = unknown_ids(snapshot, items)
        archived = await self._astore("archived_ids", self.session_id, unknown) if unknown else {}
        return Fetched(version, snapshot, items, archived)

    async def abuild_request(self) -> BuiltRequest:
        """Async :meth:`build_request`: store calls and an async summarizer are awaited."""
        return await self._awith_retries(
            "build_request", lambda loaded: loaded.session.abuild_request(), built_compaction
        )

    async def acompact(self, instructions: str | None = None) -> ContextCompacted:
        """Async :meth:`compact`: store calls and the summarizer are awaited.

        Cancelling the calling task while the summarizer runs writes nothing.
        """
        return await self._awith_retries("compact", lambda loaded: loaded.session.acompact(instructions), itself)

    async def _awith_retries(
        self,
        operation: str,
        run: Callable[[LoadedSession], Awaitable[_T]],
        compaction_of: Callable[[_T], ContextCompacted | None],
    ) -> _T:
        for attempt in range(1, self.max_attempts + 1):
            loaded = await self.aload()
            result = await run(loaded)
            if compaction_of(result) is None:
                return result
            try:
                await self._asave(loaded)
            except SnapshotConflictError as exc:
                self._note_conflict(exc, attempt, operation)
                continue
            return result
        raise AssertionError("unreachable: _note_conflict raises on the last attempt")  # pragma: no cover

    async def _asave(self, loaded: LoadedSession) -> int:
        """Async :meth:`_save`."""
        session = cast(StoreBackedSession, loaded.session)
        records = archive_records(session)
        seqs = await self._astore("put_archive", self.session_id, records) if records else []
        data = snapshot_json(session, max(seqs, default=session.origin.archive_head))
        version: int = await self._astore("save", self.session_id, data, expected_version=loaded.version)
        self.stats.bump("compactions_saved")
        if loaded.log_seq > 0:
            try:
                await self._astore("trim_log", self.session_id, upto=loaded.log_seq)
            except SnapshotStoreError:
                self.stats.bump("trim_failures")
        return version

    async def _astore(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Await the store's async twin of ``name`` (``aload`` ...), or run ``name`` in a worker thread."""
        twin = getattr(self.store, f"a{name}", None)
        if twin is not None:
            return await twin(*args, **kwargs)
        return await asyncio.to_thread(getattr(self.store, name), *args, **kwargs)
