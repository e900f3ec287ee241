"""Test doubles shipped for users: a chat model that is as strict as a real provider, with scripted behaviour.

:class:`StrictFakeChatModel` is a real ``BaseChatModel``: it supports ``bind_tools``, reports ``usage_metadata`` and
a ``profile`` with ``max_input_tokens``, and rejects what OpenAI or Anthropic reject:

* a tool call without an id (missing or empty), a result without a ``tool_call_id``, a tool call without its
  result right after it, a result without its call, a call answered twice: :class:`StrictProviderError`
  (LangChain's ``ModelInvalidRequestError``, the HTTP 400 family);
* a request (messages + tool schemas + reply priming, by the model's token counter) over ``max_input_tokens``:
  LangChain's ``ContextOverflowError``.

Every accepted request is recorded in :attr:`StrictFakeChatModel.requests`. Replies come from ``responses`` (in
order), else from ``respond`` (a callable), e.g. :class:`ToolLoop`, which asks for parallel tool calls after each
user message and answers once the results are in: hundreds of turns need no scripting.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ctxbudget.messages import Message, ToolSchema
from ctxbudget.messages.tokens import TiktokenCounter, TokenCounter, count_request
from ctxbudget.messages.toolpairs import find_tool_pair_problems
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.exceptions import ContextOverflowError, ModelInvalidRequestError
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, field_validator, model_validator

from .convert import from_langchain

__all__ = ["RecordedRequest", "StrictFakeChatModel", "StrictProviderError", "ToolLoop"]

Responder = Callable[[list[BaseMessage]], "AIMessage | str"]


class StrictProviderError(ModelInvalidRequestError):
    """What a strict provider answers with HTTP 400: an invalid tool-call sequence."""


@dataclass(frozen=True)
class RecordedRequest:
    """One accepted request: the messages as sent, our token count of it, and the tool names bound."""

    messages: tuple[BaseMessage, ...]
    tokens: int
    tools: tuple[str, ...]


def _convert(messages: Sequence[BaseMessage]) -> list[Message]:
    return [from_langchain(m.model_copy()) for m in messages]


def _missing_ids(messages: Sequence[BaseMessage]) -> list[str]:
    """What a provider rejects before pairing: calls and results that name no call id."""
    problems: list[str] = []
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage):
            problems.extend(
                f"messages[{index}].tool_calls[{n}]: tool call {call.get('name')!r} has no id"
                for n, call in enumerate(message.tool_calls)
                if not call.get("id")
            )
        elif isinstance(message, ToolMessage) and not message.tool_call_id:
            problems.append(f"messages[{index}]: tool result has no tool_call_id")
    return problems


_REPLIES = itertools.count()
"""Numbers every reply a :class:`StrictFakeChatModel` gives without an id of its own."""
_LOOPS = itertools.count()
"""Numbers each :class:`ToolLoop`: call ids unique in a process, and of one token count in every run (a random id's
tokens vary, and with them where a compaction cuts: two runs of one test compacted differently)."""


class StrictFakeChatModel(BaseChatModel):
    """A fake tool-calling chat model that validates every request like a strict provider.

    Args:
        max_input_tokens: the window; also published as ``profile["max_input_tokens"]``.
        responses: replies, used in order (``AIMessage`` or text).
        respond: called with the request's messages once ``responses`` is used up.
        counter: counts requests (default: exact ``o200k_base``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    max_input_tokens: int = 128_000
    responses: list[Any] = Field(default_factory=list)
    respond: Responder | None = None
    counter: TokenCounter = Field(default_factory=TiktokenCounter, exclude=True)
    requests: list[RecordedRequest] = Field(default_factory=list, exclude=True)

    @field_validator("responses")
    @classmethod
    def _check_responses(cls, value: list[Any]) -> list[Any]:
        for index, reply in enumerate(value):
            if not isinstance(reply, (AIMessage, str)):
                raise ValueError(f"responses[{index}]: expected AIMessage or str, got {type(reply).__name__}")
        return value

    @model_validator(mode="after")
    def _publish_window(self) -> StrictFakeChatModel:
        if self.profile is None:
            self.profile = {"max_input_tokens": self.max_input_tokens}
        return self

    @property
    def _llm_type(self) -> str:
        return "ctxbudget-strict-fake"

    def bind_tools(
        self, tools: Sequence[dict[str, Any] | type | Callable[..., Any] | Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tool schemas; they are counted in every request and listed in :attr:`requests`."""
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)

    def check(self, messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]] = ()) -> int:
        """Validate a request as a strict provider would; return its token count.

        Raises:
            StrictProviderError: a tool call or result without an id, an orphaned or unanswered tool call/result.
            ContextOverflowError: the request is over ``max_input_tokens``.
        """
        missing = _missing_ids(messages)
        if missing:
            raise StrictProviderError("400 invalid_request_error: " + "; ".join(missing[:5]))
        converted = _convert(messages)
        problems = find_tool_pair_problems(converted)
        if problems:
            raise StrictProviderError("400 invalid_request_error: " + "; ".join(p.describe() for p in problems[:5]))
        schemas = [ToolSchema.from_openai(tool) for tool in tools]
        tokens = count_request(self.counter, converted, schemas)
        if tokens > self.max_input_tokens:
            raise ContextOverflowError(
                f"400 context_length_exceeded: {tokens:,} tokens is over this model's {self.max_input_tokens:,}"
            )
        return tokens

    def _next_reply(self, messages: list[BaseMessage]) -> AIMessage:
        index = len(self.requests) - 1
        if index < len(self.responses):
            reply = self.responses[index]
        elif self.respond is not None:
            reply = self.respond(messages)
        else:
            reply = f"ok ({len(messages)} messages)"
        message = AIMessage(content=reply) if isinstance(reply, str) else reply.model_copy()
        if message.id is None:  # as a provider names its replies ("msg_..."): unique, and one token count every run
            message.id = f"msg_{next(_REPLIES):012d}"
        return message

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = list(kwargs.get("tools") or [])
        tokens = self.check(messages, tools)
        names = tuple(str(t.get("function", t).get("name")) for t in tools)
        self.requests.append(RecordedRequest(messages=tuple(messages), tokens=tokens, tools=names))
        reply = self._next_reply(messages)
        output = self.counter.count_text(reply.text) + sum(
            self.counter.count_text(str(call["args"])) for call in reply.tool_calls
        )
        reply.usage_metadata = UsageMetadata(
            input_tokens=tokens,
            output_tokens=output,
            total_tokens=tokens + output,
            input_token_details={},
            output_token_details={},
        )
        return ChatResult(generations=[ChatGeneration(message=reply)])


class ToolLoop:
    """A ``respond`` script: after a user message, call ``tool`` ``parallel`` times at once; after results, answer.

    Args:
        tool: the tool name to call.
        parallel: calls per turn (parallel tool calls in one assistant message).
        args: builds each call's arguments from (turn, index).
        rounds: tool rounds per user turn before the final answer.
    """

    def __init__(
        self,
        tool: str,
        *,
        parallel: int = 1,
        args: Callable[[int, int], dict[str, Any]] | None = None,
        rounds: int = 1,
    ) -> None:
        self.tool = tool
        self.parallel = parallel
        self.args = args or (lambda turn, index: {"query": f"turn {turn} item {index}"})
        self.rounds = rounds
        self.calls = 0
        self._prefix = f"{next(_LOOPS):012d}"

    def __call__(self, messages: list[BaseMessage]) -> AIMessage:
        """The next reply for ``messages``."""
        done = 0
        for message in reversed(messages):
            if isinstance(message, ToolMessage):
                continue
            if isinstance(message, AIMessage) and message.tool_calls:
                done += 1
                continue
            break
        if done >= self.rounds:
            return AIMessage(content=f"Done: answered after {done} tool round(s).")
        turn = self.calls
        self.calls += 1
        calls = [
            {
                "id": f"call_{self._prefix}_{turn}_{i}",
                "name": self.tool,
                "args": self.args(turn, i),
                "type": "tool_call",
            }
            for i in range(self.parallel)
        ]
        return AIMessage(content="", tool_calls=calls)
