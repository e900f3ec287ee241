"""Snapshots: create, load, compare-and-set save, delete; a stale writer always gets a conflict."""

from __future__ import annotations

import json
import threading

import pytest
from ctxbudget.errors import SnapshotConflictError
from ctxbudget.stores import SnapshotStore, StoredSnapshot

from .conftest import StoreFactory


def test_an_unknown_session_loads_as_none(store: SnapshotStore) -> None:
    assert store.load("nobody") is None


def test_create_stores_version_1_and_load_returns_the_json_verbatim(store: SnapshotStore) -> None:
    data = '{ "messages": ["héllo", "\\u2603 ☃"],\n  "log_seq": 0 }'

    assert store.save("s1", data, expected_version=None) == 1

    assert store.load("s1") == StoredSnapshot(session_id="s1", version=1, data=data)


def test_save_with_the_current_version_replaces_the_data_and_bumps_the_version(store: SnapshotStore) -> None:
    store.save("s1", '{"turn": 1}', expected_version=None)

    assert store.save("s1", '{"turn": 2}', expected_version=1) == 2
    assert store.save("s1", '{"turn": 3}', expected_version=2) == 3

    assert store.load("s1") == StoredSnapshot(session_id="s1", version=3, data='{"turn": 3}')


def test_create_fails_when_the_session_exists(store: SnapshotStore) -> None:
    store.save("s1", '{"first": true}', expected_version=None)

    with pytest.raises(SnapshotConflictError, match="exists at version 1") as caught:
        store.save("s1", '{"second": true}', expected_version=None)

    assert (caught.value.expected_version, caught.value.actual_version) == (0, 1)
    assert store.load("s1") == StoredSnapshot(session_id="s1", version=1, data='{"first": true}')


def test_a_stale_writer_gets_a_conflict_with_both_versions_never_an_overwrite(
    store_factory: StoreFactory,
) -> None:
    alice, bob = store_factory(), store_factory()
    alice.save("s1", '{"v": "start"}', expected_version=None)
    read_by_alice = alice.load("s1")
    read_by_bob = bob.load("s1")
    assert read_by_alice is not None
    assert read_by_bob is not None

    alice.save("s1", '{"v": "alice"}', expected_version=read_by_alice.version)
    with pytest.raises(SnapshotConflictError, match=r"at version 2, expected_version is 1") as caught:
        bob.save("s1", '{"v": "bob"}', expected_version=read_by_bob.version)

    assert (caught.value.expected_version, caught.value.actual_version) == (1, 2)
    assert bob.load("s1") == StoredSnapshot(session_id="s1", version=2, data='{"v": "alice"}')


@pytest.mark.parametrize("expected", [1, 5])
def test_saving_a_missing_session_with_a_version_is_a_conflict_at_version_0(
    store: SnapshotStore, expected: int
) -> None:
    with pytest.raises(SnapshotConflictError, match="has no snapshot") as caught:
        store.save("ghost", "{}", expected_version=expected)

    assert (caught.value.expected_version, caught.value.actual_version) == (expected, 0)
    assert store.load("ghost") is None


def test_a_version_from_the_future_is_a_conflict(store: SnapshotStore) -> None:
    store.save("s1", "{}", expected_version=None)

    with pytest.raises(SnapshotConflictError) as caught:
        store.save("s1", "{}", expected_version=7)

    assert (caught.value.expected_version, caught.value.actual_version) == (7, 1)


def test_sessions_are_independent(store: SnapshotStore) -> None:
    store.save("a", '"a1"', expected_version=None)
    store.save("b", '"b1"', expected_version=None)
    store.save("b", '"b2"', expected_version=1)
    store.append("b", ['"log-b"'])

    assert store.load("a") == StoredSnapshot(session_id="a", version=1, data='"a1"')
    assert store.load("b") == StoredSnapshot(session_id="b", version=2, data='"b2"')
    assert store.read_log("a") == []


def test_a_large_snapshot_round_trips(store: SnapshotStore) -> None:
    data = json.dumps({"history": ["x" * 1000 + str(i) for i in range(1000)]})

    store.save("big", data, expected_version=None)

    loaded = store.load("big")
    assert loaded is not None
    assert loaded.data == data


def test_delete_with_the_current_version_removes_snapshot_and_log(store: SnapshotStore) -> None:
    store.save("s1", "{}", expected_version=None)
    store.save("s1", "{}", expected_version=1)
    store.append("s1", ['"r1"', '"r2"'])

    store.delete("s1", expected_version=2)

    assert store.load("s1") is None
    assert store.read_log("s1") == []
    assert store.log_head("s1") == 0
    assert store.save("s1", '"again"', expected_version=None) == 1
    assert store.append("s1", ['"fresh"']) == [1]


def test_a_stale_delete_is_a_conflict_and_deletes_nothing(store: SnapshotStore) -> None:
    store.save("s1", "{}", expected_version=None)
    store.save("s1", '"kept"', expected_version=1)
    store.append("s1", ['"r1"'])

    with pytest.raises(SnapshotConflictError) as caught:
        store.delete("s1", expected_version=1)

    assert (caught.value.expected_version, caught.value.actual_version) == (1, 2)
    assert store.load("s1") == StoredSnapshot(session_id="s1", version=2, data='"kept"')
    assert store.read_log("s1") == [(1, '"r1"')]


def test_deleting_a_missing_session_is_a_conflict_at_version_0(store: SnapshotStore) -> None:
    with pytest.raises(SnapshotConflictError) as caught:
        store.delete("ghost", expected_version=1)

    assert (caught.value.expected_version, caught.value.actual_version) == (1, 0)


def test_concurrent_read_modify_write_with_retry_loses_no_update(store_factory: StoreFactory) -> None:
    workers, increments = 8, 25
    store_factory().save("counter", '{"n": 0}', expected_version=None)
    start = threading.Barrier(workers)

    def worker() -> None:
        handle = store_factory()
        start.wait()
        for _ in range(increments):
            while True:
                current = handle.load("counter")
                assert current is not None
                value = json.loads(current.data)["n"] + 1
                try:
                    handle.save("counter", json.dumps({"n": value}), expected_version=current.version)
                    break
                except SnapshotConflictError:
                    continue

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    final = store_factory().load("counter")
    assert final is not None
    assert json.loads(final.data) == {"n": workers * increments}
    assert final.version == workers * increments + 1
