"""archive_tools: a FunctionAgent searches a BudgetedMemory's archive and reads a compacted-away original back."""

from __future__ import annotations

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import InvalidPolicyError
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms import ChatMessage
from llama_index.core.tools import FunctionTool

from llamaindex_ctxbudget import (
    READ_TOOL_NAME,
    SEARCH_TOOL_NAME,
    BudgetedMemory,
    FakeReply,
    FakeToolCall,
    StrictFakeLLM,
    archive_tools,
    bound_tools,
)

from .conftest import assert_all_requests_valid

PLANTED = "Remember: the billing service deploys to eu-west-3 under ticket T4821 (owner: src/billing/api.py)."


def _compacted_memory() -> BudgetedMemory:
    """A memory whose first user message has been compacted out of the live history into the archive."""
    memory = BudgetedMemory.from_defaults(max_tokens=3_000, reserve_tokens=800)
    memory.put_messages([ChatMessage(role="user", content=PLANTED), ChatMessage(role="assistant", content="Noted.")])
    for turn in range(60):
        memory.put(ChatMessage(role="user", content=f"turn {turn}: " + "routine chatter about the weather " * 6))
        memory.put(ChatMessage(role="assistant", content=f"ack {turn}"))
        memory.get()
    assert PLANTED not in [m.text for m in memory.session.history]
    return memory


async def test_a_function_agent_searches_then_reads_the_original_back() -> None:
    memory = _compacted_memory()
    handle = memory.session.search_archive("T4821", k=1)[0].handle
    script = [
        FakeReply(tool_calls=[FakeToolCall(name=SEARCH_TOOL_NAME, args={"query": "T4821 eu-west-3", "k": 3})]),
        FakeReply(tool_calls=[FakeToolCall(name=READ_TOOL_NAME, args={"handle": handle})]),
        FakeReply(text="It deploys to eu-west-3."),
    ]
    llm = StrictFakeLLM(context_window=8_000, script=script)
    agent = FunctionAgent(tools=archive_tools(memory), llm=llm)
    await agent.run("Where does the billing service deploy?", memory=memory)
    assert_all_requests_valid(llm, 8_000)
    assert {tool.name for tool in llm.requests[0].tools} == {READ_TOOL_NAME, SEARCH_TOOL_NAME}
    listing = next(m for m in llm.requests[1].messages if m.role == "tool")
    assert listing.text.splitlines()[1].startswith(f"1. {handle} | user | score ")
    assert "T4821" in listing.text
    read_back = [m for m in llm.requests[2].messages if m.role == "tool"][-1]
    assert read_back.text.startswith(PLANTED)
    assert read_back.text.endswith("; end]")


def grep(pattern: str) -> str:
    """Search the repository for a pattern (a huge output, with one unusual line deep inside)."""
    noise = f"src/app.py:12: {pattern} matched here\n" * 3000
    return noise + "src/deep/module.py:999: SECRET_TOKEN_42 leaked\n" + noise


def test_a_bounded_tool_output_is_found_by_a_token_deep_inside_and_paged_back() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=16_000, policy=CompactionPolicy(max_tool_output_tokens=500))
    (bounded,) = bound_tools([FunctionTool.from_defaults(grep)], memory)
    shown = bounded.call(pattern="TODO").content
    assert "SECRET_TOKEN_42" not in shown  # the excerpt kept head and tail only
    read, search = archive_tools(memory)
    listing = search.call(query="SECRET_TOKEN_42").content
    first = listing.splitlines()[1]
    assert " | text (grep) | score " in first
    assert "SECRET_TOKEN_42" in first
    handle = first.split()[1]
    full = grep("TODO")
    offset = full.index("SECRET_TOKEN_42")
    page = read.call(handle=handle, offset=offset, limit=100).content
    assert page.startswith("SECRET_TOKEN_42 leaked")
    assert f"continue with offset={offset + 100}" in page
    whole = read.call(handle=handle).content  # bounded to one tool output, with where to continue
    assert memory.session.counter.count_text(whole) <= memory.session.policy.tool_output_limit(16_000)
    assert full.startswith(whole.split("\n[chars ")[0])


def test_bad_arguments_raise_typed_errors_and_unknown_handles_are_answered() -> None:
    memory = _compacted_memory()
    read, search = archive_tools(memory)
    for kwargs, field in [
        ({"query": ""}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "k": True}, "k"),
    ]:
        with pytest.raises(InvalidPolicyError) as info:
            search.call(**kwargs)
        assert info.value.field == field
    for kwargs, field in [({"handle": ""}, "handle"), ({"handle": "ctx://archive/x", "offset": -1}, "offset")]:
        with pytest.raises(InvalidPolicyError) as info:
            read.call(**kwargs)
        assert info.value.field == field
    assert "no archived output with handle 'ctx://archive/nope'" in read.call(handle="ctx://archive/nope").content
    assert search.call(query="zebra quokka").content == "No archived original matches 'zebra quokka'."


async def test_an_agent_gets_a_bad_search_back_as_an_error_naming_the_field() -> None:
    memory = _compacted_memory()
    script = [FakeReply(tool_calls=[FakeToolCall(name=SEARCH_TOOL_NAME, args={"query": "  "})]), FakeReply(text="ok")]
    llm = StrictFakeLLM(context_window=8_000, script=script)
    await FunctionAgent(tools=archive_tools(memory), llm=llm).run("search", memory=memory)
    error = next(m for m in llm.requests[1].messages if m.role == "tool")
    assert error.text.startswith("query: must be a non-empty str")
