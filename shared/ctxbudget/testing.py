"""Test doubles users need: scripted summarizers and a strict-provider check.

These ship in the package (like ``httpx.MockTransport``) so applications can test their own compaction paths
offline, with failures injected exactly where they want them.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Literal

from .compaction.summarize import ExtractiveSummarizer, SummaryRequest
from .errors import ContextOverflowError, InvalidMessageError
from .messages.message import Message, ToolSchema
from .messages.tokens import TokenCounter, count_request
from .messages.toolpairs import validate_tool_sequence

__all__ = ["FailureMode", "ScriptedSummarizer", "StrictProvider", "check_provider_request"]

FailureMode = Literal["ok", "raise", "blank", "oversized", "hang", "cancel", "not_text"]
"""What a :class:`ScriptedSummarizer` call does."""


class ScriptedSummarizer:
    """A summarizer whose calls follow a script of :data:`FailureMode` values (then ``ok`` forever).

    ``ok`` answers with an extractive summary; ``raise`` raises RuntimeError; ``blank`` returns whitespace;
    ``oversized`` returns far more than ``max_tokens``; ``hang`` sleeps ``hang_seconds`` (longer than any sane
    timeout); ``cancel`` raises ``asyncio.CancelledError`` from inside the summarizer; ``not_text`` returns a number.
    Every request it receives is kept in :attr:`requests`.
    """

    def __init__(self, script: Iterable[FailureMode] = (), *, hang_seconds: float = 5.0) -> None:
        self._script = list(script)
        self._lock = threading.Lock()
        self.hang_seconds = hang_seconds
        self.requests: list[SummaryRequest] = []
        self._inner = ExtractiveSummarizer()

    def _next(self, request: SummaryRequest) -> FailureMode:
        with self._lock:
            self.requests.append(request)
            return self._script.pop(0) if self._script else "ok"

    def summarize(self, request: SummaryRequest) -> str:
        """Follow the next step of the script."""
        mode = self._next(request)
        if mode == "hang":
            time.sleep(self.hang_seconds)
        return self._answer(mode, request)

    async def asummarize(self, request: SummaryRequest) -> str:
        """Async twin: ``hang`` awaits instead of blocking."""
        mode = self._next(request)
        if mode == "hang":
            await asyncio.sleep(self.hang_seconds)
        return self._answer(mode, request)

    def _answer(self, mode: FailureMode, request: SummaryRequest) -> str:
        if mode == "raise":
            raise RuntimeError("scripted summarizer failure")
        if mode == "cancel":
            raise asyncio.CancelledError
        if mode == "blank":
            return "   \n"
        if mode == "oversized":
            return "word " * (request.max_tokens * 4)
        if mode == "not_text":
            return 42  # type: ignore[return-value]  # deliberately wrong, to test validation
        return self._inner.summarize(request)


def check_provider_request(
    messages: Sequence[Message], *, max_tokens: int, counter: TokenCounter, tools: Sequence[ToolSchema] = ()
) -> int:
    """Check ``messages`` the way a strict provider would; return its token count.

    Raises:
        InvalidMessageError: a tool call or result without a call id, an orphaned tool call or result, or a system
            message after the conversation started.
        ContextOverflowError: the request is over ``max_tokens`` by ``counter``.
    """
    _check_call_ids(messages)
    validate_tool_sequence(messages)
    leading = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    late_system = [i for i, m in enumerate(messages) if m.role == "system" and i > leading]
    if late_system:
        raise InvalidMessageError(
            f"messages[{late_system[0]}]: a system message after the conversation started", field="messages"
        )
    tokens = count_request(counter, messages, tools)
    if tokens > max_tokens:
        raise ContextOverflowError(
            f"request: {tokens:,} tokens is over the {max_tokens:,}-token window",
            used_tokens=tokens,
            max_tokens=max_tokens,
            hard_stop_tokens=max_tokens,
        )
    return tokens


def _check_call_ids(messages: Sequence[Message]) -> None:
    """A call or result without an id (possible only for messages built with ``model_construct``) is a 400."""
    for index, message in enumerate(messages):
        missing = [n for n, call in enumerate(message.tool_calls) if not (isinstance(call.id, str) and call.id)]
        if missing:
            raise InvalidMessageError(
                f"messages[{index}].tool_calls[{missing[0]}].id: a tool call without an id", field="messages"
            )
        if message.role == "tool" and not (isinstance(message.tool_call_id, str) and message.tool_call_id):
            raise InvalidMessageError(
                f"messages[{index}].tool_call_id: a tool result without a call id", field="messages"
            )


class StrictProvider:
    """A fake provider endpoint: validates every request like OpenAI/Anthropic and reports usage.

    ``complete(messages, tools)`` returns the prompt tokens it "billed" (our count times ``bill_factor``), after
    rejecting invalid or over-window requests with the same typed errors as :func:`check_provider_request`.
    """

    def __init__(self, *, max_tokens: int, counter: TokenCounter, bill_factor: float = 1.0) -> None:
        self.max_tokens = max_tokens
        self.counter = counter
        self.bill_factor = bill_factor
        self.calls = 0

    def complete(self, messages: Sequence[Message], tools: Sequence[ToolSchema] = ()) -> int:
        """Validate one request and return the prompt tokens billed for it."""
        tokens = check_provider_request(messages, max_tokens=self.max_tokens, counter=self.counter, tools=tools)
        self.calls += 1
        return round(tokens * self.bill_factor)
