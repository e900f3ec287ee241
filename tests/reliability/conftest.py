"""Backends for the reliability suite: in-memory, SQLite (a temp file) and Redis (``CTXBUDGET_REDIS_URL``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ctxbudget.stores import InMemorySnapshotStore, SnapshotStore, SQLiteSnapshotStore

StoreFactory = Callable[[], SnapshotStore]


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens handles (own connections) onto one shared storage of the parametrized backend."""
    opened: list[SnapshotStore] = []
    if request.param == "memory":
        shared = InMemorySnapshotStore()

        def make() -> SnapshotStore:
            return shared
    elif request.param == "sqlite":

        def make() -> SnapshotStore:
            return SQLiteSnapshotStore(tmp_path / "sessions.db")
    else:
        from ctxbudget.stores import RedisSnapshotStore

        prefix = request.getfixturevalue("redis_prefix")
        url = request.getfixturevalue("redis_url")

        def make() -> SnapshotStore:
            return RedisSnapshotStore(url, prefix=prefix)

    def factory() -> SnapshotStore:
        handle = make()
        opened.append(handle)
        return handle

    yield factory
    for handle in opened:
        handle.close()  # type: ignore[attr-defined]
