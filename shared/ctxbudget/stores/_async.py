"""The async twins of a store's methods, for use inside asyncio (``await store.aload(...)``).

Each public ``a``-method validates its arguments exactly as its sync twin, raises the same errors, and awaits a
``_a``-hook. The hooks run the sync backend method in a worker thread (``asyncio.to_thread``), which is right for
SQLite and the in-memory store; :class:`~ctxbudget.stores.redis.RedisSnapshotStore` overrides them with
``redis.asyncio`` calls, so a Redis store never blocks the event loop nor takes a thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ctxbudget.stores._backend import StoreBackend
from ctxbudget.stores._checks import (
    check_archive_records,
    check_data,
    check_names,
    check_records,
    check_version,
    check_watermark,
)
from ctxbudget.stores._models import ArchiveRecord, StoredSnapshot, conflict

__all__ = ["AsyncStoreMethods"]


class AsyncStoreMethods(StoreBackend):
    """Async twins of :class:`~ctxbudget.stores.base.BaseSnapshotStore`'s public methods, over the backend's hooks."""

    async def aload(self, session_id: str) -> StoredSnapshot | None:
        """Async :meth:`~ctxbudget.stores.base.BaseSnapshotStore.load`."""
        self._check_session_id(session_id)
        with self._translating("load", session_id):
            found = await self._aload(session_id)
        if found is None:
            return None
        return StoredSnapshot(session_id=session_id, version=found[0], data=found[1])

    async def asave(self, session_id: str, data: str, *, expected_version: int | None) -> int:
        """Async :meth:`~ctxbudget.stores.base.BaseSnapshotStore.save` (compare-and-set)."""
        self._check_session_id(session_id)
        check_data(data)
        if expected_version is not None:
            check_version(expected_version, "expected_version")
        expected = expected_version or 0
        with self._translating("save", session_id):
            saved, version = await self._asave(session_id, data, expected)
        if not saved:
            raise conflict("save", session_id, expected, version)
        return version

    async def aappend(self, session_id: str, records: Sequence[str]) -> list[int]:
        """Async :meth:`~ctxbudget.stores.base.BaseSnapshotStore.append`."""
        self._check_session_id(session_id)
        batch = check_records(records)
        if not batch:
            return []
        with self._translating("append", session_id):
            first = await self._aappend(session_id, batch)
        return list(range(first, first + len(batch)))

    async def aread_log(self, session_id: str, *, after: int = 0) -> list[tuple[int, str]]:
        """Async :meth:`~ctxbudget.stores.base.BaseSnapshotStore.read_log`."""
        self._check_session_id(session_id)
        check_watermark(after, "after")
        with self._translating("read_log", session_id):
            return await self._aread_log(session_id, after)

    async def alog_head(self, session_id: str) -> int:
        """Async :meth:`~ctxbudget.stores.base.BaseSnapshotStore.log_head`."""
        self._check_session_id(session_id)
        with self._translating("log_head", session_id):
            return await self._alog_head(session_id)

    async def atrim_log(self, session_id: str, *, upto: int) -> int:
        """Async :meth:`~ctxbudget.stores.base.BaseSnapshotStore.trim_log`."""
        self._check_session_id(session_id)
        check_watermark(upto, "upto")
        with self._translating("trim_log", session_id):
            check_watermark(upto, "upto", head=await self._alog_head(session_id))
            return await self._atrim_log(session_id, upto)

    async def aput_archive(self, session_id: str, records: Sequence[ArchiveRecord]) -> list[int]:
        """Async :meth:`~ctxbudget.stores.base.BaseSnapshotStore.put_archive`."""
        self._check_session_id(session_id)
        batch = check_archive_records(records)
        if not batch:
            return []
        with self._translating("put_archive", session_id):
            return await self._aput_archive(session_id, batch)

    async def aget_archive(self, session_id: str, handles: Sequence[str]) -> dict[str, str]:
        """Async :meth:`~ctxbudget.stores.base.BaseSnapshotStore.get_archive`."""
        self._check_session_id(session_id)
        wanted = check_names(handles, "handles")
        if not wanted:
            return {}
        with self._translating("get_archive", session_id):
            return await self._aget_archive(session_id, wanted)

    async def aarchived_ids(self, session_id: str, message_ids: Sequence[str]) -> dict[str, int]:
        """Async :meth:`~ctxbudget.stores.base.BaseSnapshotStore.archived_ids`."""
        self._check_session_id(session_id)
        wanted = check_names(message_ids, "message_ids")
        if not wanted:
            return {}
        with self._translating("archived_ids", session_id):
            return await self._aarchived_ids(session_id, wanted)

    async def aclose(self) -> None:
        """Release async resources (a Redis store's asyncio client); the default has none."""

    # -- hooks: the sync backend method in a worker thread, unless a backend has native async -----------------------
    async def _aload(self, session_id: str) -> tuple[int, str] | None:
        return await asyncio.to_thread(self._load, session_id)

    async def _asave(self, session_id: str, data: str, expected: int) -> tuple[bool, int]:
        return await asyncio.to_thread(self._save, session_id, data, expected)

    async def _aappend(self, session_id: str, records: list[str]) -> int:
        return await asyncio.to_thread(self._append, session_id, records)

    async def _aread_log(self, session_id: str, after: int) -> list[tuple[int, str]]:
        return await asyncio.to_thread(self._read_log, session_id, after)

    async def _alog_head(self, session_id: str) -> int:
        return await asyncio.to_thread(self._log_head, session_id)

    async def _atrim_log(self, session_id: str, upto: int) -> int:
        return await asyncio.to_thread(self._trim_log, session_id, upto)

    async def _aput_archive(self, session_id: str, records: list[ArchiveRecord]) -> list[int]:
        return await asyncio.to_thread(self._put_archive, session_id, records)

    async def _aarchived_ids(self, session_id: str, message_ids: list[str]) -> dict[str, int]:
        return await asyncio.to_thread(self._archived_ids, session_id, message_ids)

    async def _aget_archive(self, session_id: str, handles: list[str]) -> dict[str, str]:
        return await asyncio.to_thread(self._get_archive, session_id, handles)
