"""Bad arguments are caller mistakes: a UsageError subclass naming the field, raised before storage is touched."""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget.errors import SnapshotFormatError, UsageError
from ctxbudget.stores import SnapshotStore

BAD_SESSION_IDS = ["", "   ", None, 42, b"s1"]


@pytest.mark.parametrize("session_id", BAD_SESSION_IDS)
def test_every_operation_rejects_a_bad_session_id(store: SnapshotStore, session_id: Any) -> None:
    calls = [
        lambda: store.load(session_id),
        lambda: store.save(session_id, "{}", expected_version=None),
        lambda: store.delete(session_id, expected_version=1),
        lambda: store.append(session_id, ["{}"]),
        lambda: store.read_log(session_id),
        lambda: store.log_head(session_id),
        lambda: store.trim_log(session_id, upto=0),
    ]
    for call in calls:
        with pytest.raises(UsageError, match="session_id") as caught:
            call()
        assert caught.value.field == "session_id"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{}", "data: must be a JSON str, got bytes"),
        ({"a": 1}, "data: must be a JSON str, got dict"),
        (None, "data: must be a JSON str, got NoneType"),
        ("", r"data: not valid JSON \(Expecting value at line 1, column 1\)"),
        ('{"a": 1', "data: not valid JSON"),
        ("not json", "data: not valid JSON"),
    ],
)
def test_save_rejects_data_that_is_not_a_json_string(store: SnapshotStore, data: Any, message: str) -> None:
    with pytest.raises(SnapshotFormatError, match=message) as caught:
        store.save("s1", data, expected_version=None)

    assert caught.value.field == "data"
    assert store.load("s1") is None


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (0, "versions start at 1, got 0"),
        (-3, "versions start at 1, got -3"),
        (True, "must be an int, got bool"),
        ("1", "must be an int, got str"),
    ],
)
def test_expected_versions_must_be_ints_from_1(store: SnapshotStore, version: Any, message: str) -> None:
    store.save("s1", "{}", expected_version=None)

    for call in (
        lambda: store.save("s1", "{}", expected_version=version),
        lambda: store.delete("s1", expected_version=version),
    ):
        with pytest.raises(UsageError, match=f"expected_version: {message}") as caught:
            call()
        assert caught.value.field == "expected_version"
    loaded = store.load("s1")
    assert loaded is not None
    assert loaded.version == 1


@pytest.mark.parametrize(
    ("records", "field"),
    [
        ('"one string is not a batch"', "records"),
        (42, "records"),
        ([b"{}"], "records[0]"),
        (["{}", "nope"], "records[1]"),
        (["{}", None], "records[1]"),
    ],
)
def test_append_rejects_a_bad_batch_and_appends_none_of_it(store: SnapshotStore, records: Any, field: str) -> None:
    with pytest.raises(SnapshotFormatError, match=field.replace("[", r"\[")) as caught:
        store.append("s1", records)

    assert caught.value.field == field
    assert store.log_head("s1") == 0


def test_append_accepts_any_sequence_of_json_strings(store: SnapshotStore) -> None:
    assert store.append("s1", ("1", "2")) == [1, 2]


@pytest.mark.parametrize(
    ("value", "message"), [(-1, "sequence numbers are >= 0, got -1"), (1.5, "must be an int, got float")]
)
def test_log_watermarks_must_be_ints_from_0(store: SnapshotStore, value: Any, message: str) -> None:
    store.append("s1", ['"a"'])

    with pytest.raises(UsageError, match=f"after: {message}") as caught_after:
        store.read_log("s1", after=value)
    with pytest.raises(UsageError, match=f"upto: {message}") as caught_upto:
        store.trim_log("s1", upto=value)

    assert (caught_after.value.field, caught_upto.value.field) == ("after", "upto")
    assert store.read_log("s1") == [(1, '"a"')]


def test_usage_errors_are_value_errors(store: SnapshotStore) -> None:
    with pytest.raises(ValueError, match="session_id"):
        store.load("")
