"""The ``redis.asyncio`` side of a :class:`~ctxbudget.stores.redis.RedisSnapshotStore`: one client per event loop.

:class:`AsyncRedisClients` makes a client for each event loop that uses the store (from the store's async URL) and
:class:`AsyncRedisClient` runs the store's operations on it, the same commands and scripts as the sync client, each
reply checked by :mod:`ctxbudget.stores._redis_replies`. Import :mod:`ctxbudget.stores.redis`, which says how to
install the redis package when it is missing, rather than this module.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import redis.asyncio

from ctxbudget.stores._models import ArchiveRecord
from ctxbudget.stores._stored import stored_int

from . import _redis_replies as replies
from . import _redis_scripts as scripts

__all__ = ["AsyncRedisClient", "AsyncRedisClients"]


class AsyncRedisClient:
    """One event loop's ``redis.asyncio`` client, its registered scripts, and the store's operations on it.

    Each operation takes the keys it works on (the store's key layout) and returns what the matching sync backend
    hook of :class:`~ctxbudget.stores.redis.RedisSnapshotStore` returns.
    """

    def __init__(self, client: redis.asyncio.Redis) -> None:
        self.redis = client
        self._scripts: dict[str, Any] = {}

    def script(self, source: str) -> Any:  # redis.asyncio's AsyncScript is untyped
        """The registered script of ``source`` (registered on first use)."""
        if source not in self._scripts:
            self._scripts[source] = self.redis.register_script(source)
        return self._scripts[source]

    async def load(self, key: str) -> tuple[int, str] | None:
        """``(version, data)`` of the snapshot hash ``key``, or ``None``."""
        with replies.decoding(key):
            version, data = await self.redis.hmget(key, ["version", "data"])
        return replies.snapshot(key, version, data)

    async def save(self, key: str, data: str, expected: int) -> tuple[bool, int]:
        """Compare-and-set the snapshot hash ``key``."""
        with replies.decoding(key):
            code, version = await self.script(scripts.SAVE)(keys=[key], args=[expected, data])
        return replies.status(code, version, f"key {key!r} field version", replies.VERSION)

    async def append(self, seq_key: str, log_key: str, records: list[str]) -> int:
        """Append ``records`` to the log; the first one's sequence number."""
        with replies.decoding(seq_key):
            code, first = await self.script(scripts.APPEND)(keys=[seq_key, log_key], args=records)
        return replies.status(code, first, f"key {seq_key!r}", replies.COUNTER)[1]

    async def read_log(self, key: str, after: int) -> list[tuple[int, str]]:
        """The log records after ``after``, in order."""
        with replies.decoding(key):
            members = await self.redis.zrangebyscore(key, f"({after}", "+inf")
        return [replies.log_entry(member, key) for member in members]

    async def log_head(self, key: str) -> int:
        """The log counter ``key`` (0 when unset)."""
        with replies.decoding(key):
            head = await self.redis.get(key)
        return stored_int(head, f"key {key!r}", minimum=0, expected=replies.COUNTER) if head is not None else 0

    async def trim_log(self, key: str, upto: int) -> int:
        """Drop the log records up to ``upto``; how many."""
        return int(await self.redis.zremrangebyscore(key, "-inf", upto))

    async def put_archive(self, keys: list[str], records: list[ArchiveRecord]) -> list[int]:
        """Write archive entries (``keys``: arc, arcseq, arcids, archead); each one's sequence number."""
        with replies.decoding(keys[3]):
            reply = await self.script(scripts.PUT_ARCHIVE)(keys=keys, args=replies.archive_args(records))
        return replies.put_reply(reply, keys[3])

    async def archived_ids(self, key: str, message_ids: list[str]) -> dict[str, int]:
        """``{message_id: log_seq}`` of the ids the archived-ids hash ``key`` holds."""
        with replies.decoding(key):
            values = await self.redis.hmget(key, message_ids)
        return replies.ids(message_ids, values, key)


class AsyncRedisClients:
    """A store's asyncio clients, one per event loop, made on first use from ``url``.

    Args:
        url: where the clients connect; ``None``: no native async (the store runs its sync client in a thread).
    """

    def __init__(self, url: str | None) -> None:
        self.url = url
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncRedisClient] = (
            weakref.WeakKeyDictionary()
        )

    def __contains__(self, loop: object) -> bool:
        """Whether the event loop ``loop`` has a client (made, and not closed yet)."""
        return loop in self._clients

    def current(self) -> AsyncRedisClient | None:
        """The running loop's client (made now if it has none); ``None`` when there is no URL."""
        if self.url is None:
            return None
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = AsyncRedisClient(redis.asyncio.Redis.from_url(self.url))
        return client

    async def aclose(self) -> None:
        """Close the running loop's client, if one was made."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.redis.aclose()
