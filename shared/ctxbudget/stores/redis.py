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

import asyncio
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar

from ctxbudget.errors import InvalidPolicyError, UsageError
from ctxbudget.stores._checks import check_session_id
from ctxbudget.stores._stored import CorruptField, holds, show, stored_int, stored_utf8
from ctxbudget.stores.base import ArchiveRecord, BaseSnapshotStore

try:
    import redis
    import redis.asyncio
except ImportError as exc:  # pragma: no cover - exercised by a test that hides the package
    raise ImportError(
        "RedisSnapshotStore needs the redis package; install it from the root of your ctxbudget clone with:\n"
        'pip install -e ".[redis]"\n'
        '(once ctxbudget is published on PyPI: pip install "ctxbudget[redis]")'
    ) from exc

__all__ = ["RedisSnapshotStore"]

# A stored version or counter that is not digits is returned as {-1, raw} instead of being compared or bumped.
_SAVE = """
local raw = redis.call('HGET', KEYS[1], 'version')
if raw and not string.match(raw, '^%d+$') then return {-1, raw} end
local current = tonumber(raw or '0')
if current ~= tonumber(ARGV[1]) then return {0, current} end
redis.call('HSET', KEYS[1], 'version', current + 1, 'data', ARGV[2])
return {1, current + 1}
"""

_DELETE = """
local raw = redis.call('HGET', KEYS[1], 'version')
if raw and not string.match(raw, '^%d+$') then return {-1, raw} end
local current = tonumber(raw or '0')
if current ~= tonumber(ARGV[1]) then return {0, current} end
redis.call('DEL', unpack(KEYS))
return {1, 0}
"""

_APPEND = """
local raw = redis.call('GET', KEYS[1])
if raw and not string.match(raw, '^%d+$') then return {-1, raw} end
local last = redis.call('INCRBY', KEYS[1], #ARGV)
local first = last - #ARGV + 1
for i = 1, #ARGV do
  local seq = first + i - 1
  redis.call('ZADD', KEYS[2], seq, string.format('%d', seq) .. ':' .. ARGV[i])
end
return {1, first}
"""

# KEYS: arc, arcseq, arcids, archead; ARGV: (handle, "m" .. message id or "-", log_seq, data) quadruples.
_PUT_ARCHIVE = """
local raw = redis.call('GET', KEYS[4])
if raw and not string.match(raw, '^%d+$') then return {-1, raw} end
local head = tonumber(raw or '0')
local seqs = {}
for i = 1, #ARGV, 4 do
  if redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 3]) == 1 then
    head = head + 1
    redis.call('ZADD', KEYS[2], head, ARGV[i])
    if ARGV[i + 1] ~= '-' then
      local id = string.sub(ARGV[i + 1], 2)
      local known = redis.call('HGET', KEYS[3], id)
      if not known or tonumber(known) > tonumber(ARGV[i + 2]) then redis.call('HSET', KEYS[3], id, ARGV[i + 2]) end
    end
    seqs[#seqs + 1] = head
  else
    seqs[#seqs + 1] = 0
  end
end
redis.call('SET', KEYS[4], head)
return {1, head, seqs}
"""

# KEYS: arcseq, arc; ARGV: after, limit. Returns flat (seq, handle, data) triples; data is false when missing.
_READ_ARCHIVE = """
local found = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, ARGV[2])
if #found == 0 then return {} end
local names = {}
for i = 1, #found, 2 do names[#names + 1] = found[i] end
local data = redis.call('HMGET', KEYS[2], unpack(names))
local out = {}
for i = 1, #names do
  out[#out + 1] = found[2 * i]
  out[#out + 1] = names[i]
  out[#out + 1] = data[i]
end
return out
"""

_PAGE = 1_000  # archive entries per read script call (Lua's unpack has a stack limit)
_VERSION = "a version (an integer >= 1)"
_COUNTER = "a sequence number (an integer >= 0)"

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
        self._save_script = self._client.register_script(_SAVE)
        self._delete_script = self._client.register_script(_DELETE)
        self._append_script = self._client.register_script(_APPEND)
        self._put_archive_script = self._client.register_script(_PUT_ARCHIVE)
        self._read_archive_script = self._client.register_script(_READ_ARCHIVE)
        self._async_url = (
            async_url if async_url is not None else (client_or_url if isinstance(client_or_url, str) else None)
        )
        self._aclients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _AsyncClient] = weakref.WeakKeyDictionary()

    def close(self) -> None:
        """Close the client if this store created it from a URL."""
        if self._owns_client:
            self._client.close()

    async def aclose(self) -> None:
        """Close the asyncio client of the running event loop, if one was made."""
        client = self._aclients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.redis.aclose()

    def _aclient(self) -> _AsyncClient | None:
        """The asyncio client (and its scripts) of the running loop; ``None``: use the thread hooks."""
        if self._async_url is None:
            return None
        loop = asyncio.get_running_loop()
        client = self._aclients.get(loop)
        if client is None:
            client = self._aclients[loop] = _AsyncClient(redis.asyncio.Redis.from_url(self._async_url))
        return client

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
        if version is None and data is None:
            return None
        for field, value in (("version", version), ("data", data)):
            if value is None:
                raise CorruptField(f"key {key!r} field {field} is missing (the snapshot hash is incomplete)")
        where = f"key {key!r} field"
        return stored_int(version, f"{where} version", minimum=1, expected=_VERSION), stored_utf8(data, f"{where} data")

    def _save(self, session_id: str, data: str, expected: int) -> tuple[bool, int]:
        key = self._keys(session_id)[0]
        status, version = self._reply(key, lambda: self._save_script(keys=[key], args=[expected, data]))
        return _status(status, version, f"key {key!r} field version", _VERSION)

    def _delete(self, session_id: str, expected: int) -> tuple[bool, int]:
        keys = [*self._keys(session_id), *self._archive_keys(session_id)]
        status, version = self._reply(keys[0], lambda: self._delete_script(keys=keys, args=[expected]))
        return _status(status, version, f"key {keys[0]!r} field version", _VERSION)

    def _append(self, session_id: str, records: list[str]) -> int:
        _, seq_key, log_key = self._keys(session_id)
        status, first = self._reply(seq_key, lambda: self._append_script(keys=[seq_key, log_key], args=records))
        return _status(status, first, f"key {seq_key!r}", _COUNTER)[1]

    def _read_log(self, session_id: str, after: int) -> list[tuple[int, str]]:
        key = self._keys(session_id)[2]
        members = self._reply(key, lambda: self._client.zrangebyscore(key, f"({after}", "+inf"))
        return [_log_entry(member, key) for member in members]

    def _log_head(self, session_id: str) -> int:
        key = self._keys(session_id)[1]
        head = self._reply(key, lambda: self._client.get(key))
        return stored_int(head, f"key {key!r}", minimum=0, expected=_COUNTER) if head is not None else 0

    def _trim_log(self, session_id: str, upto: int) -> int:
        return int(self._client.zremrangebyscore(self._keys(session_id)[2], "-inf", upto))

    def _put_archive(self, session_id: str, records: list[ArchiveRecord]) -> list[int]:
        keys = list(self._archive_keys(session_id))
        args = _archive_args(records)
        reply = self._reply(keys[3], lambda: self._put_archive_script(keys=keys, args=args))
        return _put_reply(reply, keys[3])

    def _get_archive(self, session_id: str, handles: list[str]) -> dict[str, str]:
        key = self._archive_keys(session_id)[0]
        values = self._reply(key, lambda: self._client.hmget(key, handles))
        return _found(handles, values, key)

    def _read_archive(self, session_id: str, after: int, limit: int | None) -> list[tuple[int, str, str]]:
        arc, arcseq = self._archive_keys(session_id)[:2]
        entries: list[tuple[int, str, str]] = []
        while limit is None or len(entries) < limit:
            page = _PAGE if limit is None else min(_PAGE, limit - len(entries))
            start = entries[-1][0] if entries else after
            args = [start, page]
            flat = self._reply(arcseq, lambda: self._read_archive_script(keys=[arcseq, arc], args=args))  # noqa: B023 - called at once
            entries += _archive_entries(flat, arc)
            if len(flat) < 3 * page:
                break
        return entries

    def _archive_head(self, session_id: str) -> int:
        key = self._archive_keys(session_id)[3]
        head = self._reply(key, lambda: self._client.get(key))
        return stored_int(head, f"key {key!r}", minimum=0, expected=_COUNTER) if head is not None else 0

    def _archived_ids(self, session_id: str, message_ids: list[str]) -> dict[str, int]:
        key = self._archive_keys(session_id)[2]
        values = self._reply(key, lambda: self._client.hmget(key, message_ids))
        return _ids(message_ids, values, key)

    # -- native asyncio (redis.asyncio); the thread hooks when no async URL is known ----------------------------------
    async def _aload(self, session_id: str) -> tuple[int, str] | None:
        client = self._aclient()
        if client is None:
            return await super()._aload(session_id)
        key = self._keys(session_id)[0]
        with _decoding(key):
            version, data = await client.redis.hmget(key, ["version", "data"])
        if version is None and data is None:
            return None
        for field, value in (("version", version), ("data", data)):
            if value is None:
                raise CorruptField(f"key {key!r} field {field} is missing (the snapshot hash is incomplete)")
        where = f"key {key!r} field"
        return stored_int(version, f"{where} version", minimum=1, expected=_VERSION), stored_utf8(data, f"{where} data")

    async def _asave(self, session_id: str, data: str, expected: int) -> tuple[bool, int]:
        client = self._aclient()
        if client is None:
            return await super()._asave(session_id, data, expected)
        key = self._keys(session_id)[0]
        with _decoding(key):
            status, version = await client.script(_SAVE)(keys=[key], args=[expected, data])
        return _status(status, version, f"key {key!r} field version", _VERSION)

    async def _aappend(self, session_id: str, records: list[str]) -> int:
        client = self._aclient()
        if client is None:
            return await super()._aappend(session_id, records)
        _, seq_key, log_key = self._keys(session_id)
        with _decoding(seq_key):
            status, first = await client.script(_APPEND)(keys=[seq_key, log_key], args=records)
        return _status(status, first, f"key {seq_key!r}", _COUNTER)[1]

    async def _aread_log(self, session_id: str, after: int) -> list[tuple[int, str]]:
        client = self._aclient()
        if client is None:
            return await super()._aread_log(session_id, after)
        key = self._keys(session_id)[2]
        with _decoding(key):
            members = await client.redis.zrangebyscore(key, f"({after}", "+inf")
        return [_log_entry(member, key) for member in members]

    async def _alog_head(self, session_id: str) -> int:
        client = self._aclient()
        if client is None:
            return await super()._alog_head(session_id)
        key = self._keys(session_id)[1]
        with _decoding(key):
            head = await client.redis.get(key)
        return stored_int(head, f"key {key!r}", minimum=0, expected=_COUNTER) if head is not None else 0

    async def _atrim_log(self, session_id: str, upto: int) -> int:
        client = self._aclient()
        if client is None:
            return await super()._atrim_log(session_id, upto)
        return int(await client.redis.zremrangebyscore(self._keys(session_id)[2], "-inf", upto))

    async def _aput_archive(self, session_id: str, records: list[ArchiveRecord]) -> list[int]:
        client = self._aclient()
        if client is None:
            return await super()._aput_archive(session_id, records)
        keys = list(self._archive_keys(session_id))
        with _decoding(keys[3]):
            reply = await client.script(_PUT_ARCHIVE)(keys=keys, args=_archive_args(records))
        return _put_reply(reply, keys[3])

    async def _aarchived_ids(self, session_id: str, message_ids: list[str]) -> dict[str, int]:
        client = self._aclient()
        if client is None:
            return await super()._aarchived_ids(session_id, message_ids)
        key = self._archive_keys(session_id)[2]
        with _decoding(key):
            values = await client.redis.hmget(key, message_ids)
        return _ids(message_ids, values, key)

    @staticmethod
    def _reply(key: str, call: Callable[[], T]) -> T:
        """Run ``call``; a client that decodes replies fails on non-UTF-8 data, which is corrupt data of ``key``.

        redis-py drops the connection when decoding fails mid-reply, so the next call starts on a clean one.
        """
        with _decoding(key):
            return call()


@contextmanager
def _decoding(key: str) -> Iterator[None]:
    try:
        yield
    except UnicodeDecodeError as exc:
        message = f"key {key!r} holds a reply that is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        raise CorruptField(message) from None


def _status(status: object, value: object, where: str, expected: str) -> tuple[bool, int]:
    """A script's ``{status, value}`` reply: -1 means the stored value was not digits (``value`` is it)."""
    if status == -1:
        raise holds(where, value, expected)
    return bool(status), stored_int(value, where, minimum=0, expected=expected)


class _AsyncClient:
    """One event loop's ``redis.asyncio`` client and its registered scripts."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        self.redis = client
        self._scripts: dict[str, Any] = {}

    def script(self, source: str) -> Any:  # redis.asyncio's AsyncScript is untyped
        if source not in self._scripts:
            self._scripts[source] = self.redis.register_script(source)
        return self._scripts[source]


def _ids(message_ids: list[str], values: Sequence[object], key: str) -> dict[str, int]:
    return {
        message_id: stored_int(value, f"key {key!r} field {message_id!r}", minimum=0, expected=_COUNTER)
        for message_id, value in zip(message_ids, values, strict=True)
        if value is not None
    }


def _archive_args(records: list[ArchiveRecord]) -> list[str]:
    args: list[str] = []
    for record in records:
        flag = "-" if record.message_id is None else "m" + record.message_id
        args += [record.handle, flag, str(record.log_seq), record.data]
    return args


def _put_reply(reply: list[object], key: str) -> list[int]:
    status, head = reply[0], reply[1]
    _status(status, head, f"key {key!r}", _COUNTER)
    seqs = reply[2]
    if not isinstance(seqs, list):
        raise holds(f"key {key!r} script reply", seqs, "a list of sequence numbers")
    return [stored_int(seq, f"key {key!r}", minimum=0, expected=_COUNTER) for seq in seqs]


def _found(handles: list[str], values: Sequence[object], key: str) -> dict[str, str]:
    return {
        handle: stored_utf8(value, f"key {key!r} field {handle!r}")
        for handle, value in zip(handles, values, strict=True)
        if value is not None
    }


def _archive_entries(flat: list[object], key: str) -> list[tuple[int, str, str]]:
    entries: list[tuple[int, str, str]] = []
    for index in range(0, len(flat), 3):
        score, name, data = flat[index : index + 3]
        handle = stored_utf8(name, f"key {key!r} handle")
        if data is None:
            raise CorruptField(f"key {key!r} field {handle!r} is missing (its archive sequence number is stored)")
        seq = stored_int(score, f"key {key!r} score of {handle!r}", minimum=1, expected=_COUNTER)
        entries.append((seq, handle, stored_utf8(data, f"key {key!r} field {handle!r}")))
    return entries


def _log_entry(member: object, key: str) -> tuple[int, str]:
    """Split a log member ``"<seq>:<record>"``; anything else is corrupt data of ``key``."""
    try:
        text = member.decode("utf-8") if isinstance(member, bytes) else str(member)
    except UnicodeDecodeError:
        raise CorruptField(f"key {key!r} member {show(member)} is not valid UTF-8") from None
    seq, separator, record = text.partition(":")
    if not separator or not (seq.isascii() and seq.isdigit()):
        raise CorruptField(f"key {key!r} member {show(member)} has no sequence number")
    return int(seq), record
