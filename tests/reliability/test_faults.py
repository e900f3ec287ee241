"""Fault injection: whatever fails (summarizer, store, the process itself), nothing is lost or corrupted.

Every test ends with the same two checks: archive + live history reconstruct every original message exactly once,
in order (``assert_whole``), and the next request is valid for a strict provider and within budget
(``assert_valid_request``). A hanging summarizer is timed out after 0.2 s and hangs for an hour, so the timeout
always wins; no other session has a timeout, so no assertion depends on timing.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from ctxbudget.archive import Archive
from ctxbudget.errors import CompactionError, SnapshotStoreError
from ctxbudget.shared_session import SharedSession
from ctxbudget.stores import SQLiteSnapshotStore
from ctxbudget.testing import FailureMode, ScriptedSummarizer

from .conftest import StoreFactory
from .faults import (
    COUNTER,
    HANG_SECONDS,
    HANG_TIMEOUT,
    FaultyStore,
    When,
    assert_valid_request,
    assert_whole,
    conversation,
    make_session,
)

FAILURES: list[FailureMode] = ["raise", "blank", "oversized", "not_text", "cancel", "hang"]
EXPECTED_REASON = {
    "raise": "RuntimeError",
    "blank": "blank",
    "oversized": "over summary_max_tokens",
    "not_text": "expected str",
    "cancel": "cancel",
    "hang": "timed out after 0.2s",
}


# -- the summarizer fails ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", FAILURES)
def test_sync_compaction_survives_summarizer_failure(mode: FailureMode) -> None:
    summarizer = ScriptedSummarizer([mode], hang_seconds=HANG_SECONDS)
    session = make_session(summarizer, timeout=HANG_TIMEOUT if mode == "hang" else None)
    added = conversation(8)
    session.add(*added)

    event = session.compact()

    assert event.tier == "extractive"
    assert event.fallback_reason is not None
    assert EXPECTED_REASON[mode].lower() in event.fallback_reason.lower()
    assert summarizer.requests, "the configured summarizer was tried first"
    assert_whole(session, added)
    assert_valid_request(session)


@pytest.mark.parametrize("mode", FAILURES)
async def test_async_compaction_survives_summarizer_failure(mode: FailureMode) -> None:
    summarizer = ScriptedSummarizer([mode], hang_seconds=HANG_SECONDS)
    session = make_session(summarizer, timeout=HANG_TIMEOUT if mode == "hang" else None)
    added = conversation(8)
    session.add(*added)

    event = await session.acompact()

    assert event.tier == "extractive"
    assert event.fallback_reason is not None
    assert EXPECTED_REASON[mode].lower() in event.fallback_reason.lower()
    assert_whole(session, added)
    assert_valid_request(session)


@pytest.mark.parametrize("mode", ["raise", "blank", "hang"])
def test_auto_compaction_in_build_request_survives_summarizer_failure(mode: FailureMode) -> None:
    summarizer = ScriptedSummarizer([mode, mode, mode], hang_seconds=HANG_SECONDS)
    session = make_session(summarizer, window=2_000, timeout=HANG_TIMEOUT if mode == "hang" else None)
    added = conversation(40, big_every=100)
    for message in added:
        session.add(message)
        if message.role == "assistant" and not message.tool_calls:
            assert_valid_request(session)
    assert session.summary is not None, "auto-compaction ran"
    assert_whole(session, added)


async def test_outer_cancellation_leaves_the_session_untouched() -> None:
    summarizer = ScriptedSummarizer(["hang"], hang_seconds=HANG_SECONDS)
    session = make_session(summarizer)
    added = conversation(8)
    session.add(*added)
    before = session.snapshot().to_json()

    task = asyncio.create_task(session.acompact())
    while not summarizer.requests:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert session.snapshot().to_json() == before
    assert_whole(session, added)
    summarizer.hang_seconds = 0.0
    assert (await session.acompact()).tier == "summarize"
    assert_whole(session, added)


# -- the process dies between writing the archive and the live history ---------------------------------------------
@pytest.mark.parametrize("fail_at", [1, 2, 5])
def test_failure_between_archive_and_history_writes_leaves_a_consistent_session(
    fail_at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_session(ScriptedSummarizer())
    added = conversation(8)
    session.add(*added)
    history_before = session.history
    real_put = Archive.put_message
    calls = {"n": 0}

    def dying_put(self: Archive, message: object, reason: object) -> str:
        calls["n"] += 1
        if calls["n"] == fail_at:
            raise OSError("injected: process died while writing the archive")
        return real_put(self, message, reason)  # type: ignore[arg-type]

    monkeypatch.setattr(Archive, "put_message", dying_put)
    with pytest.raises(CompactionError, match="history unchanged"):
        session.compact()
    monkeypatch.undo()

    assert session.history == history_before
    assert_whole(session, added)
    assert_valid_request(session)
    session.compact()
    assert_whole(session, added)
    assert_valid_request(session)


# -- the store fails ---------------------------------------------------------------------------------------------------
STORE_FAULTS: list[tuple[str, int, When]] = [
    ("append", 2, "before"),
    ("append", 2, "after"),
    ("load", 1, "before"),
    ("load", 3, "before"),
    ("log_head", 2, "before"),
    ("read_log", 1, "before"),
    ("read_log", 4, "after"),
    ("save", 1, "before"),
    ("save", 1, "after"),
    ("save", 2, "after"),
    ("trim_log", 1, "before"),
    ("trim_log", 1, "after"),
]


def _retrying(operation: object, attempts: int = 3) -> object:
    for _ in range(attempts - 1):
        try:
            return operation()  # type: ignore[operator]
        except SnapshotStoreError:
            continue
    return operation()  # type: ignore[operator]


@pytest.mark.parametrize(("operation", "call", "when"), STORE_FAULTS, ids=str)
def test_shared_session_survives_store_failures(
    store_factory: StoreFactory, operation: str, call: int, when: When
) -> None:
    inner = store_factory()
    template = make_session(ScriptedSummarizer())
    SharedSession.create(inner, template)
    faulty = FaultyStore(inner, {(operation, call): when})
    shared = SharedSession(faulty, "faults", counter=COUNTER, summarizer=ScriptedSummarizer())
    added = conversation(12, tag="s")

    for start in range(0, len(added), 8):
        batch = added[start : start + 8]
        _retrying(lambda batch=batch: shared.add(*batch))
        _retrying(shared.compact)
        _retrying(shared.build_request)

    assert faulty.injected == [(operation, call, when)], "the fault was actually hit"
    loaded = SharedSession(inner, "faults", counter=COUNTER).load()
    assert_whole(loaded.session, added)
    assert_valid_request(loaded.session)


def test_a_store_failure_writes_nothing_partial(store_factory: StoreFactory) -> None:
    inner = store_factory()
    SharedSession.create(inner, make_session(ScriptedSummarizer()))
    shared = SharedSession(FaultyStore(inner, {("save", 1): "before"}), "faults", counter=COUNTER)
    added = conversation(6)
    shared.add(*added)
    before = inner.load("faults")

    with pytest.raises(SnapshotStoreError, match="injected: save"):
        shared.compact()

    assert inner.load("faults") == before
    assert len(inner.read_log("faults")) == len(added), "nothing was trimmed"


# -- a real process is killed mid-way (SQLite, a child interpreter) ---------------------------------------------
CHILD = """
import sys
sys.path.insert(0, {tests!r})
from ctxbudget.shared_session.session import SharedSession
from ctxbudget.stores import SQLiteSnapshotStore
from ctxbudget.testing import ScriptedSummarizer
from reliability.faults import COUNTER, FaultyStore, conversation, make_session

class Dying(ScriptedSummarizer):
    def summarize(self, request):
        import os
        os._exit(77)

store = SQLiteSnapshotStore({db!r})
SharedSession.create(store, make_session(ScriptedSummarizer()))
faulty = FaultyStore(store, {faults!r})
shared = SharedSession(faulty, "faults", counter=COUNTER, summarizer=Dying() if {die_in_summarizer!r} else None)
added = conversation(12, tag="k")
for start in range(0, len(added), 8):
    shared.add(*added[start : start + 8])
shared.compact()
shared.add(*conversation(1, tag="late"))
shared.compact()
"""

KILLS: list[tuple[str, dict[tuple[str, int], When], bool, int]] = [
    ("append-landed", {("append", 2): "exit_after"}, False, 16),
    ("append-lost", {("append", 2): "exit_before"}, False, 8),
    ("during-summarizer", {}, True, 48),
    ("before-snapshot-write", {("save", 1): "exit_before"}, False, 48),
    ("after-snapshot-before-trim", {("save", 1): "exit_after"}, False, 48),
    ("after-trim", {("trim_log", 1): "exit_after"}, False, 48),
]


@pytest.mark.parametrize(("name", "faults", "die_in_summarizer", "landed"), KILLS, ids=[k[0] for k in KILLS])
def test_killed_process_leaves_a_consistent_store(
    tmp_path: Path, name: str, faults: dict[tuple[str, int], When], die_in_summarizer: bool, landed: int
) -> None:
    db = tmp_path / "sessions.db"
    tests = str(Path(__file__).resolve().parents[1])
    script = CHILD.format(tests=tests, db=str(db), faults=faults, die_in_summarizer=die_in_summarizer)
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert child.returncode == 77, child.stderr

    store = SQLiteSnapshotStore(db)
    try:
        shared = SharedSession(store, "faults", counter=COUNTER)
        expected = conversation(12, tag="k")[:landed]
        loaded = shared.load()
        assert_whole(loaded.session, expected)
        assert_valid_request(loaded.session)
        # The survivors carry on: finish the work, compact, and still nothing is lost or doubled.
        shared.add(*conversation(12, tag="k")[landed:])
        shared.compact()
        loaded = shared.load()
        assert_whole(loaded.session, conversation(12, tag="k"))
        assert_valid_request(loaded.session)
    finally:
        store.close()
