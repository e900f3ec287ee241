"""SQLite: a write whose COMMIT fails (disk full, I/O error) leaves neither this instance nor the file stuck.

The failure is injected by a connection proxy that fails chosen statements once. Afterwards the same instance
must write again, another instance on the same file must read and write (it would get ``database is locked``
while the first one kept its write lock), and both must load only what was committed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.errors import SnapshotStoreError
from ctxbudget.stores import SQLiteSnapshotStore
from ctxbudget.stores.sqlite import SCHEMA_VERSION

# A short busy timeout: a lock left behind makes the second instance fail fast instead of waiting 30 s.
LOCK_TIMEOUT = 0.2


class _FlakyConnection:
    """Proxies a real connection; each statement in ``fail`` raises once, as an I/O error at that point would."""

    def __init__(self, real: sqlite3.Connection, fail: set[str]) -> None:
        self._real = real
        self.fail = fail
        self.failed: list[str] = []

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql in self.fail:
            self.fail.discard(sql)
            self.failed.append(sql)
            raise sqlite3.OperationalError(f"disk I/O error (injected at {sql})")
        return self._real.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _Injector:
    """Wraps every connection ``store`` opens; :meth:`arm` makes the next matching statements fail once."""

    def __init__(self, store: SQLiteSnapshotStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened: list[_FlakyConnection] = []
        self._pending: set[str] = set()
        real_open = store._open

        def flaky_open() -> sqlite3.Connection:
            connection = _FlakyConnection(real_open(), self._pending)
            self.opened.append(connection)
            return connection  # type: ignore[return-value]

        monkeypatch.setattr(store, "_open", flaky_open)

    def arm(self, *statements: str) -> None:
        self._pending.update(statements)

    @property
    def failed(self) -> list[str]:
        return [sql for connection in self.opened for sql in connection.failed]


def _stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[SQLiteSnapshotStore, _Injector]:
    store = SQLiteSnapshotStore(tmp_path / "sessions.db", timeout=LOCK_TIMEOUT)
    injector = _Injector(store, monkeypatch)
    store.save("s1", '{"v": 1}', expected_version=None)
    store.append("s1", ['"r1"', '"r2"'])
    return store, injector


WRITES: dict[str, Callable[[SQLiteSnapshotStore], object]] = {
    "save": lambda store: store.save("s1", '{"v": "never committed"}', expected_version=1),
    "append": lambda store: store.append("s1", ['"never committed"']),
    "trim_log": lambda store: store.trim_log("s1", upto=2),
    "delete": lambda store: store.delete("s1", expected_version=1),
}


def _assert_only_committed(store: SQLiteSnapshotStore) -> None:
    loaded = store.load("s1")
    assert loaded is not None
    assert (loaded.version, loaded.data) == (1, '{"v": 1}')
    assert store.read_log("s1") == [(1, '"r1"'), (2, '"r2"')]
    assert store.log_head("s1") == 2


@pytest.mark.parametrize("write", list(WRITES), ids=str)
@pytest.mark.parametrize("rollback_fails_too", [False, True], ids=["rollback-ok", "rollback-fails"])
def test_a_failed_commit_leaves_both_instances_working_on_committed_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: str, rollback_fails_too: bool
) -> None:
    store, injector = _stores(tmp_path, monkeypatch)
    injector.arm("COMMIT", *(["ROLLBACK"] if rollback_fails_too else []))

    with pytest.raises(SnapshotStoreError, match=r"disk I/O error \(injected at COMMIT\)"):
        WRITES[write](store)

    assert injector.failed[0] == "COMMIT", "the fault hit the commit"
    other = SQLiteSnapshotStore(tmp_path / "sessions.db", timeout=LOCK_TIMEOUT)  # a fresh process, in effect
    try:
        # Nothing of the failed write is visible, to this instance or to another one.
        _assert_only_committed(store)
        _assert_only_committed(other)
        # Both can write again: the first no longer sits inside BEGIN IMMEDIATE holding the write lock.
        assert store.save("s1", '{"v": 2}', expected_version=1) == 2
        assert other.append("s1", ['"r3"']) == [3]
        assert store.append("s1", ['"r4"']) == [4]
        assert other.save("s1", '{"v": 3}', expected_version=2) == 3
        for handle in (store, other):
            loaded = handle.load("s1")
            assert loaded is not None
            assert (loaded.version, loaded.data) == (3, '{"v": 3}')
            assert [seq for seq, _ in handle.read_log("s1")] == [1, 2, 3, 4]
    finally:
        other.close()
        store.close()


def test_the_connection_is_replaced_after_a_failed_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, injector = _stores(tmp_path, monkeypatch)
    injector.arm("COMMIT")

    with pytest.raises(SnapshotStoreError):
        store.append("s1", ['"lost"'])

    assert len(injector.opened) == 1
    assert store.append("s1", ['"kept"']) == [3]
    assert len(injector.opened) == 2, "the failed connection was dropped and a new one opened"
    assert not injector.opened[1].in_transaction
    store.close()


def test_opening_an_existing_file_never_needs_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SQLiteSnapshotStore(path) as setup:
        setup.save("s1", '{"v": 1}', expected_version=None)
        setup.append("s1", ['"r1"'])
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process holds the write lock, mid-transaction
    writer.execute("UPDATE ctxbudget_snapshots SET data = '\"uncommitted\"'")
    try:
        reader = SQLiteSnapshotStore(path, timeout=0.0)  # any need for the write lock fails at once
        loaded = reader.load("s1")
        assert loaded is not None
        assert loaded.data == '{"v": 1}'
        assert reader.read_log("s1") == [(1, '"r1"')]
        assert reader.log_head("s1") == 1
        with pytest.raises(SnapshotStoreError, match="locked"):
            reader.append("s1", ['"r2"'])  # writes still wait for (here: fail on) the lock, as they must
        reader.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_fresh_file_gets_its_schema_once(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    first = SQLiteSnapshotStore(path)
    second = SQLiteSnapshotStore(path)
    assert first.log_head("s1") == second.log_head("s1") == 0
    first.close()
    second.close()

    with sqlite3.connect(path) as raw:
        versions = raw.execute("SELECT version FROM ctxbudget_schema").fetchall()
    assert versions == [(SCHEMA_VERSION,)]
