"""The summary in LangChain's shape (no two user turns touch) and ContextEditingMiddleware's knobs on ours."""

from __future__ import annotations

import uuid
from itertools import pairwise
from typing import Any

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import InvalidPolicyError
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import BudgetedChatMessageHistory, ContextBudgetMiddleware, StrictFakeChatModel
from langchain_ctxbudget._summary import fold_summary, summary_message

from .conftest import agent_with, assert_valid_and_within, big_text, search

CLEARED = "[tool output cleared"


@tool
def notes(topic: str) -> str:
    """Read the team's notes on a topic (medium length)."""
    return big_text(f"notes:{topic}", lines=12)


def _both_tools(messages: list[BaseMessage]) -> AIMessage:
    """After a user message call search and notes in parallel; after their results, answer."""
    if isinstance(messages[-1], ToolMessage):
        return AIMessage(content="Done.")
    tag = uuid.uuid4().hex[:8]
    calls = [
        {"id": f"s_{tag}", "name": "search", "args": {"query": f"q {tag}"}},
        {"id": f"n_{tag}", "name": "notes", "args": {"topic": f"t {tag}"}},
    ]
    return AIMessage(content="", tool_calls=calls)


def _run(middleware: ContextBudgetMiddleware, turns: int = 10) -> StrictFakeChatModel:
    model = StrictFakeChatModel(max_input_tokens=9_000, respond=_both_tools)
    agent = agent_with(model, middleware, tools=[search, notes], checkpointer=InMemorySaver())
    for i in range(turns):
        agent.invoke({"messages": [HumanMessage(f"question {i}")]}, {"configurable": {"thread_id": "t"}})
    return model


def _tool_names(messages: list[BaseMessage]) -> dict[str, str]:
    return {c["id"]: c["name"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls if c["id"]}


def _cleared(messages: list[BaseMessage], name: str) -> list[ToolMessage]:
    names = _tool_names(messages)
    return [
        m
        for m in messages
        if isinstance(m, ToolMessage)
        and names.get(m.tool_call_id) == name
        and m.response_metadata.get("ctxbudget", {}).get("cleared")
    ]


def _no_two_user_turns_touch(messages: list[BaseMessage]) -> None:
    turns = [m.type for m in messages if not isinstance(m, SystemMessage)]
    assert all(not (a == b == "human") for a, b in pairwise(turns)), turns


POLICY = CompactionPolicy(keep_recent_messages=4)


def test_agent_requests_never_put_two_user_turns_next_to_each_other() -> None:
    model = _run(ContextBudgetMiddleware(policy=POLICY), turns=16)
    assert_valid_and_within(model, POLICY)
    summarized = [r for r in model.requests if "[Context Summary]" in r.messages[1].text]
    assert summarized, "compaction never summarized: the test proves nothing"
    for request in model.requests:
        _no_two_user_turns_touch(list(request.messages))


def test_a_summary_alone_has_langchains_shape_and_folds_into_the_next_human_turn() -> None:
    summary = summary_message("[Context Summary]\nearlier", "sum-1")
    assert summary.type == "human"
    assert summary.additional_kwargs == {"lc_source": "summarization"}  # as SummarizationMiddleware marks it
    human = HumanMessage("next question", id="h2")
    folded = fold_summary([summary, human, AIMessage("answer")])
    assert [m.type for m in folded] == ["human", "ai"]
    assert folded[0].additional_kwargs == {"lc_source": "summarization"}  # as merge_message_runs keeps it
    assert folded[0].text == "[Context Summary]\nearlier\nnext question"
    assert fold_summary([summary, AIMessage("answer")]) == [summary, AIMessage("answer")]
    before = fold_summary([HumanMessage("pinned", id="p"), summary, AIMessage("answer")])
    assert [m.text for m in before] == ["pinned\n[Context Summary]\nearlier", "answer"]
    blocks = fold_summary([summary, HumanMessage([{"type": "text", "text": "q"}])])
    assert blocks[0].content == ["[Context Summary]\nearlier", {"type": "text", "text": "q"}]


def test_history_stores_the_summary_in_langchains_shape_and_reads_it_folded() -> None:
    inner = InMemoryChatMessageHistory()
    history = BudgetedChatMessageHistory(inner, max_tokens=2_000, policy=POLICY)
    for t in range(20):
        history.add_messages([HumanMessage(f"q{t}"), AIMessage("answer " * 80)])
    stored = inner.messages
    assert stored[0].additional_kwargs == {"lc_source": "summarization"}
    read = history.messages
    _no_two_user_turns_touch(read)
    assert "[Context Summary]" in read[0].text


def test_excluded_tools_are_never_cleared() -> None:
    control = _run(ContextBudgetMiddleware(policy=POLICY))
    assert any(_cleared(list(r.messages), "notes") for r in control.requests), "nothing cleared: no proof"
    model = _run(ContextBudgetMiddleware(policy=POLICY, exclude_tools=["notes"]))
    assert_valid_and_within(model, POLICY)
    assert not any(_cleared(list(r.messages), "notes") for r in model.requests)
    assert any(_cleared(list(r.messages), "search") for r in model.requests)


def test_cleared_results_use_the_placeholder_and_their_calls_lose_their_inputs() -> None:
    model = _run(ContextBudgetMiddleware(policy=POLICY, placeholder="[cleared]", clear_tool_inputs=True), turns=16)
    assert_valid_and_within(model, POLICY)
    edited = [r for r in model.requests if any(m.text.startswith("[cleared]") for m in r.messages)]
    assert edited, "no cleared result was sent with the placeholder"
    messages = list(edited[-1].messages)
    results = [m for m in messages if isinstance(m, ToolMessage) and m.text.startswith("[cleared]")]
    for result in results:
        assert "archived at ctx://archive/" in result.text
        assert result.response_metadata["context_editing"] == {"cleared": True, "strategy": "clear_tool_uses"}
    ids = {r.tool_call_id for r in results}
    calls = [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls if c["id"] in ids]
    assert calls
    assert all(c["args"] == {} for c in calls)
    others = [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls if c["id"] not in ids]
    assert all(c["args"] for c in others)  # only the cleared calls lose their inputs


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"exclude_tools": "notes"}, "exclude_tools"),
        ({"exclude_tools": ["notes", 3]}, "exclude_tools[1]"),
        ({"clear_tool_inputs": "yes"}, "clear_tool_inputs"),
        ({"placeholder": 5}, "placeholder"),
    ],
)
def test_editing_knobs_are_checked(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidPolicyError) as info:
        ContextBudgetMiddleware(**kwargs)
    assert info.value.field == field
