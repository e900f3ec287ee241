"""Shared pieces for the LangChain adapter tests: real tools, a strict fake model, agent builders."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.messages.toolpairs import find_tool_pair_problems
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool

from langchain_ctxbudget import ContextBudgetMiddleware, StrictFakeChatModel, from_langchain

HANDLE = re.compile(r"ctx://archive/[^\s;\]]+")


def big_text(tag: str, lines: int = 3000) -> str:
    """A long, line-structured tool output whose head and tail are recognisable."""
    body = "\n".join(f"{tag} line {i}: value={i * 7 % 101}" for i in range(lines))
    return f"BEGIN {tag}\n{body}\nEND {tag}"


@tool
def search(query: str) -> str:
    """Search the corpus and return every matching line."""
    return big_text(f"search:{query}", lines=600)


@tool
def lookup(key: str) -> str:
    """Look up one short fact."""
    return f"fact about {key}: 42"


@tool
def dump_logs(service: str) -> str:
    """Return the full log of a service (very long)."""
    return big_text(f"log:{service}", lines=20_000)


def assert_valid_and_within(model: StrictFakeChatModel, policy: CompactionPolicy) -> None:
    """Every request the model accepted was a valid provider sequence within the hard stop by our counter."""
    hard = math.floor(policy.hard_stop * model.max_input_tokens)
    assert model.requests, "the model was never called"
    for request in model.requests:
        converted = [from_langchain(m.model_copy()) for m in request.messages]
        assert find_tool_pair_problems(converted) == []
        assert request.tokens <= hard


class EventLog(BaseCallbackHandler):
    """Records custom events dispatched inside runs."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        self.events.append((name, data))

    def names(self) -> list[str]:
        return [name for name, _ in self.events]


def handle_in(messages: list[BaseMessage]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            found = HANDLE.search(message.text)
            return found.group(0) if found else None
    return None


@pytest.fixture
def policy() -> CompactionPolicy:
    return CompactionPolicy(keep_recent_messages=6)


def agent_with(
    model: StrictFakeChatModel, middleware: ContextBudgetMiddleware, tools: list[Any] | None = None, **kwargs: Any
) -> Any:
    kwargs.setdefault("system_prompt", "You are a careful research assistant.")
    return create_agent(
        model, tools=tools if tools is not None else [search, lookup], middleware=[middleware], **kwargs
    )


def final_text(result: dict[str, Any]) -> str:
    last = result["messages"][-1]
    assert isinstance(last, AIMessage)
    return last.text
