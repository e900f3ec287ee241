"""A failing backend surfaces as SnapshotStoreError naming the store and operation, with the cause chained."""

from __future__ import annotations

import importlib
import socket
import sqlite3
import sys
from pathlib import Path

import pytest
from ctxbudget.errors import SnapshotError, SnapshotStoreError
from ctxbudget.stores import SQLiteSnapshotStore


def _every_operation(store: object) -> list[tuple[str, object]]:
    return [
        ("load", lambda: store.load("s1")),  # type: ignore[attr-defined]
        ("save", lambda: store.save("s1", "{}", expected_version=None)),  # type: ignore[attr-defined]
        ("delete", lambda: store.delete("s1", expected_version=1)),  # type: ignore[attr-defined]
        ("append", lambda: store.append("s1", ["{}"])),  # type: ignore[attr-defined]
        ("read_log", lambda: store.read_log("s1")),  # type: ignore[attr-defined]
        ("log_head", lambda: store.log_head("s1")),  # type: ignore[attr-defined]
        ("trim_log", lambda: store.trim_log("s1", upto=0)),  # type: ignore[attr-defined]
    ]


def test_sqlite_in_a_missing_directory_fails_every_operation(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "dir" / "sessions.db"
    store = SQLiteSnapshotStore(path)

    for operation, call in _every_operation(store):
        with pytest.raises(SnapshotStoreError, match=f"sqlite {path}: {operation} of session 's1' failed") as caught:
            call()  # type: ignore[operator]
        assert isinstance(caught.value.__cause__, sqlite3.OperationalError)


def test_sqlite_on_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not a sqlite database, just some bytes" * 100)

    with pytest.raises(SnapshotStoreError, match="file is not a database") as caught:
        SQLiteSnapshotStore(path).load("s1")

    assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)


def test_sqlite_path_that_is_a_directory(tmp_path: Path) -> None:
    with pytest.raises(SnapshotStoreError, match="unable to open database file"):
        SQLiteSnapshotStore(tmp_path).load("s1")


def _closed_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens here once the socket is closed


def test_redis_on_a_closed_port_fails_every_operation() -> None:
    pytest.importorskip("redis")
    import redis
    from ctxbudget.stores import RedisSnapshotStore

    store = RedisSnapshotStore(f"redis://127.0.0.1:{_closed_loopback_port()}/0", prefix="closed:")
    try:
        for operation, call in _every_operation(store):
            with pytest.raises(SnapshotStoreError, match=f"redis prefix 'closed:': {operation} of session") as caught:
                call()  # type: ignore[operator]
            assert isinstance(caught.value.__cause__, redis.ConnectionError)
            assert isinstance(caught.value, SnapshotError)
    finally:
        store.close()


def test_without_redis_installed_the_import_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # makes `import redis` raise ImportError
    monkeypatch.delitem(sys.modules, "ctxbudget.stores.redis", raising=False)

    with pytest.raises(ImportError) as caught:
        importlib.import_module("ctxbudget.stores.redis")

    lines = str(caught.value).splitlines()
    assert 'pip install -e ".[redis]"' in lines  # from the clone: ctxbudget is not on PyPI yet
    assert 'pip install "ctxbudget[redis]"' in lines[-1]  # the published form, for later
