"""Tool calls without ids (issue 14 item 7): the call sent and its (real or synthesized) result carry one id.

Some providers and hand-written histories produce ``AIMessage`` tool calls whose ``id`` is ``None``. A real
provider rejects a request whose tool call has no id, or whose tool result answers no call; the strict fake does too.
"""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.session import ContextSession
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import (
    ContextBudgetMiddleware,
    ContextBudgetRunnable,
    StrictFakeChatModel,
    StrictProviderError,
)

from .conftest import lookup


def _idless(message_id: str | None = "a1", *names: str) -> AIMessage:
    calls: list[Any] = [{"name": name, "args": {"key": name}, "id": None} for name in names or ("lookup",)]
    return AIMessage(content="", tool_calls=calls, id=message_id)


def _pairs(messages: list[BaseMessage] | tuple[BaseMessage, ...]) -> tuple[list[str | None], list[str]]:
    calls = [call["id"] for m in messages if isinstance(m, AIMessage) for call in m.tool_calls]
    results = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    return calls, results


@pytest.mark.parametrize(
    "messages",
    [
        [HumanMessage("q"), _idless("a1"), ToolMessage("r", tool_call_id="call_a1_0")],
        [HumanMessage("q"), AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": ""}], id="a1")],
        [HumanMessage("q"), AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": "c1"}], id="a1")],
        [HumanMessage("q"), ToolMessage("r", tool_call_id="nobody")],
        [HumanMessage("q"), _idless("a1"), ToolMessage("r", tool_call_id="")],
    ],
    ids=["call-id-none", "call-id-empty", "unanswered", "result-answers-no-call", "result-id-empty"],
)
def test_strict_fake_rejects_missing_ids_and_unmatched_results(messages: list[BaseMessage]) -> None:
    with pytest.raises(StrictProviderError, match="400"):
        StrictFakeChatModel().invoke(messages)


def test_stateless_runnable_sends_the_id_its_synthesized_result_answers() -> None:
    history = [HumanMessage("q", id="h1"), _idless("a1", "lookup", "search"), HumanMessage("next", id="h2")]
    out = ContextBudgetRunnable(max_tokens=5_000).invoke(history)
    calls, results = _pairs(out)
    assert calls == results
    assert all(calls)
    assert history[1].tool_calls[0]["id"] is None  # the caller's message is not modified
    StrictFakeChatModel().invoke(out)


def test_bound_runnable_sends_the_id_its_synthesized_result_answers() -> None:
    session = ContextSession(max_tokens=5_000)
    out = ContextBudgetRunnable(session=session).invoke([HumanMessage("q", id="h1"), _idless("a1")])
    calls, results = _pairs(out)
    assert calls == results == ["call_a1_0"]
    StrictFakeChatModel().invoke(out)


def test_agent_with_a_model_that_returns_calls_without_ids() -> None:
    model = StrictFakeChatModel(responses=[_idless(None, "lookup", "lookup"), "done"])
    middleware = ContextBudgetMiddleware(policy=CompactionPolicy(keep_recent_messages=6))
    agent = create_agent(model, tools=[lookup], middleware=[middleware], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "idless"}}
    result = agent.invoke({"messages": [HumanMessage("look up a twice")]}, config)
    assert result["messages"][-1].text == "done"
    calls, results = _pairs(result["messages"])
    assert calls == results
    assert all(calls)
    assert len(set(calls)) == 2
    assert [m.text for m in result["messages"] if isinstance(m, ToolMessage)] == ["fact about lookup: 42"] * 2
    sent_calls, sent_results = _pairs(model.requests[-1].messages)
    assert sent_calls == sent_results == calls


def test_agent_input_history_with_an_unanswered_idless_call_is_repaired_with_matching_ids() -> None:
    model = StrictFakeChatModel(responses=["fine"])
    middleware = ContextBudgetMiddleware(policy=CompactionPolicy(keep_recent_messages=6))
    agent = create_agent(model, tools=[lookup], middleware=[middleware], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "history"}}
    history = [HumanMessage("q", id="h1"), _idless("a1"), HumanMessage("and now?", id="h2")]
    agent.invoke({"messages": history}, config)
    sent_calls, sent_results = _pairs(model.requests[0].messages)
    assert sent_calls == sent_results == ["call_a1_0"]
    state = agent.get_state(config).values["messages"]
    assert _pairs(state)[0] == ["call_a1_0"]  # the id is persisted with the message, so a restart sends it too
    agent.invoke({"messages": [HumanMessage("again", id="h3")]}, config)
    assert _pairs(model.requests[1].messages) == (["call_a1_0"], ["call_a1_0"])
