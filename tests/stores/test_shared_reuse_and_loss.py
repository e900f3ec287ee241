"""A shared session refuses what it would silently lose, and stored data it cannot trust fails typed.

* ``add`` of a *different* message under an id the session holds (in the log, live, or archived) is an
  :class:`InvalidMessageError` naming the id, and nothing is appended; the identical message stays a harmless retry.
* A duplicate id inside one add is found in one pass over the batch.
* A snapshot or archive entry holding a number JSON has no value for (``1e999``, read as infinity) with an intact
  digest is a :class:`SnapshotFormatError`, never a raw ``ValueError``.
* A snapshot filed under another session's key is refused with :class:`SnapshotIntegrityError` naming both ids.
* Archive entries lost after they were written (a gap, or fewer than the snapshot recorded) are a
  :class:`SnapshotIntegrityError` on the first archive read, and a SQLite file whose archive table was dropped is
  refused rather than re-created empty.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from ctxbudget.errors import InvalidMessageError, SnapshotFormatError, SnapshotIntegrityError, SnapshotStoreError
from ctxbudget.messages import Message
from ctxbudget.shared_session import SharedSession
from ctxbudget.stores import SnapshotStore, SQLiteSnapshotStore

from .test_shared_archive import COUNTER, grow, note, template
from .test_shared_integrity import overwrite_entry


def head_of(store: SnapshotStore) -> int:
    return store.log_head("s1")


# -- 1. reusing a held id ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["log", "live", "archived"])
def test_a_different_message_under_a_held_id_is_refused_and_nothing_is_appended(
    store: SnapshotStore, where: str
) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    if where == "log":
        shared.add(note(0))  # still in the log, past the snapshot
    else:
        grow(shared, 0, 40)  # compacted: the oldest notes are archived, the newest live
    target = {"log": note(0), "live": note(39), "archived": note(0)}[where]
    assert (target.id in {m.id for m in shared.load().session.history}) == (where in ("log", "live"))
    before = head_of(store)

    with pytest.raises(InvalidMessageError, match=repr(target.id)) as caught:
        shared.add(Message(role="user", content="CORRECTION: something else", id=target.id))

    assert caught.value.field == "id"
    assert head_of(store) == before  # nothing appended
    originals = {m.id: m for m in shared.originals()}
    assert originals[target.id] == target


def test_re_adding_the_identical_message_stays_a_harmless_retry(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    grow(shared, 0, 40)
    shared.add(note(40))
    for message in (note(0), note(39), note(40)):  # archived, live, in the log
        assert len(shared.add(message)) == 1
    assert [m.id for m in shared.originals()] == [note(n).id for n in range(41)]


def test_a_fresh_handle_and_the_async_add_refuse_a_reused_id_too(store: SnapshotStore) -> None:
    SharedSession(store, "s1")  # no snapshot yet: the check reads nothing it does not have
    shared = SharedSession.create(store, template(), counter=COUNTER)
    shared.add(note(0))
    other = SharedSession(store, "s1", counter=COUNTER)
    changed = Message(role="user", content="other", id=note(0).id)
    with pytest.raises(InvalidMessageError, match="already in this session"):
        other.add(changed)
    with pytest.raises(InvalidMessageError, match="already in this session"):
        asyncio.run(other.aadd(changed))
    assert asyncio.run(other.aadd(note(0))) == [head_of(store)]


class CountingId(str):
    """A message id that counts how often it is compared with another id."""

    __slots__ = ()
    comparisons = 0

    def __eq__(self, other: object) -> bool:
        CountingId.comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_a_duplicate_id_in_one_add_is_found_in_one_pass(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    size = 400
    batch = [Message.model_construct(role="user", content="x", id=CountingId(f"m{i}")) for i in range(size)]
    batch.append(Message.model_construct(role="user", content="y", id=CountingId(f"m{size - 1}")))
    CountingId.comparisons = 0

    with pytest.raises(InvalidMessageError, match="appears twice in one add"):
        shared.add(*batch)

    assert CountingId.comparisons <= 2 * len(batch)  # a count per id would compare about size**2 / 2 times
    assert head_of(store) == 0


# -- 2. numbers JSON has no value for ------------------------------------------------------------------------------
def test_a_stored_snapshot_holding_an_out_of_range_number_is_a_format_error(store: SnapshotStore) -> None:
    SharedSession.create(store, template(), counter=COUNTER)
    found = store.load("s1")
    assert found is not None
    assert '"threshold":0.8' in found.data
    store.save("s1", found.data.replace('"threshold":0.8', '"threshold":1e999', 1), expected_version=found.version)

    with pytest.raises(SnapshotFormatError, match=r"'s1'.*not valid JSON"):
        SharedSession(store, "s1", counter=COUNTER).load()


def test_an_archive_entry_holding_an_out_of_range_number_is_a_format_error(store: SnapshotStore) -> None:
    shared = SharedSession.create(store, template(), counter=COUNTER)
    grow(shared, 0, 40)
    handle = f"ctx://archive/{note(0).id}"
    (key,) = list(store.get_archive("s1", [f"{handle}.{r}" for r in ("summarized", "cleared", "dropped")]))
    data = store.get_archive("s1", [key])[key]
    edited = data.replace('"metadata": {}', '"metadata": {"x": 1e999}', 1)
    assert edited != data
    overwrite_entry(store, "s1", key, edited)
    fresh = SharedSession(store, "s1", counter=COUNTER)

    with pytest.raises(SnapshotFormatError, match=f"{key!r} of session 's1'.*not valid JSON"):
        fresh.originals()
    with pytest.raises(SnapshotFormatError):
        fresh.load().session.read_archived(key)


# -- 4. a snapshot under another session's key ---------------------------------------------------------------------
def test_a_snapshot_filed_under_another_session_is_refused_naming_both(store: SnapshotStore) -> None:
    for session_id in ("A", "B"):
        shared = SharedSession.create(store, template(session_id), counter=COUNTER)
        shared.add(Message(role="user", content=f"private to {session_id}"))
    a, b = store.load("A"), store.load("B")
    assert a is not None
    assert b is not None
    store.save("B", a.data, expected_version=b.version)

    with pytest.raises(SnapshotIntegrityError, match=r"stored for session 'B'.*snapshot of session 'A'") as caught:
        SharedSession(store, "B", counter=COUNTER).build_request()
    assert (caught.value.expected, caught.value.actual) == ("B", "A")


# -- 5. lost archive entries ---------------------------------------------------------------------------------------
def lost_rows(tmp_path: Path, sql: str) -> Path:
    path = tmp_path / "s.db"
    with SQLiteSnapshotStore(path) as store:
        grow(SharedSession.create(store, template(), counter=COUNTER), 0, 40)
        head = store.archive_head("s1")
    assert head >= 10
    with sqlite3.connect(path) as raw:
        raw.execute(sql.format(head=head))
    return path


@pytest.mark.parametrize(
    ("sql", "missing"),
    [
        ("DELETE FROM ctxbudget_archive WHERE seq = 5", "entry 5 is missing"),
        ("DELETE FROM ctxbudget_archive WHERE seq = {head}", "entry [0-9]+ is missing .expected [0-9]+ entries"),
        ("DELETE FROM ctxbudget_archive", "entries 1\\.\\."),
    ],
)
def test_lost_archive_rows_are_an_integrity_error_on_the_first_archive_read(
    tmp_path: Path, sql: str, missing: str
) -> None:
    path = lost_rows(tmp_path, sql)
    with SQLiteSnapshotStore(path) as store:
        shared = SharedSession(store, "s1", counter=COUNTER)
        shared.load()  # a load reads no archive
        for read in (shared.originals, lambda: shared.search_archive("note", k=100)):
            with pytest.raises(SnapshotIntegrityError, match=f"archive of session 's1': {missing}"):
                read()


def test_a_dropped_archive_table_is_refused_not_recreated_empty(tmp_path: Path) -> None:
    path = lost_rows(tmp_path, "DROP TABLE ctxbudget_archive")
    with (
        SQLiteSnapshotStore(path) as store,
        pytest.raises(SnapshotStoreError, match=r"missing table.*ctxbudget_archive"),
    ):
        store.load("s1")
    with sqlite3.connect(path) as raw:
        assert not raw.execute("SELECT name FROM sqlite_master WHERE name = 'ctxbudget_archive'").fetchall()


def test_a_brand_new_file_still_initialises(tmp_path: Path) -> None:
    with SQLiteSnapshotStore(tmp_path / "new.db") as store:
        assert store.load("s1") is None
        grow(SharedSession.create(store, template(), counter=COUNTER), 0, 40)
        assert len(SharedSession(store, "s1", counter=COUNTER).originals()) == 40
