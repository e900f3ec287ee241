"""Backends for the reliability suite: in-memory, SQLite (a temp file) and Redis (``CTXBUDGET_REDIS_URL``)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ctxbudget.stores import InMemorySnapshotStore, SnapshotStore, SQLiteSnapshotStore

REDIS_URL_ENV = "CTXBUDGET_REDIS_URL"
REDIS_SKIP = (
    f"{REDIS_URL_ENV} is not set: run `bash .ci/redis.sh start` and "
    f"`export {REDIS_URL_ENV}=redis://127.0.0.1:6390/0` (.ci/run does both)"
)

StoreFactory = Callable[[], SnapshotStore]


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A key prefix unique to this test (skips without Redis); its keys are deleted afterwards."""
    url = os.environ.get(REDIS_URL_ENV)
    if not url:
        pytest.skip(REDIS_SKIP)
    import redis

    prefix = f"ctxbudget-reliability:{uuid.uuid4().hex}:"
    yield prefix
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


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
        url = os.environ[REDIS_URL_ENV]

        def make() -> SnapshotStore:
            return RedisSnapshotStore(url, prefix=prefix)

    def factory() -> SnapshotStore:
        handle = make()
        opened.append(handle)
        return handle

    yield factory
    for handle in opened:
        handle.close()  # type: ignore[attr-defined]
