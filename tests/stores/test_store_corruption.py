"""Corrupt stored fields surface as SnapshotStoreError naming the store, the key or column, and the value.

A store reads back only what it wrote: an integer version, head or sequence number, UTF-8 text. Anything else
(edited by hand, written by another program, a half-finished migration) is corruption, and every read path
reports it as :class:`~ctxbudget.errors.SnapshotStoreError`, never a raw ``ValueError``, ``UnicodeDecodeError``
or pydantic ``ValidationError``, and never as silently converted data.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ctxbudget.errors import SnapshotStoreError
from ctxbudget.stores import SQLiteSnapshotStore

Operation = Callable[[SQLiteSnapshotStore], object]

LOAD: Operation = lambda store: store.load("s1")  # noqa: E731 - a table of one-line operations
SAVE: Operation = lambda store: store.save("s1", "{}", expected_version=1)  # noqa: E731
DELETE: Operation = lambda store: store.delete("s1", expected_version=1)  # noqa: E731
APPEND: Operation = lambda store: store.append("s1", ["{}"])  # noqa: E731
READ_LOG: Operation = lambda store: store.read_log("s1")  # noqa: E731
LOG_HEAD: Operation = lambda store: store.log_head("s1")  # noqa: E731
TRIM_LOG: Operation = lambda store: store.trim_log("s1", upto=1)  # noqa: E731


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    path = tmp_path / "sessions.db"
    with SQLiteSnapshotStore(path) as store:
        store.save("s1", '{"a": 1}', expected_version=None)
        store.append("s1", ['"r1"', '"r2"'])
    return path


def _corrupt_sqlite(path: Path, statement: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(statement)
    finally:
        conn.close()


_SNAP = "UPDATE ctxbudget_snapshots SET"
_HEAD = "UPDATE ctxbudget_log_heads SET"
_LOG = "UPDATE ctxbudget_log SET"


@pytest.mark.parametrize(
    ("statement", "operations", "expected"),
    [
        (f"{_SNAP} version = 'abc'", [LOAD, SAVE, DELETE], "ctxbudget_snapshots.version holds 'abc'"),
        (f"{_SNAP} version = 0", [LOAD, SAVE, DELETE], "ctxbudget_snapshots.version holds 0"),
        (f"{_SNAP} version = 1.5", [LOAD, SAVE, DELETE], "ctxbudget_snapshots.version holds 1.5"),
        (f"{_SNAP} data = X'ff00'", [LOAD], "ctxbudget_snapshots.data holds b'\\xff\\x00'"),
        (f"{_HEAD} head = 'zz'", [APPEND, LOG_HEAD, TRIM_LOG], "ctxbudget_log_heads.head holds 'zz'"),
        (f"{_HEAD} head = -4", [APPEND, LOG_HEAD, TRIM_LOG], "ctxbudget_log_heads.head holds -4"),
        (f"{_LOG} seq = 'x' WHERE seq = 2", [READ_LOG], "ctxbudget_log.seq holds 'x'"),
        (f"{_LOG} record = X'ff' WHERE seq = 1", [READ_LOG], "ctxbudget_log.record holds b'\\xff'"),
        ("UPDATE ctxbudget_schema SET version = 'abc'", [LOAD, APPEND], "ctxbudget_schema.version holds 'abc'"),
    ],
)
def test_sqlite_corrupt_fields_are_store_errors(
    sqlite_path: Path, statement: str, operations: list[Operation], expected: str
) -> None:
    _corrupt_sqlite(sqlite_path, statement)
    for operation in operations:
        with SQLiteSnapshotStore(sqlite_path) as store, pytest.raises(SnapshotStoreError) as caught:
            operation(store)
        message = str(caught.value)
        assert message.startswith(f"sqlite {sqlite_path}: "), message
        assert "of session 's1' failed: corrupt data: " in message, message
        assert expected in message, message


def test_sqlite_reads_other_sessions_around_a_corrupt_one(sqlite_path: Path) -> None:
    with SQLiteSnapshotStore(sqlite_path) as store:
        store.save("s2", "{}", expected_version=None)
    _corrupt_sqlite(sqlite_path, f"{_SNAP} version = 'abc' WHERE session_id = 's1'")
    with SQLiteSnapshotStore(sqlite_path) as store:
        loaded = store.load("s2")
        assert loaded is not None
        assert loaded.version == 1


# --- Redis -----------------------------------------------------------------------------------------------------


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[object]:
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.mark.redis
@pytest.mark.parametrize(
    ("field", "value", "operations", "expected"),
    [
        ("version", b"abc", [LOAD, SAVE, DELETE], "field version holds b'abc'"),
        ("version", b"0", [LOAD], "field version holds b'0'"),
        ("version", b"1.5", [LOAD, SAVE, DELETE], "field version holds b'1.5'"),
        ("data", b"\xff\xfe{}", [LOAD], "field data holds b'\\xff\\xfe{}'"),
    ],
)
def test_redis_corrupt_snapshot_fields_are_store_errors(
    redis_client: object, redis_prefix: str, *, field: str, value: bytes, operations: list[Operation], expected: str
) -> None:
    from ctxbudget.stores import RedisSnapshotStore

    store = RedisSnapshotStore(redis_client, prefix=redis_prefix)  # type: ignore[arg-type]
    store.save("s1", '{"a": 1}', expected_version=None)
    key = f"{redis_prefix}{{s1}}:snap"
    redis_client.hset(key, field, value)  # type: ignore[attr-defined]
    for operation in operations:
        with pytest.raises(SnapshotStoreError) as caught:
            operation(store)  # type: ignore[arg-type]
        message = str(caught.value)
        assert message.startswith(f"redis prefix {redis_prefix!r}: "), message
        assert f"corrupt data: key {key!r} {expected}" in message, message


@pytest.mark.redis
def test_redis_a_snapshot_hash_missing_a_field_is_a_store_error(redis_client: object, redis_prefix: str) -> None:
    from ctxbudget.stores import RedisSnapshotStore

    store = RedisSnapshotStore(redis_client, prefix=redis_prefix)  # type: ignore[arg-type]
    store.save("s1", "{}", expected_version=None)
    key = f"{redis_prefix}{{s1}}:snap"
    redis_client.hdel(key, "data")  # type: ignore[attr-defined]
    with pytest.raises(SnapshotStoreError, match="field data is missing"):
        store.load("s1")


@pytest.mark.redis
@pytest.mark.parametrize("operation", [APPEND, LOG_HEAD, TRIM_LOG])
def test_redis_a_corrupt_log_counter_is_a_store_error(
    redis_client: object, redis_prefix: str, operation: Operation
) -> None:
    from ctxbudget.stores import RedisSnapshotStore

    store = RedisSnapshotStore(redis_client, prefix=redis_prefix)  # type: ignore[arg-type]
    key = f"{redis_prefix}{{s1}}:seq"
    redis_client.set(key, b"zz")  # type: ignore[attr-defined]
    with pytest.raises(SnapshotStoreError) as caught:
        operation(store)  # type: ignore[arg-type]
    assert f"corrupt data: key {key!r} holds b'zz', expected a sequence number" in str(caught.value)


@pytest.mark.redis
@pytest.mark.parametrize(
    ("member", "expected"),
    [
        (b"garbage", "member b'garbage' has no sequence number"),
        (b"x:1", "member b'x:1' has no sequence number"),
        (b"9:\xff", "member b'9:\\xff' is not valid UTF-8"),
    ],
)
def test_redis_corrupt_log_members_are_store_errors(
    redis_client: object, redis_prefix: str, member: bytes, expected: str
) -> None:
    from ctxbudget.stores import RedisSnapshotStore

    store = RedisSnapshotStore(redis_client, prefix=redis_prefix)  # type: ignore[arg-type]
    store.append("s1", ['"r1"'])
    key = f"{redis_prefix}{{s1}}:log"
    redis_client.zadd(key, {member: 9})  # type: ignore[attr-defined]
    with pytest.raises(SnapshotStoreError) as caught:
        store.read_log("s1")
    assert f"corrupt data: key {key!r} {expected}" in str(caught.value)


@pytest.mark.redis
def test_redis_a_decoding_client_reports_non_utf8_data_and_keeps_working(redis_url: str, redis_prefix: str) -> None:
    redis = pytest.importorskip("redis")
    from ctxbudget.stores import RedisSnapshotStore

    decoding = redis.Redis.from_url(redis_url, decode_responses=True)
    raw = redis.Redis.from_url(redis_url)
    try:
        store = RedisSnapshotStore(decoding, prefix=redis_prefix)
        store.save("s1", "{}", expected_version=None)
        store.save("s2", "{}", expected_version=None)
        key = f"{redis_prefix}{{s1}}:snap"
        raw.hset(key, "data", b"\xff")
        expected = f"corrupt data: key {key!r} holds a reply that is not valid UTF-8"
        with pytest.raises(SnapshotStoreError, match=re.escape(expected)):
            store.load("s1")
        loaded = store.load("s2")
        assert loaded is not None
        assert loaded.data == "{}"
    finally:
        decoding.close()
        raw.close()
