"""Snapshot JSON: the schema key is required on every path that reads a snapshot back."""

from __future__ import annotations

import json

import pytest
from ctxbudget.errors import SnapshotFormatError
from ctxbudget.messages.tokens import CharCounter
from ctxbudget.session import ContextSession
from ctxbudget.session.snapshot import SNAPSHOT_SCHEMA, SessionSnapshot
from ctxbudget.shared_session import SharedSession
from ctxbudget.stores import InMemorySnapshotStore


def _snapshot_json(**changes: object) -> dict[str, object]:
    session = ContextSession(max_tokens=10_000, counter=CharCounter(), session_id="s1")
    session.add_user("hello")
    data: dict[str, object] = json.loads(session.snapshot().to_json())
    data.update(changes)
    return data


def test_a_written_snapshot_starts_with_its_schema() -> None:
    text = ContextSession(max_tokens=10_000, counter=CharCounter()).snapshot().to_json()
    assert text.startswith(f'{{"schema":"{SNAPSHOT_SCHEMA}"')


def test_json_without_a_schema_key_is_refused_naming_the_field() -> None:
    data = _snapshot_json()
    del data["schema"]
    with pytest.raises(SnapshotFormatError) as caught:
        SessionSnapshot.from_json(json.dumps(data))
    assert caught.value.field == "schema"
    assert str(caught.value).startswith("snapshot.schema: missing")
    assert SNAPSHOT_SCHEMA in str(caught.value)


def test_a_null_schema_is_refused() -> None:
    with pytest.raises(SnapshotFormatError) as caught:
        SessionSnapshot.from_json(json.dumps(_snapshot_json(schema=None)))
    assert caught.value.field == "schema"


def test_restore_refuses_a_snapshot_without_its_schema() -> None:
    data = _snapshot_json()
    del data["schema"]
    with pytest.raises(SnapshotFormatError, match=r"^snapshot\.schema: missing"):
        ContextSession.restore(json.dumps(data))


def test_a_shared_session_refuses_a_stored_snapshot_without_its_schema() -> None:
    store = InMemorySnapshotStore()
    data = _snapshot_json()
    del data["schema"]
    store.save("s1", json.dumps(data), expected_version=None)
    with pytest.raises(SnapshotFormatError, match=r"^snapshot\.schema: missing"):
        SharedSession(store, "s1", counter=CharCounter()).load()


def test_snapshots_built_in_python_still_default_to_the_current_schema() -> None:
    snapshot = SessionSnapshot.from_json(json.dumps(_snapshot_json()))
    rebuilt = SessionSnapshot(**{k: v for k, v in dict(snapshot).items() if k != "schema_"})
    assert rebuilt.schema_ == SNAPSHOT_SCHEMA
    assert SessionSnapshot.from_json(rebuilt.to_json()) == snapshot
