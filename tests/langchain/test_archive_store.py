"""Archived originals live in a store beside the agent state; the state holds a reference of constant size.

Real ``create_agent`` graphs with real checkpointers (``InMemorySaver``; ``SqliteSaver`` on a file) and stores (the
agent's LangGraph ``InMemoryStore``; ctxbudget's ``SQLiteSnapshotStore`` on a file), strict fake models. A "restart"
is a new middleware and graph, with the process's default store emptied, so only what was persisted is found.
"""

from __future__ import annotations

import json
import pickle
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import ArchiveError, SnapshotIntegrityError
from ctxbudget.stores import SQLiteSnapshotStore
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langchain_ctxbudget import ARCHIVE_KEY, ContextBudgetMiddleware, StrictFakeChatModel, ToolLoop, _archives
from langchain_ctxbudget.middleware import archived_messages

from .conftest import agent_with, assert_valid_and_within

PLANTED = "Remember: the payments queue is drained by worker pq-7 under ticket T5150."


def _turn(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _run(agent: Any, config: dict[str, Any], turns: int, start: int = 0) -> None:
    for i in range(start, start + turns):
        agent.invoke(_turn(f"question {i}: what does item {i} say?"), config)


def _model() -> StrictFakeChatModel:
    return StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))


@pytest.fixture
def restart() -> Iterator[Any]:
    """Forget the process's default archive store (as a new process would), restoring it afterwards."""
    saved = list(_archives._PROCESS)

    def forget() -> None:
        _archives._PROCESS.clear()

    yield forget
    _archives._PROCESS[:] = saved


def test_the_state_holds_a_reference_whatever_the_length_of_the_past(policy: CompactionPolicy) -> None:
    model = _model()
    middleware = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "flat"}}
    agent.invoke(_turn(PLANTED), config)
    sizes = []
    for block in range(3):
        _run(agent, config, 15, start=block * 15)
        state = agent.get_state(config).values
        sizes.append((len(json.dumps(state[ARCHIVE_KEY])), state[ARCHIVE_KEY]["count"]))
    assert_valid_and_within(model, policy)
    counts = [count for _, count in sizes]
    assert counts[0] < counts[1] < counts[2]  # the archive grew
    assert max(size for size, _ in sizes) < 200  # the state's share of it did not
    archived = {m.text for m in middleware.archived(state)}
    assert PLANTED in archived
    assert {f"question {i}: what does item {i} say?" for i in range(20)} <= archived | {
        m.text for m in state["messages"]
    }


def test_the_agents_store_keeps_the_archive_across_a_restart(policy: CompactionPolicy, restart: Any) -> None:
    saver, store = InMemorySaver(), InMemoryStore()
    config = {"configurable": {"thread_id": "graph-store"}}
    first = agent_with(_model(), ContextBudgetMiddleware(policy=policy), checkpointer=saver, store=store)
    first.invoke(_turn(PLANTED), config)
    _run(first, config, 20)
    state = first.get_state(config).values
    space = state[ARCHIVE_KEY]["space"]
    assert store.search(("ctxbudget", "archive", space), limit=1)  # written to the agent's store
    restart()
    middleware = ContextBudgetMiddleware(policy=policy)
    second = agent_with(_model(), middleware, checkpointer=saver, store=store)
    _run(second, config, 2, start=20)
    hits = middleware.search_archived("T5150 payments", state=second.get_state(config).values)
    assert hits[0].text == PLANTED
    assert PLANTED in {m.text for m in archived_messages(second.get_state(config).values, store=store)}


def test_sqlite_checkpoints_and_a_sqlite_archive_store_survive_a_restart(
    policy: CompactionPolicy, tmp_path: Path, restart: Any
) -> None:
    sqlite_saver = pytest.importorskip("langgraph.checkpoint.sqlite")
    config = {"configurable": {"thread_id": "on-disk"}}
    with sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False) as conn:
        store = SQLiteSnapshotStore(tmp_path / "archive.db")
        first = agent_with(
            _model(),
            ContextBudgetMiddleware(policy=policy, archive_store=store),
            checkpointer=sqlite_saver.SqliteSaver(conn),
        )
        first.invoke(_turn(PLANTED), config)
        _run(first, config, 20)
        store.close()
    restart()
    with sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False) as conn:
        store = SQLiteSnapshotStore(tmp_path / "archive.db")
        middleware = ContextBudgetMiddleware(policy=policy, archive_store=store)
        model = _model()
        second = agent_with(model, middleware, checkpointer=sqlite_saver.SqliteSaver(conn))
        _run(second, config, 3, start=20)
        state = second.get_state(config).values
        hit = middleware.search_archived("T5150", state=state)[0]
        assert middleware.read_archived(hit.handle, state=state).startswith(PLANTED)
        assert_valid_and_within(model, policy)
        store.close()


def test_a_state_with_its_archive_inline_is_migrated_at_its_next_model_call(policy: CompactionPolicy) -> None:
    """A state written by an earlier version holds ``handle -> entry`` in ``ctxbudget_archive``."""
    source = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(_model(), source, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "old"}}
    agent.invoke(_turn(PLANTED), config)
    _run(agent, config, 20)
    state = agent.get_state(config).values
    archive = source.archives.of_state(state, None, None)
    assert archive is not None
    inline = {entry.handle: entry.model_dump(mode="json") for entry in archive.entries()}
    legacy = {**state, ARCHIVE_KEY: inline}
    assert len(pickle.dumps(legacy[ARCHIVE_KEY])) > 10_000  # the originals, in the state
    # The earlier version's state, on a new checkpointer: the same messages, summary, meta and inline archive.
    middleware = ContextBudgetMiddleware(policy=policy)
    model = _model()
    resumed = agent_with(model, middleware, checkpointer=InMemorySaver())
    old = {"configurable": {"thread_id": "old-format"}}
    resumed.update_state(old, legacy, as_node="model")  # private fields written too
    assert resumed.get_state(old).values[ARCHIVE_KEY] == inline
    hit = middleware.search_archived("T5150", state=resumed.get_state(old).values)[0]  # read as it is, before
    assert hit.text == PLANTED
    resumed.invoke(_turn("one more question"), old)
    after = resumed.get_state(old).values[ARCHIVE_KEY]
    assert set(after) == {"ctxbudget.archive", "space", "head", "count"}  # the reference replaced the entries
    assert after["count"] >= len(inline)
    assert PLANTED in {m.text for m in middleware.archived(resumed.get_state(old).values)}
    assert_valid_and_within(model, policy)


def test_an_entry_edited_in_the_store_is_refused(policy: CompactionPolicy, tmp_path: Path) -> None:
    store = SQLiteSnapshotStore(tmp_path / "archive.db")
    middleware = ContextBudgetMiddleware(policy=policy, archive_store=store)
    agent = agent_with(_model(), middleware, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "tampered"}}
    agent.invoke(_turn(PLANTED), config)
    _run(agent, config, 20)
    state = agent.get_state(config).values
    store.close()
    with sqlite3.connect(tmp_path / "archive.db") as conn:
        conn.execute("UPDATE ctxbudget_archive SET record = replace(record, 'pq-7', 'pq-9')")
    reader = ContextBudgetMiddleware(policy=policy, archive_store=SQLiteSnapshotStore(tmp_path / "archive.db"))
    with pytest.raises(SnapshotIntegrityError):
        reader.search_archived("T5150", state=state)


def test_a_state_whose_archive_the_store_lacks_is_reported(policy: CompactionPolicy, restart: Any) -> None:
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "lost"}}
    agent = agent_with(_model(), ContextBudgetMiddleware(policy=policy), checkpointer=saver)
    agent.invoke(_turn(PLANTED), config)
    _run(agent, config, 20)
    restart()  # the process's default store is gone; the checkpoint is not
    middleware = ContextBudgetMiddleware(policy=policy)
    with pytest.raises(ArchiveError, match="archive_store"):
        middleware.search_archived("T5150", state=agent.get_state(config).values)
    fresh = agent_with(_model(), middleware, checkpointer=saver)
    with pytest.raises(ArchiveError, match="not in the archive store"):
        fresh.invoke(_turn("next"), config)


async def test_an_async_agent_writes_and_reads_through_the_stores_async_twins(policy: CompactionPolicy) -> None:
    saver, store = InMemorySaver(), InMemoryStore()
    config = {"configurable": {"thread_id": "async-store"}}
    middleware = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(_model(), middleware, checkpointer=saver, store=store)
    await agent.ainvoke(_turn(PLANTED), config)
    for i in range(20):
        await agent.ainvoke(_turn(f"question {i}: what does item {i} say?"), config)
    state = (await agent.aget_state(config)).values
    assert store.search(("ctxbudget", "archive", state[ARCHIVE_KEY]["space"]), limit=1)
    assert PLANTED in {m.text for m in archived_messages(state, store=store)}


def test_a_checkpointers_fresh_objects_are_recognised_by_id(policy: CompactionPolicy) -> None:
    """Every invoke loads the state from the checkpoint as new objects; only the new messages are converted."""
    middleware = ContextBudgetMiddleware()
    model = StrictFakeChatModel(max_input_tokens=1_000_000, respond=ToolLoop("search", parallel=2))
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "by-id"}}
    _run(agent, config, 5)
    view = middleware._views.get("by-id")
    assert view is not None
    for i in range(5, 15):
        before = view.converter.conversions
        held = len(agent.get_state(config).values["messages"])
        agent.invoke(_turn(f"question {i}"), config)
        added = len(agent.get_state(config).values["messages"]) - held
        assert middleware._views.get("by-id") is view  # recognised: the thread's view (and converter) is kept
        assert view.converter.conversions - before <= added  # never the whole history again
    assert isinstance(agent.get_state(config).values["messages"][0], HumanMessage)
