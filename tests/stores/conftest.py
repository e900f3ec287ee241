"""Fixtures: every store test runs against the in-memory, SQLite and Redis backends.

Redis tests need a redis-server on loopback, named by ``CTXBUDGET_REDIS_URL``; ``.ci/run`` starts one on
127.0.0.1:6390 and sets it. Without the variable they are skipped, saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ctxbudget.stores import InMemorySnapshotStore, SnapshotStore, SQLiteSnapshotStore

StoreFactory = Callable[[], SnapshotStore]
"""Opens another handle (its own connection) onto the same storage as the ``store`` fixture."""


def _memory_factory(_: pytest.FixtureRequest, __: Path) -> StoreFactory:
    shared = InMemorySnapshotStore()
    return lambda: shared


def _sqlite_factory(_: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    path = tmp_path / "sessions.db"
    return lambda: SQLiteSnapshotStore(path)


def _redis_factory(request: pytest.FixtureRequest, _: Path) -> StoreFactory:
    from ctxbudget.stores import RedisSnapshotStore

    url = request.getfixturevalue("redis_url")
    prefix = request.getfixturevalue("redis_prefix")
    return lambda: RedisSnapshotStore(url, prefix=prefix)


_FACTORIES = {"memory": _memory_factory, "sqlite": _sqlite_factory, "redis": _redis_factory}


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    opened: list[SnapshotStore] = []
    make = _FACTORIES[request.param](request, tmp_path)

    def factory() -> SnapshotStore:
        handle = make()
        opened.append(handle)
        return handle

    yield factory
    for handle in opened:
        handle.close()  # type: ignore[attr-defined]


@pytest.fixture
def store(store_factory: StoreFactory) -> SnapshotStore:
    return store_factory()
