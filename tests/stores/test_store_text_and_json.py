"""Every backend accepts and refuses the same text and JSON, with typed errors naming the field.

SQLite and Redis can only store UTF-8, so a lone surrogate (in data, a record or a session id) is refused by all
three stores, before storage is touched, rather than stored by one and raising ``UnicodeEncodeError`` in the
others. JSON nested past Python's recursion limit and the non-JSON constants ``NaN``/``Infinity`` are refused
the same way; valid text outside the BMP (paired surrogates, escaped or not) is stored byte for byte.
"""

from __future__ import annotations

import pytest
from ctxbudget.errors import SnapshotFormatError, UsageError
from ctxbudget.stores import SnapshotStore

DEEP = "[" * 100_000 + "]" * 100_000
LONE_SURROGATES = ["\ud800", "\udc00", "tail \udfff", "\ud83d alone"]


def _every_operation(store: SnapshotStore, session_id: str) -> list[object]:
    return [
        lambda: store.load(session_id),
        lambda: store.save(session_id, "{}", expected_version=None),
        lambda: store.delete(session_id, expected_version=1),
        lambda: store.append(session_id, ["{}"]),
        lambda: store.read_log(session_id),
        lambda: store.log_head(session_id),
        lambda: store.trim_log(session_id, upto=0),
    ]


@pytest.mark.parametrize("text", LONE_SURROGATES)
def test_a_session_id_with_a_lone_surrogate_is_a_usage_error(store: SnapshotStore, text: str) -> None:
    for call in _every_operation(store, f"s{text}"):
        with pytest.raises(UsageError, match="session_id: contains an unpaired surrogate") as caught:
            call()  # type: ignore[operator]
        assert caught.value.field == "session_id"
        assert not isinstance(caught.value, SnapshotFormatError)


@pytest.mark.parametrize("text", LONE_SURROGATES)
def test_data_with_a_lone_surrogate_is_refused_and_nothing_is_stored(store: SnapshotStore, text: str) -> None:
    with pytest.raises(SnapshotFormatError, match="data: contains an unpaired surrogate") as caught:
        store.save("s1", f'{{"text": "{text}"}}', expected_version=None)

    assert caught.value.field == "data"
    assert store.load("s1") is None


def test_a_record_with_a_lone_surrogate_is_refused_and_the_batch_is_not_appended(store: SnapshotStore) -> None:
    with pytest.raises(SnapshotFormatError, match=r"records\[1\]: contains an unpaired surrogate") as caught:
        store.append("s1", ['"fine"', '"bad \ud800"', '"fine too"'])

    assert caught.value.field == "records[1]"
    assert store.log_head("s1") == 0
    assert store.read_log("s1") == []


@pytest.mark.parametrize(
    "data",
    ["NaN", "Infinity", "-Infinity", '{"score": NaN}', "[1, Infinity]", '{"a": {"b": [-Infinity]}}'],
)
def test_nan_and_infinity_are_not_json(store: SnapshotStore, data: str) -> None:
    with pytest.raises(SnapshotFormatError, match=r"not valid JSON.*JSON has no NaN or Infinity") as saved:
        store.save("s1", data, expected_version=None)
    with pytest.raises(SnapshotFormatError, match="JSON has no NaN or Infinity") as appended:
        store.append("s1", ["{}", data])

    assert (saved.value.field, appended.value.field) == ("data", "records[1]")
    assert store.load("s1") is None
    assert store.log_head("s1") == 0


def test_json_nested_too_deeply_to_parse_is_a_format_error(store: SnapshotStore) -> None:
    with pytest.raises(SnapshotFormatError, match="data: JSON nested too deeply") as saved:
        store.save("s1", DEEP, expected_version=None)
    with pytest.raises(SnapshotFormatError, match=r"records\[0\]: JSON nested too deeply") as appended:
        store.append("s1", [DEEP])

    assert (saved.value.field, appended.value.field) == ("data", "records[0]")
    assert store.load("s1") is None
    assert store.log_head("s1") == 0


@pytest.mark.parametrize(
    "data",
    [
        '{"text": "\U0001f600 caf\u00e9 \u4e2d\u6587"}',  # raw non-ASCII, outside the BMP too
        '{"text": "\\ud83d\\ude00"}',  # an escaped, correctly paired surrogate: valid JSON text
        '{"nul": "a\\u0000b", "big": 1e308, "neg": -0.0}',
        "[" * 500 + "]" * 500,  # nested, but well within what every backend parses
    ],
)
def test_valid_text_is_stored_byte_for_byte_on_every_backend(store: SnapshotStore, data: str) -> None:
    session_id = "s\U0001f600\u00e9"
    assert store.save(session_id, data, expected_version=None) == 1
    assert store.append(session_id, [data, data]) == [1, 2]

    loaded = store.load(session_id)
    assert loaded is not None
    assert loaded.data == data
    assert store.read_log(session_id) == [(1, data), (2, data)]
