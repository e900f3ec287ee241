"""Where serialized sessions live: snapshot stores with optimistic concurrency and an append log.

``SnapshotStore`` is the seam (a Protocol); ``BaseSnapshotStore`` is the template backends fill in. Three ship:
``InMemorySnapshotStore`` (tests, one process), ``SQLiteSnapshotStore`` (one file, many processes) and
``RedisSnapshotStore`` (needs ``pip install "ctxbudget[redis]"``; imported only when first used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxbudget.stores.base import BaseSnapshotStore, SnapshotStore, StoredSnapshot
from ctxbudget.stores.memory import InMemorySnapshotStore
from ctxbudget.stores.sqlite import SQLiteSnapshotStore

if TYPE_CHECKING:
    from ctxbudget.stores.redis import RedisSnapshotStore

__all__ = [
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
