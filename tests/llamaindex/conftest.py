"""Shared helpers for the LlamaIndex adapter tests: strict checks on what every LLM call received."""

from __future__ import annotations

from ctxbudget.messages import Message
from ctxbudget.messages.toolpairs import find_tool_pair_problems

from llamaindex_ctxbudget.testing import StrictFakeLLM


def assert_all_requests_valid(llm: StrictFakeLLM, window: int) -> None:
    """Every request the fake accepted fits ``window`` and pairs every tool call with its result."""
    assert llm.requests, "the LLM was never called"
    for request in llm.requests:
        assert request.tokens <= window
        assert find_tool_pair_problems(request.messages) == []
        first = next((m for m in request.messages if m.role != "system"), None)
        assert first is None or first.role != "tool"


def texts(messages: list[Message]) -> list[str]:
    return [m.text for m in messages]
