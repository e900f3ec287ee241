"""The public surface of ctxbudget.stores, pinned."""

from __future__ import annotations

import ctxbudget.stores
import pytest
from ctxbudget.stores import InMemorySnapshotStore, SnapshotStore, SQLiteSnapshotStore, StoredSnapshot
from pydantic import ValidationError


def test_the_public_names_are_pinned() -> None:
    assert sorted(ctxbudget.stores.__all__) == [
        "ArchiveRecord",
        "BaseSnapshotStore",
        "InMemorySnapshotStore",
        "RedisSnapshotStore",
        "SQLiteSnapshotStore",
        "SnapshotStore",
        "StoredSnapshot",
    ]


def test_every_store_satisfies_the_protocol(store: SnapshotStore) -> None:
    assert isinstance(store, SnapshotStore)
    assert isinstance(InMemorySnapshotStore(), SnapshotStore)
    assert isinstance(SQLiteSnapshotStore(), SnapshotStore)


def test_the_redis_store_is_imported_lazily_by_name() -> None:
    pytest.importorskip("redis")
    from ctxbudget.stores.redis import RedisSnapshotStore

    assert ctxbudget.stores.RedisSnapshotStore is RedisSnapshotStore
    with pytest.raises(AttributeError, match="NoSuchStore"):
        _ = ctxbudget.stores.NoSuchStore


def test_a_stored_snapshot_is_frozen_and_validated() -> None:
    snapshot = StoredSnapshot(session_id="s1", version=1, data="{}")

    with pytest.raises(ValidationError):
        snapshot.version = 2  # type: ignore[misc]
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        StoredSnapshot(session_id="s1", version=0, data="{}")
    with pytest.raises(ValidationError, match="at least 1 character"):
        StoredSnapshot(session_id="", version=1, data="{}")
