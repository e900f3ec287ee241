"""The LlamaIndex search_archive tool: its answer is bounded like any other tool output, whatever the query."""

from __future__ import annotations

from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.messages import Message
from llama_index.core.tools import FunctionTool

from llamaindex_ctxbudget import READ_TOOL_NAME, SEARCH_TOOL_NAME, BudgetedMemory, archive_tools

LIMIT = 500


def _memory() -> BudgetedMemory:
    memory = BudgetedMemory.from_defaults(max_tokens=8_000, policy=CompactionPolicy(max_tool_output_tokens=LIMIT))
    for i in range(40):
        text = f"note {i}: the refund for order R-{i} failed with PAYMENT_METHOD_INACTIVE " + "detail " * 40
        memory.session.archive.put_message(Message(role="user", content=text), "summarized")
    return memory


def _tool(memory: BudgetedMemory, name: str) -> FunctionTool:
    return next(tool for tool in archive_tools(memory) if tool.metadata.name == name)


def test_a_huge_query_is_not_echoed_and_the_answer_fits_the_per_output_limit() -> None:
    memory = _memory()
    query = "refund " + "x" * 200_000
    answer = _tool(memory, SEARCH_TOOL_NAME).call(query=query, k=100).content
    assert memory.session.counter.count_text(answer) <= LIMIT
    assert "x" * 200 not in answer
    assert "(200,007 chars)" in answer.splitlines()[0]
    assert "PAYMENT_METHOD_INACTIVE" in answer  # hits still shown, as many as fit


def test_many_long_hits_are_cut_to_the_limit_and_say_how_many_were_shown() -> None:
    memory = _memory()
    answer = _tool(memory, SEARCH_TOOL_NAME).call(query="refund failed", k=100).content
    assert memory.session.counter.count_text(answer) <= LIMIT
    first = answer.splitlines()[0]
    assert " of 40 archived originals matching 'refund failed' shown" in first
    assert len(answer.splitlines()) - 1 == int(first.split()[0])


def test_an_unknown_handle_is_not_echoed_whole() -> None:
    memory = _memory()
    answer = _tool(memory, READ_TOOL_NAME).call(handle="ctx://archive/" + "y" * 100_000).content
    assert len(answer) < 500
    assert answer.startswith("[no archived output with handle 'ctx://archive/yyy")
