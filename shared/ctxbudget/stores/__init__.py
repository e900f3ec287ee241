"""Where serialized sessions live: snapshot stores with optimistic concurrency and an append log.

``SnapshotStore`` is the seam (a Protocol); ``BaseSnapshotStore`` is the template backends fill in. Three ship:
``InMemorySnapshotStore`` (tests, one process), ``SQLiteSnapshotStore`` (one file, many processes) and
``RedisSnapshotStore`` (needs the redis extra: ``pip install -e ".[redis]"`` in the clone, ``pip install
"ctxbudget[redis]"`` once published; imported only when first used).

Session ids: every store takes any non-blank UTF-8 string, except that the Redis store refuses ``{`` and ``}``
(it builds key names from the id, and a brace could name another prefix's session). SQLite and the in-memory store
keep the id as a value (a column, a dict key), never inside a name, so no id can reach another session there.

Every store has async twins of its methods (``aload``, ``asave``, ``aappend``, ...): native ``redis.asyncio`` for
Redis, a worker thread for SQLite and the in-memory store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxbudget.stores.base import ArchiveRecord, BaseSnapshotStore, SnapshotStore, StoredSnapshot
from ctxbudget.stores.memory import InMemorySnapshotStore
from ctxbudget.stores.sqlite import SQLiteSnapshotStore

if TYPE_CHECKING:
    from ctxbudget.stores.redis import RedisSnapshotStore

__all__ = [
    "ArchiveRecord",
    "BaseSnapshotStore",
    "InMemorySnapshotStore",
    "RedisSnapshotStore",
    "SQLiteSnapshotStore",
    "SnapshotStore",
    "StoredSnapshot",
]


def __getattr__(name: str) -> object:
    # RedisSnapshotStore is imported lazily: the redis package is an optional extra.
    if name == "RedisSnapshotStore":
        from ctxbudget.stores.redis import RedisSnapshotStore  # noqa: PLC0415 - optional dependency

        return RedisSnapshotStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
