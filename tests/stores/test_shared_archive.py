"""A shared session's archive lives append-only beside its snapshot: the snapshot stays the size of the live state.

Every backend. Covers: the snapshot holds no archive and only live add positions, so its size is flat as history
grows; originals are whole and in add order; a retried append absorbed earlier is not replayed twice; an entry a
losing compaction wrote hides nothing; after a conflict a handle reads only the archive entries written since; a
store written before the archive moved out (snapshots with the archive inside) is read and migrated on the next save.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import SnapshotConflictError, SnapshotFormatError
from ctxbudget.messages import Message
from ctxbudget.messages.tokens import CharCounter
from ctxbudget.session import ContextSession
from ctxbudget.session.snapshot import SessionSnapshot
from ctxbudget.shared_session import SharedSession
from ctxbudget.stores import SnapshotStore

from .conftest import StoreFactory

COUNTER = CharCounter()
WINDOW = 3_000


def template(session_id: str = "s1") -> ContextSession:
    return ContextSession(
        max_tokens=WINDOW,
        counter=COUNTER,
        system_prompt="Shared.",
        policy=CompactionPolicy(keep_recent_messages=6),
        session_id=session_id,
    )


def note(n: int) -> Message:
    return Message(role="user" if n % 2 == 0 else "assistant", content=f"note {n}: " + "detail " * 12, id=f"n{n}")


def grow(shared: SharedSession, start: int, count: int) -> None:
    for n in range(start, start + count):
        shared.add(note(n))
    shared.compact()


def stored(store: SnapshotStore, session_id: str = "s1") -> SessionSnapshot:
    found = store.load(session_id)
    assert found is not None
    return SessionSnapshot.from_json(found.data)


def test_the_snapshot_holds_the_live_state_only_and_its_size_stays_flat(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    sizes = []
    for round_ in range(12):
        grow(shared, round_ * 100, 100)
        found = store.load("s1")
        assert found is not None
        sizes.append(len(found.data))

    snapshot = stored(store)
    assert snapshot.archive_in_store
    assert snapshot.archive == ()
    assert snapshot.added == 1_200
    live = {m.id for m in snapshot.history} | {m.id for m in snapshot.system_messages}
    assert set(snapshot.order) == live, "only live messages keep their position in the snapshot"
    assert max(sizes[3:]) < 1.5 * min(sizes[3:]), f"snapshot bytes grew with history: {sizes}"
    assert store.archive_head("s1") >= 1_100
    assert [m.id for m in shared.originals()] == [f"n{n}" for n in range(1_200)]


def test_originals_keep_add_order_across_archived_live_and_new_messages(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    grow(shared, 0, 60)
    for n in range(60, 70):
        shared.add(note(n))  # in the log, not yet absorbed

    loaded = shared.load()
    loaded.session.add(note(70))  # local only

    assert [m.id for m in loaded.session.originals()] == [f"n{n}" for n in range(71)]
    assert [m.content for m in shared.originals()] == [note(n).content for n in range(70)]


def test_a_retried_append_absorbed_and_archived_earlier_is_skipped(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    shared.add(note(0))
    grow(shared, 1, 80)  # n0 is archived now
    assert "n0" not in stored(store).order

    shared.add(note(0))  # a retry whose first attempt had landed
    loaded = shared.load()

    assert loaded.skipped == 1
    assert [m.id for m in shared.originals()].count("n0") == 1


def test_entries_of_a_compaction_that_lost_hide_no_message(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    grow(shared, 0, 40)
    winner = shared.load()  # loaded before the new messages
    for n in range(40, 120):
        shared.add(note(n))
    loser = shared.load()  # replays n40..n119
    loser.session.compact()
    winner.session.compact()
    shared._save(winner)

    with pytest.raises(SnapshotConflictError):
        shared._save(loser)  # its archive entries were written, its snapshot was not
    assert store.archived_ids("s1", ["n40"]) != {}

    ids = [m.id for m in shared.originals()]
    assert ids == [f"n{n}" for n in range(120)], "n40..n119 are replayed from the log, once each"


class CountingStore:
    """Counts archive reads of a store."""

    def __init__(self, inner: SnapshotStore) -> None:
        self.inner = inner
        self.ranges: list[tuple[int, int]] = []  # (after, entries returned)
        self.by_handle = 0

    def read_archive(self, session_id: str, *, after: int = 0, limit: int | None = None) -> list[tuple[int, str, str]]:
        entries = self.inner.read_archive(session_id, after=after, limit=limit)
        self.ranges.append((after, len(entries)))
        return entries

    def get_archive(self, session_id: str, handles: Sequence[str]) -> dict[str, str]:
        self.by_handle += 1
        return self.inner.get_archive(session_id, handles)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def test_a_handle_reads_only_the_archive_entries_written_since_it_last_read(store: SnapshotStore) -> None:
    SharedSession.create(store, template(), counter=COUNTER)
    counting = CountingStore(store)
    shared = SharedSession(counting, "s1", counter=COUNTER)  # type: ignore[arg-type]
    grow(shared, 0, 80)
    assert counting.ranges == [], "loads and compactions never read the archive"

    first = len(shared.originals())
    head = store.archive_head("s1")
    grow(shared, 80, 80)
    assert len(shared.originals()) == first + 80

    assert sum(count for _, count in counting.ranges) == store.archive_head("s1"), "each entry is read once"
    assert counting.ranges[0] == (0, head)
    starts = [after for after, count in counting.ranges if count]
    assert starts == [0, head], "the second listing starts where the first ended"


def test_after_a_conflict_the_retry_reads_no_archive(store: SnapshotStore) -> None:
    SharedSession.create(store, template(), counter=COUNTER)
    counting = CountingStore(store)
    shared = SharedSession(counting, "s1", counter=COUNTER)  # type: ignore[arg-type]
    other = SharedSession(store, "s1", counter=COUNTER)
    grow(other, 0, 60)
    stale = shared.load()
    grow(other, 60, 60)
    stale.session.compact()

    with pytest.raises(SnapshotConflictError):
        shared._save(stale)
    shared.compact()  # the retry path: a fresh load, a compaction, a save

    assert counting.ranges == []
    assert counting.by_handle == 0
    assert len(shared.originals()) == 120


# -- migration: a store written before the archive moved out of the snapshot ----------------------------------------
def legacy_snapshot(messages: int) -> tuple[str, ContextSession]:
    """The JSON an older ctxbudget wrote: the whole archive and order inside, no digest."""
    session = template()
    for n in range(messages):
        session.add(note(n))
    session.compact()
    document = json.loads(session.snapshot().to_json())
    for key in ("digest", "archive_in_store", "added", "archive_head"):
        document.pop(key)
    assert document["archive"], "the legacy snapshot carries its archive"
    return json.dumps(document), session


def test_a_store_with_the_archive_inside_its_snapshot_is_read_and_migrated(store_factory: StoreFactory) -> None:
    store = store_factory()
    data, original = legacy_snapshot(90)
    store.save("s1", data, expected_version=None)
    for n in range(90, 100):
        store.append("s1", [json.dumps({"schema": "ctxbudget.log.v1", "message": note(n).model_dump(mode="json")})])
    shared = SharedSession(store_factory(), "s1", counter=COUNTER)

    assert [m.id for m in shared.originals()] == [f"n{n}" for n in range(100)]
    shared.add(note(0))  # a duplicate of a message the legacy archive holds
    shared.compact()  # the migration: the archive goes to the store, the snapshot keeps the live state

    migrated = stored(store)
    assert migrated.archive_in_store
    assert migrated.archive == ()
    assert migrated.added == 100
    assert store.archive_head("s1") >= len(original.archive)
    assert [m.id for m in shared.originals()] == [f"n{n}" for n in range(100)]
    assert [m.content for m in SharedSession(store_factory(), "s1").originals()][:90] == [
        m.content for m in original.originals()
    ]


def test_a_live_only_snapshot_is_not_restored_without_its_archive(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    grow(shared, 0, 60)
    found = store.load("s1")
    assert found is not None

    with pytest.raises(SnapshotFormatError, match="archive_in_store") as caught:
        ContextSession.restore(found.data, counter=COUNTER)
    assert caught.value.field == "archive_in_store"
