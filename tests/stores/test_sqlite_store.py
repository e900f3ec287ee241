"""SQLite specifics: processes sharing one file, WAL, the schema version, reopening after fork."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.errors import InvalidPolicyError, SnapshotStoreError
from ctxbudget.stores import SQLiteSnapshotStore
from ctxbudget.stores import sqlite as sqlite_module

PROCESSES = 4
RECORDS_PER_PROCESS = 250

# Each child opens its own store on the shared file, waits for "go" on stdin (so all start together), appends
# one record per call and prints the sequence numbers it was given, as JSON.
_CHILD = """
import json, sys
from ctxbudget.stores import SQLiteSnapshotStore
path, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = SQLiteSnapshotStore(path)
sys.stdin.readline()
seqs = [store.append("shared", [json.dumps({"worker": worker, "i": i})])[0] for i in range(count)]
store.close()
print(json.dumps(seqs))
"""


def test_four_processes_append_to_one_file_without_losing_or_duplicating(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, path, str(worker), str(RECORDS_PER_PROCESS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(PROCESSES)
    ]
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    outputs = [child.communicate(timeout=120) for child in children]
    assert [(child.returncode, err) for child, (_, err) in zip(children, outputs, strict=True)] == [(0, "")] * PROCESSES
    seqs_by_worker = [json.loads(out) for out, _ in outputs]

    total = PROCESSES * RECORDS_PER_PROCESS
    log = SQLiteSnapshotStore(path).read_log("shared")
    assert [seq for seq, _ in log] == list(range(1, total + 1)), "gap-free, unique, in order"
    assert sorted(record for _, record in log) == sorted(
        json.dumps({"worker": w, "i": i}) for w in range(PROCESSES) for i in range(RECORDS_PER_PROCESS)
    ), "every record exactly once"
    by_seq = dict(log)
    for worker, seqs in enumerate(seqs_by_worker):
        assert [json.loads(by_seq[seq]) for seq in seqs] == [{"worker": worker, "i": i} for i in range(len(seqs))]
        assert seqs == sorted(seqs)


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

    with pytest.raises(SnapshotStoreError, match=r"schema version 99, this ctxbudget reads up to 2"):
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


class _LockedThenFree:
    """A connection whose journal-mode change reports ``database is locked`` ``busy`` times, then succeeds."""

    def __init__(self, busy: int, error: str = "database is locked") -> None:
        self.busy = busy
        self.error = error
        self.calls = 0

    def execute(self, statement: str) -> None:
        assert statement == "PRAGMA journal_mode=WAL"
        self.calls += 1
        if self.calls <= self.busy:
            raise sqlite3.OperationalError(self.error)


def test_switching_to_wal_waits_out_processes_opening_the_same_fresh_file() -> None:
    # SQLite reports `database is locked` here without calling the busy handler, so the store retries itself.
    connection = _LockedThenFree(busy=3)

    sqlite_module._enable_wal(connection, timeout=5.0)  # type: ignore[arg-type]

    assert connection.calls == 4


def test_switching_to_wal_gives_up_after_the_timeout_and_never_retries_other_errors() -> None:
    forever_locked = _LockedThenFree(busy=10**9)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        sqlite_module._enable_wal(forever_locked, timeout=0.0)  # type: ignore[arg-type]
    assert forever_locked.calls == 1

    broken = _LockedThenFree(busy=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        sqlite_module._enable_wal(broken, timeout=5.0)  # type: ignore[arg-type]
    assert broken.calls == 1


def test_a_schema_1_file_is_migrated_in_place_and_its_sessions_keep_working(tmp_path: Path) -> None:
    from ctxbudget.session.snapshot import SessionSnapshot
    from ctxbudget.shared_session import SharedSession

    from .test_shared_archive import COUNTER, legacy_snapshot, note

    path = tmp_path / "old.db"
    data, original = legacy_snapshot(90)
    with sqlite3.connect(path) as raw:  # the schema ctxbudget wrote before the archive moved out of the snapshot
        raw.execute("CREATE TABLE ctxbudget_schema (version INTEGER NOT NULL)")
        raw.execute("INSERT INTO ctxbudget_schema (version) VALUES (1)")
        raw.execute(
            "CREATE TABLE ctxbudget_snapshots"
            " (session_id TEXT PRIMARY KEY, version INTEGER NOT NULL, data TEXT NOT NULL)"
        )
        raw.execute("CREATE TABLE ctxbudget_log_heads (session_id TEXT PRIMARY KEY, head INTEGER NOT NULL)")
        raw.execute(
            "CREATE TABLE ctxbudget_log (session_id TEXT NOT NULL, seq INTEGER NOT NULL, record TEXT NOT NULL,"
            " PRIMARY KEY (session_id, seq)) WITHOUT ROWID"
        )
        raw.execute("INSERT INTO ctxbudget_snapshots VALUES ('s1', 3, ?)", (data,))
        record = json.dumps({"schema": "ctxbudget.log.v1", "message": note(90).model_dump(mode="json")})
        raw.execute("INSERT INTO ctxbudget_log VALUES ('s1', 1, ?)", (record,))
        raw.execute("INSERT INTO ctxbudget_log_heads VALUES ('s1', 1)")

    store = SQLiteSnapshotStore(path)
    shared = SharedSession(store, "s1", counter=COUNTER)
    assert [m.id for m in shared.originals()] == [f"n{n}" for n in range(91)]
    shared.compact()
    store.close()

    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT version FROM ctxbudget_schema").fetchall() == [(sqlite_module.SCHEMA_VERSION,)]
        (count,) = raw.execute("SELECT COUNT(*) FROM ctxbudget_archive WHERE session_id = 's1'").fetchone()
    assert count >= len(original.archive)
    reopened = SQLiteSnapshotStore(path)
    loaded = reopened.load("s1")
    assert loaded is not None
    assert loaded.version == 4
    assert SessionSnapshot.from_json(loaded.data).archive == ()
    assert [m.id for m in SharedSession(reopened, "s1").originals()] == [f"n{n}" for n in range(91)]
    reopened.close()
