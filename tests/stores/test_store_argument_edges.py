"""Store arguments at the edges: every backend answers them alike, with a result or a typed error.

* A watermark or limit past SQLite's largest integer reads nothing (as the in-memory and Redis stores do).
* Data holding a JSON integer of more than 4,300 digits (which no reader here could parse) is a
  :class:`SnapshotFormatError`, like any other data that is not JSON.
* The SQLite store's constructor names a bad ``path`` or ``timeout`` with :class:`InvalidPolicyError` and creates no
  file.
* Redis compare-and-set compares versions exactly, past 2**53 too.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from ctxbudget.errors import InvalidPolicyError, SnapshotConflictError, SnapshotFormatError
from ctxbudget.stores import ArchiveRecord, SnapshotStore, SQLiteSnapshotStore

BIG = 2**63


def test_a_watermark_or_limit_past_any_sequence_number_reads_nothing(store: SnapshotStore) -> None:
    store.append("s", ['{"a": 1}'])
    store.put_archive("s", [ArchiveRecord(handle="ctx://archive/h", data='{"b": 2}')])

    assert store.read_log("s", after=BIG) == []
    assert store.read_log("s", after=10**30) == []
    assert store.read_archive("s", after=BIG) == []
    assert [seq for seq, _, _ in store.read_archive("s", limit=BIG)] == [1]
    assert [seq for seq, _, _ in store.read_archive("s", after=0, limit=10**30)] == [1]


def test_an_integer_no_reader_can_parse_is_a_format_error(store: SnapshotStore) -> None:
    doc = '{"n": ' + "9" * 5_000 + "}"
    with pytest.raises(SnapshotFormatError, match="data: not valid JSON"):
        store.save("s", doc, expected_version=None)
    with pytest.raises(SnapshotFormatError, match=r"records\[0\]: not valid JSON"):
        store.append("s", [doc])
    with pytest.raises(SnapshotFormatError, match=r"records\[0\]\.data: not valid JSON"):
        store.put_archive("s", [ArchiveRecord(handle="ctx://archive/h", data=doc)])
    assert store.load("s") is None
    assert store.log_head("s") == 0
    assert store.archive_head("s") == 0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"path": "a\x00b.db"}, "path"),
        ({"path": None}, "path"),
        ({"path": 5}, "path"),
        ({"path": b"s.db"}, "path"),
        ({"path": "s.db", "timeout": "x"}, "timeout"),
        ({"path": "s.db", "timeout": math.nan}, "timeout"),
        ({"path": "s.db", "timeout": math.inf}, "timeout"),
        ({"path": "s.db", "timeout": True}, "timeout"),
        ({"path": "s.db", "timeout": -1}, "timeout"),
    ],
)
def test_a_bad_sqlite_path_or_timeout_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, object], field: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidPolicyError, match=f"^{field}: ") as caught:
        SQLiteSnapshotStore(**kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert os.listdir(tmp_path) == []


def test_a_path_like_and_an_int_timeout_are_accepted(tmp_path: Path) -> None:
    opened = SQLiteSnapshotStore(tmp_path / "s.db", timeout=5)
    assert opened.path == str(tmp_path / "s.db")
    with opened as store:
        assert store.save("s", "{}", expected_version=None) == 1


@pytest.mark.redis
def test_redis_compare_and_set_is_exact_past_two_to_the_53(redis_url: str, redis_prefix: str) -> None:
    import redis
    from ctxbudget.stores import RedisSnapshotStore

    store = RedisSnapshotStore(redis_url, prefix=redis_prefix)
    key = store._keys("s")[0]
    redis.Redis.from_url(redis_url).hset(key, mapping={"version": str(2**53), "data": "{}"})

    with pytest.raises(SnapshotConflictError):
        store.save("s", '{"w": 1}', expected_version=2**53 + 1)  # a stale or future version never wins
    assert store.save("s", '{"w": 2}', expected_version=2**53) == 2**53 + 1
    assert store.save("s", '{"w": 3}', expected_version=2**53 + 1) == 2**53 + 2
    with pytest.raises(SnapshotConflictError):
        store.delete("s", expected_version=2**53 + 1)
    store.delete("s", expected_version=2**53 + 2)
    assert store.load("s") is None
    store.close()
