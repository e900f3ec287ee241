"""The append-only archive beside the snapshot, on every backend: written once, read by handle or by range."""

from __future__ import annotations

import asyncio
import json

import pytest
from ctxbudget.errors import SnapshotFormatError, UsageError
from ctxbudget.stores import ArchiveRecord, SnapshotStore

from .conftest import StoreFactory


def record(n: int, *, message: bool = True, log_seq: int = 0, text: str | None = None) -> ArchiveRecord:
    data = json.dumps({"n": n, "text": text if text is not None else f"entry {n}"})
    return ArchiveRecord(handle=f"h{n}", message_id=f"m{n}" if message else None, log_seq=log_seq, data=data)


def test_entries_get_consecutive_numbers_and_are_read_by_range(store: SnapshotStore) -> None:
    assert store.put_archive("s1", [record(1), record(2)]) == [1, 2]
    assert store.put_archive("s1", [record(3)]) == [3]

    assert [(seq, handle) for seq, handle, _ in store.read_archive("s1")] == [(1, "h1"), (2, "h2"), (3, "h3")]
    assert [seq for seq, _, _ in store.read_archive("s1", after=1)] == [2, 3]
    assert [seq for seq, _, _ in store.read_archive("s1", after=1, limit=1)] == [2]
    assert store.read_archive("s1", after=3) == []
    assert store.archive_head("s1") == 3
    assert store.archive_head("other") == 0


def test_an_entry_is_written_once_the_first_one_is_kept(store: SnapshotStore) -> None:
    store.put_archive("s1", [record(1, text="first")])

    assert store.put_archive("s1", [record(1, text="second"), record(2)]) == [0, 2]

    assert json.loads(store.get_archive("s1", ["h1"])["h1"])["text"] == "first"
    assert store.archive_head("s1") == 2


def test_entries_are_read_by_handle_absent_ones_left_out(store: SnapshotStore) -> None:
    store.put_archive("s1", [record(1), record(2)])

    found = store.get_archive("s1", ["h2", "missing", "h1"])

    assert sorted(found) == ["h1", "h2"]
    assert found["h1"] == record(1).data
    assert store.get_archive("s1", []) == {}
    assert store.get_archive("other", ["h1"]) == {}


def test_archived_ids_name_the_lowest_log_record_of_each_message(store: SnapshotStore) -> None:
    store.put_archive("s1", [record(1, log_seq=7), record(2, message=False)])
    store.put_archive("s1", [ArchiveRecord(handle="h1b", message_id="m1", log_seq=3, data="{}")])

    assert store.archived_ids("s1", ["m1", "m2", "h2", "nope"]) == {"m1": 3}
    assert store.archived_ids("s1", []) == {}


def test_sessions_do_not_share_archives_and_delete_removes_it(store: SnapshotStore) -> None:
    store.save("s1", "{}", expected_version=None)
    store.put_archive("s1", [record(1)])
    store.put_archive("s2", [record(1)])

    store.delete("s1", expected_version=1)

    assert store.read_archive("s1") == []
    assert store.archive_head("s1") == 0
    assert store.archived_ids("s1", ["m1"]) == {}
    assert [handle for _, handle, _ in store.read_archive("s2")] == ["h1"]


def test_a_long_archive_is_read_whole_across_pages(store: SnapshotStore) -> None:
    store.put_archive("s1", [record(n) for n in range(2_345)])

    entries = store.read_archive("s1")

    assert [seq for seq, _, _ in entries] == list(range(1, 2_346))
    assert [seq for seq, _, _ in store.read_archive("s1", after=1_000, limit=1_200)] == list(range(1_001, 2_201))


@pytest.mark.parametrize(
    ("records", "error", "field"),
    [
        ("not a list", SnapshotFormatError, "records"),
        (["h1"], SnapshotFormatError, "records[0]"),
        ([ArchiveRecord(handle="h1", data="{nope")], SnapshotFormatError, "records[0].data"),
        ([ArchiveRecord(handle="h1", data="1"), ArchiveRecord(handle="h1", data="2")], UsageError, "records[1].handle"),
    ],
)
def test_bad_records_are_refused_naming_the_field_and_nothing_is_written(
    store: SnapshotStore, records: object, error: type[Exception], field: str
) -> None:
    with pytest.raises(error) as caught:
        store.put_archive("s1", records)  # type: ignore[arg-type]

    assert caught.value.field == field  # type: ignore[attr-defined]
    assert store.archive_head("s1") == 0


def test_bad_reads_are_refused_naming_the_field(store: SnapshotStore) -> None:
    with pytest.raises(UsageError, match="handles") as caught:
        store.get_archive("s1", "h1")
    assert caught.value.field == "handles"
    with pytest.raises(UsageError) as caught:
        store.read_archive("s1", after=-1)
    assert caught.value.field == "after"
    with pytest.raises(UsageError) as caught:
        store.read_archive("s1", limit=0)
    assert caught.value.field == "limit"
    with pytest.raises(UsageError) as caught:
        store.archived_ids("s1", [3])  # type: ignore[list-item]
    assert caught.value.field == "message_ids[0]"


def test_the_async_twins_do_what_the_sync_methods_do(store: SnapshotStore) -> None:
    async def run() -> None:
        assert await store.asave("s1", "{}", expected_version=None) == 1  # type: ignore[attr-defined]
        assert await store.aappend("s1", ['"a"', '"b"']) == [1, 2]  # type: ignore[attr-defined]
        assert await store.aput_archive("s1", [record(1, log_seq=2)]) == [1]  # type: ignore[attr-defined]
        assert await store.aarchived_ids("s1", ["m1", "m9"]) == {"m1": 2}  # type: ignore[attr-defined]
        found = await store.aget_archive("s1", [record(1).handle, "absent"])  # type: ignore[attr-defined]
        assert found == store.get_archive("s1", [record(1).handle])
        assert await store.aread_log("s1", after=1) == [(2, '"b"')]  # type: ignore[attr-defined]
        assert await store.atrim_log("s1", upto=2) == 2  # type: ignore[attr-defined]
        assert await store.alog_head("s1") == 2  # type: ignore[attr-defined]
        loaded = await store.aload("s1")  # type: ignore[attr-defined]
        assert loaded is not None
        assert loaded.version == 1
        with pytest.raises(UsageError):
            await store.atrim_log("s1", upto=3)  # type: ignore[attr-defined]
        await store.aclose()  # type: ignore[attr-defined]

    asyncio.run(run())
    assert store.read_log("s1") == []


def test_concurrent_writers_never_duplicate_a_handle(store_factory: StoreFactory) -> None:
    async def writer(store: SnapshotStore, worker: int) -> list[int]:
        batch = [record(n) for n in range(worker, worker + 40)]  # overlapping handles between writers
        return await store.aput_archive("s1", batch)  # type: ignore[attr-defined, no-any-return]

    async def run() -> list[list[int]]:
        stores = [store_factory() for _ in range(4)]
        return await asyncio.gather(*(writer(store, 10 * worker) for worker, store in enumerate(stores)))

    results = asyncio.run(run())

    written = sorted(seq for seqs in results for seq in seqs if seq)
    assert written == list(range(1, 71)), "70 distinct handles, each written once, numbered without gaps"
    assert len(store_factory().read_archive("s1")) == 70
