"""A Redis store (redis-py): atomic across every client, via server-side Lua scripts.

Each session owns three keys under the prefix, sharing a hash tag so they live in one cluster slot:
``<prefix>{<session_id>}:snap`` (hash: ``version``, ``data``), ``...:seq`` (the log's counter) and ``...:log``
(a sorted set scored by sequence number, members ``"<seq>:<record>"``). Compare-and-set, delete, and append
each run as one Lua script (``EVALSHA``), so Redis executes them atomically: append bumps the counter with
``INCRBY`` and adds the records with ``ZADD`` in one step, which makes sequence numbers unique and gap-free
for every worker.

The append-only archive takes four more keys, created by the first archived entry: ``...:arc`` (hash: handle ->
entry JSON, written with ``HSETNX``, so an entry is written once and never changed), ``...:arcseq`` (sorted set:
handles scored by archive sequence number, for reads by range), ``...:arcids`` (hash: archived message id -> the
lowest log sequence number it was archived from) and
``...:archead`` (the archive's counter). One Lua script writes all four.

Durability is the server's: Redis acknowledges a write once it is in memory. With ``appendonly yes`` and
``appendfsync always`` an acknowledged write survives a crash of the server or the host; with ``appendfsync
everysec`` (Redis's default when AOF is on) a power loss or kernel crash can lose about the last second of
acknowledged writes (a crash of the redis-server process alone loses nothing, the kernel still holds the data); with
AOF off (RDB snapshots or nothing) a restart loses every write since the last ``SAVE``. See the README's shared
session section.

Isolation: a session id may not contain ``{`` or ``}`` (a :class:`~ctxbudget.errors.UsageError` naming
``session_id``). Then the braces around the id are the key's *last* ``{`` and the ``}`` after it, so a key names
exactly one (prefix, session id) pair, whatever the prefix holds: store ``P`` cannot reach store ``P{tenant}:``'s
``s1`` with the id ``tenant}:{s1``. A prefix may hold braces and is used verbatim; Redis Cluster hashes a key by
its *first* ``{...}``, so a prefix's own hash tag puts all of its sessions in one slot.

Every value read back is checked: a ``version`` or counter that is not a non-negative integer (the scripts check
it too, before they compare or increment), a snapshot hash missing ``version`` or ``data``, text that is not
UTF-8, or a log member without its ``"<seq>:"`` raises :class:`~ctxbudget.errors.SnapshotStoreError` naming the
key, the field and the value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

from ctxbudget.errors import InvalidPolicyError, UsageError
from ctxbudget.stores._checks import check_session_id
from ctxbudget.stores._stored import stored_int
from ctxbudget.stores.base import ArchiveRecord, BaseSnapshotStore

try:
    import redis
except ImportError as exc:  # pragma: no cover - exercised by a test that hides the package
    raise ImportError(
        "RedisSnapshotStore needs the redis package; install it from the root of your ctxbudget clone with:\n"
        'pip install -e ".[redis]"\n'
        '(once ctxbudget is published on PyPI: pip install "ctxbudget[redis]")'
    ) from exc

from ctxbudget.stores._redis_async import AsyncRedisClients

from . import _redis_replies as replies
from . import _redis_scripts as scripts

__all__ = ["RedisSnapshotStore"]

T = TypeVar("T")


class RedisSnapshotStore(BaseSnapshotStore):
    """Snapshots and logs in Redis; any number of processes and hosts may share it.

    Args:
        client_or_url: a ``redis.Redis`` client (left open by :meth:`close`), or a URL such as
            ``"redis://127.0.0.1:6379/0"`` (the store then owns and closes its client).
        prefix: namespaces every key; stores with different prefixes never see each other's sessions (session
            ids may not contain ``{`` or ``}``, which is what guarantees it, see the module docstring).
        async_url: where the async methods (``aload``, ``asave``, ...) connect with ``redis.asyncio``: by default
            ``client_or_url`` when it is a URL. With a client and no ``async_url`` they run the sync client in a
            worker thread instead. One asyncio client is made per event loop that uses the store.
    """

    backend_name: ClassVar[str] = "redis"
    backend_errors: ClassVar[tuple[type[BaseException], ...]] = (redis.RedisError, OSError)

    def __init__(
        self, client_or_url: redis.Redis | str, *, prefix: str = "ctxbudget:", async_url: str | None = None
    ) -> None:
        if not isinstance(prefix, str) or not prefix:
            raise InvalidPolicyError(f"prefix: must be a non-empty str, got {prefix!r}", field="prefix")
        self.prefix = prefix
        self._owns_client = isinstance(client_or_url, str)
        self._client: redis.Redis = (
            redis.Redis.from_url(client_or_url) if isinstance(client_or_url, str) else client_or_url
        )
        self._save_script = self._client.register_script(scripts.SAVE)
        self._delete_script = self._client.register_script(scripts.DELETE)
        self._append_script = self._client.register_script(scripts.APPEND)
        self._put_archive_script = self._client.register_script(scripts.PUT_ARCHIVE)
        self._read_archive_script = self._client.register_script(scripts.READ_ARCHIVE)
        self._aclients = AsyncRedisClients(
            async_url if async_url is not None else (client_or_url if isinstance(client_or_url, str) else None)
        )

    def close(self) -> None:
        """Close the client if this store created it from a URL."""
        if self._owns_client:
            self._client.close()

    async def aclose(self) -> None:
        """Close the asyncio client of the running event loop, if one was made."""
        await self._aclients.aclose()

    def _describe(self) -> str:
        return f"redis prefix {self.prefix!r}"

    def _check_session_id(self, session_id: object) -> None:
        check_session_id(session_id)  # a non-blank str from here on
        if isinstance(session_id, str) and ("{" in session_id or "}" in session_id):
            raise UsageError(
                f"session_id: {session_id!r} may not contain '{{' or '}}' in a Redis store: the id is the keys' "
                "hash tag, and a brace would let it name another prefix's session",
                field="session_id",
            )

    def _keys(self, session_id: str) -> tuple[str, str, str]:
        base = f"{self.prefix}{{{session_id}}}:"
        return base + "snap", base + "seq", base + "log"

    def _archive_keys(self, session_id: str) -> tuple[str, str, str, str]:
        base = f"{self.prefix}{{{session_id}}}:"
        return base + "arc", base + "arcseq", base + "arcids", base + "archead"

    def _load(self, session_id: str) -> tuple[int, str] | None:
        key = self._keys(session_id)[0]
        version, data = self._reply(key, lambda: self._client.hmget(key, ["version", "data"]))
        return replies.snapshot(key, version, data)

    def _save(self, session_id: str, data: str, expected: int) -> tuple[bool, int]:
        key = self._keys(session_id)[0]
        status, version = self._reply(key, lambda: self._save_script(keys=[key], args=[expected, data]))
        return replies.status(status, version, f"key {key!r} field version", replies.VERSION)

    def _delete(self, session_id: str, expected: int) -> tuple[bool, int]:
        keys = [*self._keys(session_id), *self._archive_keys(session_id)]
        status, version = self._reply(keys[0], lambda: self._delete_script(keys=keys, args=[expected]))
        return replies.status(status, version, f"key {keys[0]!r} field version", replies.VERSION)

    def _append(self, session_id: str, records: list[str]) -> int:
        _, seq_key, log_key = self._keys(session_id)
        status, first = self._reply(seq_key, lambda: self._append_script(keys=[seq_key, log_key], args=records))
        return replies.status(status, first, f"key {seq_key!r}", replies.COUNTER)[1]

    def _read_log(self, session_id: str, after: int) -> list[tuple[int, str]]:
        key = self._keys(session_id)[2]
        members = self._reply(key, lambda: self._client.zrangebyscore(key, f"({after}", "+inf"))
        return [replies.log_entry(member, key) for member in members]

    def _log_head(self, session_id: str) -> int:
        key = self._keys(session_id)[1]
        head = self._reply(key, lambda: self._client.get(key))
        return stored_int(head, f"key {key!r}", minimum=0, expected=replies.COUNTER) if head is not None else 0

    def _trim_log(self, session_id: str, upto: int) -> int:
        return int(self._client.zremrangebyscore(self._keys(session_id)[2], "-inf", upto))

    def _put_archive(self, session_id: str, records: list[ArchiveRecord]) -> list[int]:
        keys = list(self._archive_keys(session_id))
        args = replies.archive_args(records)
        reply = self._reply(keys[3], lambda: self._put_archive_script(keys=keys, args=args))
        return replies.put_reply(reply, keys[3])

    def _get_archive(self, session_id: str, handles: list[str]) -> dict[str, str]:
        key = self._archive_keys(session_id)[0]
        values = self._reply(key, lambda: self._client.hmget(key, handles))
        return replies.found(handles, values, key)

    def _read_archive(self, session_id: str, after: int, limit: int | None) -> list[tuple[int, str, str]]:
        arc, arcseq = self._archive_keys(session_id)[:2]
        entries: list[tuple[int, str, str]] = []
        while limit is None or len(entries) < limit:
            page = scripts.PAGE if limit is None else min(scripts.PAGE, limit - len(entries))
            start = entries[-1][0] if entries else after
            args = [start, page]
            flat = self._reply(arcseq, lambda: self._read_archive_script(keys=[arcseq, arc], args=args))  # noqa: B023 - called at once
            entries += replies.archive_entries(flat, arc)
            if len(flat) < 3 * page:
                break
        return entries

    def _archive_head(self, session_id: str) -> int:
        key = self._archive_keys(session_id)[3]
        head = self._reply(key, lambda: self._client.get(key))
        return stored_int(head, f"key {key!r}", minimum=0, expected=replies.COUNTER) if head is not None else 0

    def _archived_ids(self, session_id: str, message_ids: list[str]) -> dict[str, int]:
        key = self._archive_keys(session_id)[2]
        values = self._reply(key, lambda: self._client.hmget(key, message_ids))
        return replies.ids(message_ids, values, key)

    # -- native asyncio (redis.asyncio); the thread hooks when no async URL is known ----------------------------------
    async def _aload(self, session_id: str) -> tuple[int, str] | None:
        client = self._aclients.current()
        if client is None:
            return await super()._aload(session_id)
        return await client.load(self._keys(session_id)[0])

    async def _asave(self, session_id: str, data: str, expected: int) -> tuple[bool, int]:
        client = self._aclients.current()
        if client is None:
            return await super()._asave(session_id, data, expected)
        return await client.save(self._keys(session_id)[0], data, expected)

    async def _aappend(self, session_id: str, records: list[str]) -> int:
        client = self._aclients.current()
        if client is None:
            return await super()._aappend(session_id, records)
        _, seq_key, log_key = self._keys(session_id)
        return await client.append(seq_key, log_key, records)

    async def _aread_log(self, session_id: str, after: int) -> list[tuple[int, str]]:
        client = self._aclients.current()
        if client is None:
            return await super()._aread_log(session_id, after)
        return await client.read_log(self._keys(session_id)[2], after)

    async def _alog_head(self, session_id: str) -> int:
        client = self._aclients.current()
        if client is None:
            return await super()._alog_head(session_id)
        return await client.log_head(self._keys(session_id)[1])

    async def _atrim_log(self, session_id: str, upto: int) -> int:
        client = self._aclients.current()
        if client is None:
            return await super()._atrim_log(session_id, upto)
        return await client.trim_log(self._keys(session_id)[2], upto)

    async def _aput_archive(self, session_id: str, records: list[ArchiveRecord]) -> list[int]:
        client = self._aclients.current()
        if client is None:
            return await super()._aput_archive(session_id, records)
        return await client.put_archive(list(self._archive_keys(session_id)), records)

    async def _aarchived_ids(self, session_id: str, message_ids: list[str]) -> dict[str, int]:
        client = self._aclients.current()
        if client is None:
            return await super()._aarchived_ids(session_id, message_ids)
        return await client.archived_ids(self._archive_keys(session_id)[2], message_ids)

    @staticmethod
    def _reply(key: str, call: Callable[[], T]) -> T:
        """Run ``call``; a client that decodes replies fails on non-UTF-8 data, which is corrupt data of ``key``.

        redis-py drops the connection when decoding fails mid-reply, so the next call starts on a clean one.
        """
        with replies.decoding(key):
            return call()
