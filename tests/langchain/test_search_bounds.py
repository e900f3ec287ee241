"""The LangChain search_archive tool: its answer is bounded like any other tool output, whatever the query."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ctxbudget.archive import ArchiveEntry
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.messages import Message
from ctxbudget.messages.tokens import TiktokenCounter
from langchain.agents.middleware.types import ToolCallRequest

from langchain_ctxbudget import ARCHIVE_KEY, ContextBudgetMiddleware
from langchain_ctxbudget._search import search_message
from langchain_ctxbudget.middleware import SEARCH_TOOL_NAME

LIMIT = 500


def _state() -> dict[str, Any]:
    entries = {}
    for i in range(40):
        text = f"note {i}: the refund for order R-{i} failed with PAYMENT_METHOD_INACTIVE " + "detail " * 40
        entry = ArchiveEntry(handle=f"ctx://archive/n{i}.summarized", reason="summarized",
                             message=Message(role="user", content=text))  # fmt: skip
        entries[entry.handle] = entry.model_dump(mode="json")
    return {"messages": [], ARCHIVE_KEY: entries}


def _serve(middleware: ContextBudgetMiddleware, args: dict[str, Any]) -> str:
    call = {"id": "s1", "name": SEARCH_TOOL_NAME, "args": args, "type": "tool_call"}
    request = ToolCallRequest(tool_call=call, tool=middleware.search_tool, state=_state(),  # type: ignore[arg-type]
                              runtime=SimpleNamespace(context=None, config={}))  # type: ignore[arg-type]  # fmt: skip
    result = middleware.wrap_tool_call(request, lambda _: None)  # type: ignore[arg-type, return-value]
    assert result.status == "success"
    return str(result.content)


def test_a_huge_query_is_not_echoed_and_the_answer_fits_the_per_output_limit() -> None:
    middleware = ContextBudgetMiddleware(policy=CompactionPolicy(max_tool_output_tokens=LIMIT))
    answer = _serve(middleware, {"query": "refund " + "x" * 200_000, "k": 100})
    assert middleware.counter.count_text(answer) <= LIMIT
    assert "x" * 200 not in answer
    assert "(200,007 chars)" in answer.splitlines()[0]
    assert "PAYMENT_METHOD_INACTIVE" in answer


def test_a_search_message_given_the_limit_is_bounded_to_it() -> None:
    counter = TiktokenCounter()
    message = search_message("s1", "hit " * 5_000, max_tokens=50, counter=counter)
    assert counter.count_text(str(message.content)) <= 50
    assert str(message.content).endswith("…")
    error = search_message("s2", "bad " * 5_000, error=True, max_tokens=50, counter=counter)
    assert error.status == "error"
    assert counter.count_text(str(error.content)) <= 50
    assert search_message("s3", "short").content == "short"
