"""The search_archive tool: a real create_agent graph finds a compacted-away fact by keyword and reads it back."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from ctxbudget.archive.search import ArchiveIndex
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import InvalidPolicyError
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import ARCHIVE_KEY, READ_TOOL_NAME, ContextBudgetMiddleware, StrictFakeChatModel, ToolLoop
from langchain_ctxbudget.middleware import SEARCH_TOOL_NAME, SearchArchiveArgs

from .conftest import HANDLE, agent_with, assert_valid_and_within, final_text, search

PLANTED = "Remember for later: the billing service deploys to eu-west-3 under ticket T4821, owner src/billing/api.py."


def _turn(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


class FindScript:
    """Ordinary turns: a parallel tool loop. A turn starting with "find": search, read the top hit back, answer."""

    def __init__(self, query: str) -> None:
        self.loop = ToolLoop("search", parallel=2)
        self.query = query
        self.search_results: list[ToolMessage] = []

    def __call__(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage) and last.text.startswith("find"):
            args = {"query": self.query, "k": 3}
            return AIMessage(content="", tool_calls=[{"id": "s1", "name": SEARCH_TOOL_NAME, "args": args}])
        if isinstance(last, ToolMessage) and last.name == SEARCH_TOOL_NAME:
            self.search_results.append(last)
            found = HANDLE.search(last.text)
            assert found is not None, last.text
            call = {"id": "r1", "name": READ_TOOL_NAME, "args": {"handle": found.group(0)}}
            return AIMessage(content="", tool_calls=[call])
        if isinstance(last, ToolMessage) and last.name == READ_TOOL_NAME:
            return AIMessage(content=f"Found it: {last.text}")
        return self.loop(messages)


def _compacted_thread(saver: InMemorySaver, policy: CompactionPolicy, config: dict[str, Any]) -> None:
    """A thread whose first user message (the planted fact) has been compacted out of the state's messages."""
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    agent = agent_with(model, ContextBudgetMiddleware(policy=policy), checkpointer=saver)
    agent.invoke(_turn(PLANTED), config)
    for i in range(20):
        agent.invoke(_turn(f"question {i}: what does item {i} say?"), config)
    state = agent.get_state(config).values
    assert PLANTED not in [m.text for m in state["messages"]]


@pytest.mark.parametrize("query", ["T4821", "billing eu-west-3", "src/billing/api.py"])
def test_after_a_restart_the_model_searches_then_reads_the_original_back(policy: CompactionPolicy, query: str) -> None:
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "find"}}
    _compacted_thread(saver, policy, config)
    script = FindScript(query)
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=script)
    agent = agent_with(model, ContextBudgetMiddleware(policy=policy), checkpointer=saver)  # a new process
    result = agent.invoke(_turn("find where the billing service deploys"), config)
    assert_valid_and_within(model, policy)
    assert set(model.requests[0].tools) == {"search", "lookup", READ_TOOL_NAME, SEARCH_TOOL_NAME}
    (listing,) = script.search_results
    assert listing.status == "success"
    first = listing.text.splitlines()[1]
    assert first.startswith("1. ctx://archive/")
    assert " | user | score " in first
    assert "T4821" in first
    assert "read_archived_output" in listing.text
    assert final_text(result).startswith(f"Found it: {PLANTED}")


async def test_the_async_agent_serves_the_search_too(policy: CompactionPolicy) -> None:
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "async-find"}}
    _compacted_thread(saver, policy, config)
    script = FindScript("T4821")
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=script)
    agent = agent_with(model, ContextBudgetMiddleware(policy=policy), checkpointer=saver)
    result = await agent.ainvoke(_turn("find the ticket"), config)
    assert script.search_results[0].status == "success"
    assert final_text(result).startswith(f"Found it: {PLANTED}")


def test_search_archived_covers_the_state_alone_and_indexes_each_entry_once(
    policy: CompactionPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "state-only"}}
    _compacted_thread(saver, policy, config)
    model = StrictFakeChatModel(responses=["unused"])
    state = agent_with(model, ContextBudgetMiddleware(policy=policy), checkpointer=saver).get_state(config).values
    added: list[str] = []
    original_add = ArchiveIndex.add

    def counting_add(self: ArchiveIndex, entry: Any) -> None:
        added.append(entry.handle)
        original_add(self, entry)

    monkeypatch.setattr(ArchiveIndex, "add", counting_add)
    middleware = ContextBudgetMiddleware(policy=policy)  # no live session: only the state holds the archive
    runtime = SimpleNamespace(execution_info=SimpleNamespace(thread_id="state-only"))
    hits = middleware.search_archived("T4821", k=2, state=state, runtime=runtime)
    assert hits[0].text == PLANTED
    assert middleware.read_archived(hits[0].handle, state=state).startswith(PLANTED)
    count = state[ARCHIVE_KEY]["count"]
    assert len(added) == len(set(added)) == count
    middleware.search_archived("eu-west-3", state=state, runtime=runtime)
    assert len(added) == count  # cached by the state's archive head: nothing re-indexed
    # The thread goes on elsewhere (another process): its archive grows; only the new entries are indexed.
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    agent = agent_with(model, ContextBudgetMiddleware(policy=policy), checkpointer=saver)
    for i in range(8):
        agent.invoke(_turn(f"later question {i}: what does item {i} say?"), config)
    grown = agent.get_state(config).values
    assert grown[ARCHIVE_KEY]["count"] > count
    assert middleware.search_archived("later question 0", state=grown, runtime=runtime)
    assert len(added) == len(set(added)) == grown[ARCHIVE_KEY]["count"]  # each entry indexed once, in all


def test_a_query_that_matches_nothing_says_so(policy: CompactionPolicy) -> None:
    calls = [{"id": "s1", "name": SEARCH_TOOL_NAME, "args": {"query": "zebra quokka"}}]
    model = StrictFakeChatModel(responses=[AIMessage(content="", tool_calls=calls), "done"])
    result = agent_with(model, ContextBudgetMiddleware(policy=policy), tools=[search]).invoke(_turn("hi"))
    reply = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert reply.status == "success"
    assert reply.text == "No archived original matches 'zebra quokka'."


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": 42}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "k": 101}, "k"),
        ({"query": "x", "k": True}, "k"),
        ({"query": "x", "k": "many"}, "k"),
        ({"query": "x", "k": 2.5}, "k"),
    ],
)
def test_bad_search_arguments_answer_the_model_with_an_error(args: dict[str, Any], named: str) -> None:
    calls = [{"id": "s1", "name": SEARCH_TOOL_NAME, "args": args}]
    model = StrictFakeChatModel(max_input_tokens=8_000, responses=[AIMessage(content="", tool_calls=calls), "done"])
    agent = agent_with(model, ContextBudgetMiddleware(), tools=[search], checkpointer=InMemorySaver())
    result = agent.invoke(_turn("hi"), {"configurable": {"thread_id": "bad"}})
    assert final_text(result) == "done"
    reply = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert reply.status == "error"
    assert reply.tool_call_id == "s1"
    assert reply.text.startswith(f"Error: invalid arguments for {SEARCH_TOOL_NAME}: ")
    assert f"{named}:" in reply.text


def test_search_archived_rejects_bad_arguments_with_a_typed_error() -> None:
    middleware = ContextBudgetMiddleware(max_tokens=8_000)
    for query, k, field in [("", 5, "query"), ("  ", 5, "query"), ("x", 0, "k"), ("x", True, "k")]:
        with pytest.raises(InvalidPolicyError) as info:
            middleware.search_archived(query, k=k)
        assert info.value.field == field
    assert middleware.search_archived("anything") == []
    assert SearchArchiveArgs(query="x").k == 5


def test_the_search_tool_comes_and_goes_with_the_read_back_tool() -> None:
    model = StrictFakeChatModel(responses=["ok"])
    agent_with(model, ContextBudgetMiddleware(read_back_tool=False), tools=[search]).invoke(_turn("hi"))
    assert model.requests[0].tools == ("search",)
    model2 = StrictFakeChatModel(responses=["ok"])
    middleware = ContextBudgetMiddleware()
    agent_with(model2, middleware, tools=[search]).invoke(_turn("hi"))
    assert set(model2.requests[0].tools) == {"search", READ_TOOL_NAME, SEARCH_TOOL_NAME}
    assert (
        middleware.search_tool.invoke({"query": "nothing archived"})
        == "No archived original matches 'nothing archived'."
    )
