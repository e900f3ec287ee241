"""SQLite specifics: processes sharing one file, WAL, the schema version, reopening after fork."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.errors import InvalidPolicyError, SnapshotStoreError
from ctxbudget.stores import SQLiteSnapshotStore
from ctxbudget.stores import sqlite as sqlite_module

PROCESSES = 4
RECORDS_PER_PROCESS = 250


def _append_from_process(path: str, worker: int, start: Any, results: Any) -> None:
    """Runs in a child process: its own store on the shared file, one record per append; reports any failure."""
    try:
        store = SQLiteSnapshotStore(path)
        start.wait(timeout=60)
        placed = [
            (store.append("shared", [json.dumps({"worker": worker, "i": i})])[0], i) for i in range(RECORDS_PER_PROCESS)
        ]
        store.close()
        results.put((worker, placed))
    except BaseException as exc:  # the parent must hear about it rather than wait for a result
        results.put((worker, f"{type(exc).__name__}: {exc}"))
        raise


def test_four_processes_append_to_one_file_without_losing_or_duplicating(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(PROCESSES)
    results = context.Queue()
    processes = [
        context.Process(target=_append_from_process, args=(path, worker, start, results)) for worker in range(PROCESSES)
    ]
    for process in processes:
        process.start()
    placed = dict(results.get(timeout=120) for _ in processes)
    for process in processes:
        process.join(timeout=60)
    failures = {worker: outcome for worker, outcome in placed.items() if isinstance(outcome, str)}
    assert failures == {}
    assert [process.exitcode for process in processes] == [0] * PROCESSES

    total = PROCESSES * RECORDS_PER_PROCESS
    log = SQLiteSnapshotStore(path).read_log("shared")
    assert [seq for seq, _ in log] == list(range(1, total + 1))
    assert sorted(record for _, record in log) == sorted(
        json.dumps({"worker": w, "i": i}) for w in range(PROCESSES) for i in range(RECORDS_PER_PROCESS)
    )
    by_seq = dict(log)
    for worker, pairs in placed.items():
        assert [json.loads(by_seq[seq]) for seq, _ in pairs] == [{"worker": worker, "i": i} for _, i in pairs]
        assert [seq for seq, _ in pairs] == sorted(seq for seq, _ in pairs)


def test_data_survives_closing_and_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SQLiteSnapshotStore(path) as store:
        store.save("s1", '{"kept": true}', expected_version=None)
        store.append("s1", ['"r1"'])

    with SQLiteSnapshotStore(str(path)) as reopened:
        loaded = reopened.load("s1")
        assert loaded is not None
        assert (loaded.version, loaded.data) == (1, '{"kept": true}')
        assert reopened.append("s1", ['"r2"']) == [2]


def test_the_file_is_in_wal_mode_with_a_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    SQLiteSnapshotStore(path).log_head("s1")  # first use creates the schema

    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert raw.execute("SELECT version FROM ctxbudget_schema").fetchall() == [(sqlite_module.SCHEMA_VERSION,)]


def test_a_file_from_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    SQLiteSnapshotStore(path).log_head("s1")
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE ctxbudget_schema SET version = 99")

    with pytest.raises(SnapshotStoreError, match=r"schema version 99, this ctxbudget reads up to 1"):
        SQLiteSnapshotStore(path).load("s1")


def test_memory_databases_are_private_to_their_instance() -> None:
    first, second = SQLiteSnapshotStore(), SQLiteSnapshotStore(":memory:")
    first.save("s1", "{}", expected_version=None)

    assert second.load("s1") is None
    assert first.load("s1") is not None


def test_a_forked_child_reopens_its_own_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SQLiteSnapshotStore(tmp_path / "sessions.db")
    store.append("s1", ['"parent"'])
    parent_connection = store._connection

    monkeypatch.setattr(sqlite_module.os, "getpid", lambda: -1)  # what a forked child would see
    assert store.append("s1", ['"child"']) == [2]

    assert store._connection is not parent_connection
    assert store.read_log("s1") == [(1, '"parent"'), (2, '"child"')]


def test_close_is_safe_to_repeat_and_the_store_reopens_on_next_use(tmp_path: Path) -> None:
    store = SQLiteSnapshotStore(tmp_path / "sessions.db")
    store.append("s1", ['"a"'])
    store.close()
    store.close()

    assert store.log_head("s1") == 1


@pytest.mark.parametrize(
    ("options", "field"), [({"timeout": -1.0}, "timeout"), ({"synchronous": "SOMETIMES"}, "synchronous")]
)
def test_bad_options_are_policy_errors(options: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidPolicyError, match=field) as caught:
        SQLiteSnapshotStore(**options)

    assert caught.value.field == field
