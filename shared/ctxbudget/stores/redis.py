"""A Redis store (redis-py): atomic across every client, via server-side Lua scripts.

Each session owns three keys under the prefix, sharing a hash tag so they live in one cluster slot:
``<prefix>{<session_id>}:snap`` (hash: ``version``, ``data``), ``...:seq`` (the log's counter) and ``...:log``
(a sorted set scored by sequence number, members ``"<seq>:<record>"``). Compare-and-set, delete, and append
each run as one Lua script (``EVALSHA``), so Redis executes them atomically: append bumps the counter with
``INCRBY`` and adds the records with ``ZADD`` in one step, which makes sequence numbers unique and gap-free
for every worker.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ctxbudget.errors import InvalidPolicyError
from ctxbudget.stores.base import BaseSnapshotStore

try:
    import redis
except ImportError as exc:  # pragma: no cover - exercised by a test that hides the package
    raise ImportError(
        'RedisSnapshotStore needs the redis package; install it with:\npip install "ctxbudget[redis]"'
    ) from exc

__all__ = ["RedisSnapshotStore"]

_SAVE = """
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if current ~= tonumber(ARGV[1]) then return {0, current} end
redis.call('HSET', KEYS[1], 'version', current + 1, 'data', ARGV[2])
return {1, current + 1}
"""

_DELETE = """
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if current ~= tonumber(ARGV[1]) then return {0, current} end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return {1, 0}
"""

_APPEND = """
local last = redis.call('INCRBY', KEYS[1], #ARGV)
local first = last - #ARGV + 1
for i = 1, #ARGV do
  local seq = first + i - 1
  redis.call('ZADD', KEYS[2], seq, string.format('%d', seq) .. ':' .. ARGV[i])
end
return first
"""


class RedisSnapshotStore(BaseSnapshotStore):
    """Snapshots and logs in Redis; any number of processes and hosts may share it.

    Args:
        client_or_url: a ``redis.Redis`` client (left open by :meth:`close`), or a URL such as
            ``"redis://127.0.0.1:6379/0"`` (the store then owns and closes its client).
        prefix: namespaces every key; stores with different prefixes never see each other's sessions.
    """

    backend_name: ClassVar[str] = "redis"
    backend_errors: ClassVar[tuple[type[BaseException], ...]] = (redis.RedisError, OSError)

    def __init__(self, client_or_url: redis.Redis | str, *, prefix: str = "ctxbudget:") -> None:
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

    def close(self) -> None:
        """Close the client if this store created it from a URL."""
        if self._owns_client:
            self._client.close()

    def _describe(self) -> str:
        return f"redis prefix {self.prefix!r}"

    def _keys(self, session_id: str) -> tuple[str, str, str]:
        base = f"{self.prefix}{{{session_id}}}:"
        return base + "snap", base + "seq", base + "log"

    def _load(self, session_id: str) -> tuple[int, str] | None:
        version, data = self._client.hmget(self._keys(session_id)[0], ["version", "data"])
        if version is None or data is None:
            return None
        return int(version), _text(data)

    def _save(self, session_id: str, data: str, expected: int) -> tuple[bool, int]:
        saved, version = self._save_script(keys=[self._keys(session_id)[0]], args=[expected, data])
        return bool(saved), int(version)

    def _delete(self, session_id: str, expected: int) -> tuple[bool, int]:
        deleted, version = self._delete_script(keys=list(self._keys(session_id)), args=[expected])
        return bool(deleted), int(version)

    def _append(self, session_id: str, records: list[str]) -> int:
        _, seq_key, log_key = self._keys(session_id)
        return int(self._append_script(keys=[seq_key, log_key], args=records))

    def _read_log(self, session_id: str, after: int) -> list[tuple[int, str]]:
        members = self._client.zrangebyscore(self._keys(session_id)[2], f"({after}", "+inf")
        entries = []
        for member in members:
            seq, _, record = _text(member).partition(":")
            entries.append((int(seq), record))
        return entries

    def _log_head(self, session_id: str) -> int:
        head = self._client.get(self._keys(session_id)[1])
        return int(head) if head is not None else 0

    def _trim_log(self, session_id: str, upto: int) -> int:
        return int(self._client.zremrangebyscore(self._keys(session_id)[2], "-inf", upto))


def _text(value: Any) -> str:
    """Redis replies are bytes unless the client decodes them; either way, return text."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
