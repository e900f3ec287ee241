"""The append log: atomic batches, gap-free sequence numbers, reads after a watermark, trimming."""

from __future__ import annotations

import json

import pytest
from ctxbudget.errors import UsageError
from ctxbudget.stores import SnapshotStore


def test_append_numbers_records_from_1_and_read_log_returns_them_verbatim_in_order(store: SnapshotStore) -> None:
    records = ['{"role": "user", "text": "a:b"}', '"line\\nbreak"', "[1, 2]", "null"]

    assert store.append("s1", records[:3]) == [1, 2, 3]
    assert store.append("s1", records[3:]) == [4]

    assert store.read_log("s1") == list(zip([1, 2, 3, 4], records, strict=True))
    assert store.log_head("s1") == 4


def test_identical_records_get_distinct_sequence_numbers(store: SnapshotStore) -> None:
    assert store.append("s1", ["{}", "{}"]) == [1, 2]
    assert store.append("s1", ["{}"]) == [3]

    assert store.read_log("s1") == [(1, "{}"), (2, "{}"), (3, "{}")]


def test_read_log_after_returns_only_later_records(store: SnapshotStore) -> None:
    store.append("s1", [json.dumps(i) for i in range(1, 6)])

    assert store.read_log("s1", after=3) == [(4, "4"), (5, "5")]
    assert store.read_log("s1", after=5) == []
    assert store.read_log("s1", after=99) == []


def test_an_empty_batch_appends_nothing(store: SnapshotStore) -> None:
    store.append("s1", ['"x"'])

    assert store.append("s1", []) == []
    assert store.log_head("s1") == 1


def test_an_empty_log_has_head_0(store: SnapshotStore) -> None:
    assert store.log_head("nobody") == 0
    assert store.read_log("nobody") == []


def test_the_log_needs_no_snapshot_and_does_not_touch_it(store: SnapshotStore) -> None:
    store.append("s1", ['"r"'])
    assert store.load("s1") is None

    store.save("s1", '{"log_seq": 0}', expected_version=None)
    store.append("s1", ['"r2"'])
    loaded = store.load("s1")
    assert loaded is not None
    assert (loaded.version, loaded.data) == (1, '{"log_seq": 0}')


def test_trim_log_deletes_records_up_to_the_watermark_and_keeps_the_head(store: SnapshotStore) -> None:
    store.append("s1", [json.dumps(i) for i in range(1, 6)])

    assert store.trim_log("s1", upto=3) == 3

    assert store.read_log("s1") == [(4, "4"), (5, "5")]
    assert store.log_head("s1") == 5
    assert store.trim_log("s1", upto=3) == 0
    assert store.trim_log("s1", upto=0) == 0


def test_sequence_numbers_are_never_reused_after_trimming_everything(store: SnapshotStore) -> None:
    store.append("s1", ['"a"', '"b"'])
    store.trim_log("s1", upto=2)

    assert store.read_log("s1") == []
    assert store.append("s1", ['"c"']) == [3]


def test_trimming_past_the_head_is_a_usage_error_and_trims_nothing(store: SnapshotStore) -> None:
    store.append("s1", ['"a"', '"b"'])

    with pytest.raises(UsageError, match="upto: 3 is past the log head 2") as caught:
        store.trim_log("s1", upto=3)

    assert caught.value.field == "upto"
    assert store.read_log("s1") == [(1, '"a"'), (2, '"b"')]


def test_a_snapshot_absorbs_the_log_then_trims_it(store: SnapshotStore) -> None:
    """The intended protocol: workers append, one compactor folds the log into the snapshot, then trims."""
    store.save("s1", json.dumps({"events": [], "log_seq": 0}), expected_version=None)
    store.append("s1", ['"e1"', '"e2"'])
    store.append("s1", ['"e3"'])

    snapshot = store.load("s1")
    assert snapshot is not None
    state = json.loads(snapshot.data)
    pending = store.read_log("s1", after=state["log_seq"])
    state["events"] += [json.loads(record) for _, record in pending]
    state["log_seq"] = pending[-1][0]
    store.save("s1", json.dumps(state), expected_version=snapshot.version)
    store.trim_log("s1", upto=state["log_seq"])
    store.append("s1", ['"e4"'])  # a worker that kept going meanwhile

    final = store.load("s1")
    assert final is not None
    assert json.loads(final.data) == {"events": ["e1", "e2", "e3"], "log_seq": 3}
    assert store.read_log("s1", after=json.loads(final.data)["log_seq"]) == [(4, '"e4"')]
