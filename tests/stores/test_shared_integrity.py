"""Integrity: snapshots and archive entries carry a content digest, checked when read; an edit is refused.

Every backend. The error is :class:`SnapshotIntegrityError`, naming what was checked (the session's snapshot with
its version and store, or the archive handle) and both digests.
"""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from ctxbudget.archive import ArchiveEntry
from ctxbudget.archive.entry import content_digest
from ctxbudget.errors import SnapshotIntegrityError
from ctxbudget.messages import Message
from ctxbudget.session import ContextSession
from ctxbudget.session.snapshot import SessionSnapshot
from ctxbudget.shared_session import SharedSession
from ctxbudget.stores import InMemorySnapshotStore, SnapshotStore, SQLiteSnapshotStore

from .test_shared_archive import COUNTER, grow, template

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def overwrite_entry(store: SnapshotStore, session_id: str, handle: str, data: str) -> None:
    """Edit a stored archive entry behind the store's back (entries are written once through its API)."""
    if isinstance(store, InMemorySnapshotStore):
        store._sessions[session_id].archive[handle] = data
    elif isinstance(store, SQLiteSnapshotStore):
        with sqlite3.connect(store.path) as raw:
            raw.execute("UPDATE ctxbudget_archive SET record = ? WHERE handle = ?", (data, handle))
    else:
        store._client.hset(store._archive_keys(session_id)[0], handle, data)  # type: ignore[attr-defined]


def test_an_edited_snapshot_is_refused_naming_the_version_and_both_digests(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    shared.add(Message(role="user", content="deploy to eu-west-1", id="u1"))
    shared.compact()
    found = store.load("s1")
    assert found is not None
    edited = found.data.replace("Shared.", "Edited.")
    store.save("s1", edited, expected_version=found.version)  # a store holds any JSON it is given

    with pytest.raises(SnapshotIntegrityError) as caught:
        shared.load()

    error = caught.value
    assert error.expected == json.loads(edited)["digest"]
    assert error.actual != error.expected
    assert DIGEST.fullmatch(error.actual)
    assert f"version {found.version + 1}" in error.where
    assert "'s1'" in error.where
    assert error.expected in str(error)
    assert error.actual in str(error)


def test_an_edited_archive_entry_is_refused_naming_its_handle_and_both_digests(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    grow(shared, 0, 80)
    _, handle, data = store.read_archive("s1")[0]
    record = json.loads(data)
    record["entry"]["message"]["content"] = "the region is us-east-1"  # the original said otherwise
    overwrite_entry(store, "s1", handle, json.dumps(record))

    with pytest.raises(SnapshotIntegrityError) as caught:
        shared.originals()
    assert handle in caught.value.where
    assert caught.value.expected == record["digest"]
    assert caught.value.actual == content_digest({k: v for k, v in record.items() if k != "digest"})

    fresh = SharedSession(store, "s1", counter=COUNTER)  # nothing cached: read by handle
    with pytest.raises(SnapshotIntegrityError, match=re.escape(handle)):
        fresh.load().session.read_archived(handle)


def test_an_entry_moved_under_another_handle_is_refused(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    grow(shared, 0, 80)
    (_, first, data), (_, second, _) = store.read_archive("s1")[:2]
    overwrite_entry(store, "s1", second, data)

    with pytest.raises(Exception, match=re.escape(first)) as caught:
        SharedSession(store, "s1", counter=COUNTER).load().session.read_archived(second)
    assert caught.value.field == "entry"  # type: ignore[attr-defined]


def test_a_snapshot_digest_ignores_key_order_and_whitespace_but_not_content() -> None:
    session = ContextSession(max_tokens=2_000, counter=COUNTER, session_id="s1")
    session.add_user("hello")
    data = session.snapshot().to_json()
    reordered = json.dumps(dict(reversed(list(json.loads(data).items()))), indent=2)

    assert SessionSnapshot.from_json(reordered).history[0].content == "hello"
    with pytest.raises(SnapshotIntegrityError, match="session 's1'"):
        SessionSnapshot.from_json(data.replace("hello", "hullo"))
    without = json.loads(data)
    without.pop("digest")
    assert SessionSnapshot.from_json(json.dumps(without)).digest is None, "written before digests: read as it is"


def test_an_archive_entry_digest_is_its_canonical_content() -> None:
    entry = ArchiveEntry(handle="ctx://archive/m1.summarized", reason="summarized", message=Message(role="user"))
    again = ArchiveEntry.model_validate_json(entry.model_dump_json(indent=2))

    assert entry.digest == again.digest == content_digest(json.loads(entry.model_dump_json()))
    assert entry.digest != entry.model_copy(update={"reason": "cleared"}).digest
