"""ThreadView.absorb persists summary/goal/pins from the session without building a full snapshot."""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.messages import Message
from ctxbudget.session import ContextSession
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import META_KEY, SUMMARY_KEY, ContextBudgetMiddleware, StrictFakeChatModel, ToolLoop
from langchain_ctxbudget._update import session_meta as _meta
from langchain_ctxbudget._view import _SAMPLES, ThreadView
from langchain_ctxbudget.convert import MessageConverter
from langchain_ctxbudget.events import EventForwarder

from .conftest import agent_with, assert_valid_and_within


def _snapshot_meta(session: ContextSession) -> dict[str, Any]:
    snap = session.snapshot()
    return {
        "goal": snap.goal,
        "goal_id": snap.goal_id,
        "pinned": [m.model_dump(mode="json") for m in snap.pinned],
        "pinned_ids": list(snap.pinned_ids),
        "ratio": snap.tracker.ratio,
        "samples": snap.tracker.samples,
    }


def test_meta_matches_what_the_snapshot_holds() -> None:
    session = ContextSession(max_tokens=3_000, policy=CompactionPolicy(keep_recent_messages=4))
    assert _meta(session) == _snapshot_meta(session)
    session.pin("always answer in French", pin_id="pin-fr")
    for i in range(30):
        session.add(Message(role="user", content=f"question {i} " + "words " * 30, id=f"u{i}"))
        session.add(
            Message(role="assistant", content=f"answer {i} " + "more " * 30, id=f"a{i}", metadata={"pinned": i == 3})
        )
    session.build_request()
    session.record_usage(2_000, 10)
    meta = _meta(session)
    assert meta == _snapshot_meta(session)
    assert meta["goal_id"] == "u0"
    assert meta["pinned_ids"] == ["a3"]
    assert meta["pinned"][0]["id"] == "pin-fr"
    assert meta["samples"] == 1


def test_compaction_persists_meta_without_a_full_snapshot(
    policy: CompactionPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_snapshot(self: ContextSession) -> Any:
        raise AssertionError("absorb must not build a full snapshot (O(history + archive))")

    monkeypatch.setattr(ContextSession, "snapshot", no_snapshot)
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    middleware = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "meta"}}
    for i in range(8):
        agent.invoke({"messages": [{"role": "user", "content": f"question {i}"}]}, config)
    assert_valid_and_within(model, policy)
    state = agent.get_state(config).values
    session = middleware.session("meta")
    assert session is not None
    assert state[SUMMARY_KEY] == session.summary
    assert state[META_KEY]["goal"] == session.goal == "question 0"
    assert state[META_KEY]["goal_id"] is not None


@pytest.mark.parametrize("size", [1, 2, 3, 17, 18, 40, 1_000])
def test_a_state_is_recognised_by_the_sampled_ids_exactly_as_by_reading_them_one_by_one(size: int) -> None:
    """``extends``: the first, the last and sampled ids between must be where the view has them (the same rule)."""
    view = ThreadView(ContextSession(max_tokens=100_000), MessageConverter(), EventForwarder(frozenset()), None)  # type: ignore[arg-type]
    view.ids = [f"m{i}" for i in range(size)]
    state = [HumanMessage(f"text {i}", id=f"m{i}") for i in range(size)]
    step = max(1, size // _SAMPLES)
    sampled = {size - 1, *range(0, size - 1, step)}
    assert view.extends(state)
    assert view.extends([*state, HumanMessage("new", id="new")])
    assert not view.extends(state[:-1])
    for position in range(size):
        changed = [*state]
        changed[position] = HumanMessage("other", id="other")
        assert view.extends(changed) is (position not in sampled)
    view.lc = list(state)  # what the view holds: the first and the last are also compared by content
    for position in range(size):
        edited = [*state]
        edited[position] = HumanMessage("edited under the same id", id=f"m{position}")
        assert view.extends(edited) is (position not in {0, size - 1})
