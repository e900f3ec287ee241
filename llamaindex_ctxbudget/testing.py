"""``StrictFakeLLM``: a shipped test double that behaves like a strict function-calling provider.

It is a real LlamaIndex ``FunctionCallingLLM`` (use it with chat engines, query engines and agents), never a mock
of LlamaIndex itself. Every call is checked the way OpenAI and Anthropic check a request:

* tool pairing: every tool call and every tool result names a call id (a string), an assistant tool call must be
  answered right after it, a tool result must answer a call; a violation raises
  :class:`~ctxbudget.errors.InvalidMessageError` (the provider's 400);
* size: messages + tool schemas + reply priming, by a ctxbudget counter, must fit ``context_window``; otherwise
  :class:`~ctxbudget.errors.ContextOverflowError` with the figures.

Accepted requests are recorded in :attr:`StrictFakeLLM.requests`. Replies follow a script of :class:`FakeReply`
(cycled), can request tool calls (several at once: parallel calls) in the OpenAI ``additional_kwargs`` shape or as
``ToolCallBlock`` blocks, and report usage in ``raw["usage"]`` and ``additional_kwargs`` as OpenAI does.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import AsyncGenerator, Generator, Sequence
from typing import Any, Literal

from ctxbudget.errors import ContextOverflowError, InvalidMessageError
from ctxbudget.messages import Message, ToolSchema
from ctxbudget.messages.tokens import TiktokenCounter, TokenCounter, count_request
from ctxbudget.messages.toolpairs import validate_tool_sequence
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.bridge.pydantic import BaseModel, Field, PrivateAttr
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.tools import BaseTool

from .convert import from_chat_message, lacks_tool_call_ids, tool_calls_of, tool_schemas

__all__ = ["FakeReply", "FakeRequest", "FakeToolCall", "StrictFakeLLM"]


class FakeToolCall(BaseModel):
    """A tool call the fake LLM will request."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class FakeReply(BaseModel):
    """One scripted reply: text, and optionally tool calls (more than one = parallel calls)."""

    text: str = ""
    tool_calls: list[FakeToolCall] = Field(default_factory=list)


class FakeRequest(BaseModel):
    """One accepted request, as the provider saw it."""

    messages: list[Message]
    tools: list[ToolSchema]
    tokens: int


class StrictFakeLLM(FunctionCallingLLM):
    """A scripted function-calling LLM that rejects what strict providers reject.

    Args:
        context_window: the window every request must fit, by ``counter``.
        script: replies, used in order and cycled; default: one text reply ``"ok"``.
        call_shape: ``"openai"`` puts tool calls in ``additional_kwargs["tool_calls"]``; ``"blocks"`` uses
            ``ToolCallBlock`` blocks (LlamaIndex's native shape).
        counter: the counter the window is enforced with (default: exact ``o200k_base``).
        num_output: tokens reserved for the reply (LlamaIndex metadata only).
    """

    context_window: int = Field(default=16_000, gt=0)
    script: list[FakeReply] = Field(default_factory=lambda: [FakeReply(text="ok")])
    call_shape: Literal["openai", "blocks"] = "openai"
    num_output: int = Field(default=256, gt=0)
    requests: list[FakeRequest] = Field(default_factory=list, exclude=True)

    _counter: TokenCounter = PrivateAttr()
    _turns: itertools.count[int] = PrivateAttr(default_factory=itertools.count)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, *, counter: TokenCounter | None = None, **data: Any) -> None:
        super().__init__(**data)
        self._counter = counter or TiktokenCounter()

    @classmethod
    def class_name(cls) -> str:
        """Name used in LlamaIndex serialization."""
        return "StrictFakeLLM"

    @property
    def metadata(self) -> LLMMetadata:
        """A chat, function-calling model with ``context_window``."""
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.num_output,
            is_chat_model=True,
            is_function_calling_model=True,
            model_name="strict-fake",
        )

    @property
    def max_request_tokens(self) -> int:
        """The largest request accepted so far (0 before the first)."""
        return max((r.tokens for r in self.requests), default=0)

    # -- the provider checks -----------------------------------------------------------------------------------
    def _accept(self, messages: Sequence[ChatMessage], tools: Sequence[BaseTool] = ()) -> FakeRequest:
        _check_ids(messages)
        converted = [from_chat_message(m) for m in messages]
        validate_tool_sequence(converted)
        schemas = list(tool_schemas(tools))
        tokens = count_request(self._counter, converted, schemas)
        if tokens > self.context_window:
            raise ContextOverflowError(
                f"request: {tokens:,} tokens is over the {self.context_window:,}-token context window "
                f"({len(converted)} messages, {len(schemas)} tools)",
                used_tokens=tokens,
                max_tokens=self.context_window,
                hard_stop_tokens=self.context_window,
            )
        request = FakeRequest(messages=converted, tools=schemas, tokens=tokens)
        with self._lock:
            self.requests.append(request)
        return request

    def _reply(self, request: FakeRequest) -> ChatResponse:
        turn = next(self._turns)
        scripted = self.script[turn % len(self.script)]
        text = scripted.text or ("" if scripted.tool_calls else f"reply {turn}")
        calls = [(f"call_{turn}_{i}", call) for i, call in enumerate(scripted.tool_calls)]
        if self.call_shape == "blocks":
            blocks: list[Any] = [TextBlock(text=text)] if text else []
            blocks += [ToolCallBlock(tool_call_id=cid, tool_name=c.name, tool_kwargs=c.args) for cid, c in calls]
            message = ChatMessage(role="assistant", blocks=blocks)
        else:
            kwargs = {"tool_calls": [_openai_call(cid, c) for cid, c in calls]} if calls else {}
            message = ChatMessage(role="assistant", content=text, additional_kwargs=kwargs)
        completion = self._counter.count_text(text)
        usage = {"prompt_tokens": request.tokens, "completion_tokens": completion}
        usage["total_tokens"] = request.tokens + completion
        return ChatResponse(message=message, raw={"usage": usage}, additional_kwargs=dict(usage), delta=text)

    def _complete(self, prompt: str) -> CompletionResponse:
        response = self._reply(self._accept([ChatMessage(role="user", content=prompt)]))
        return CompletionResponse(
            text=response.message.content or "", raw=response.raw, additional_kwargs=response.additional_kwargs
        )

    # -- LlamaIndex LLM surface --------------------------------------------------------------------------------
    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        """Check the request like a strict provider, then answer from the script."""
        return self._reply(self._accept(messages, kwargs.get("tools") or ()))

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        """Async :meth:`chat`."""
        return self._reply(self._accept(messages, kwargs.get("tools") or ()))

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        """:meth:`chat` as a one-chunk stream (checked before the first chunk)."""
        response = self._reply(self._accept(messages, kwargs.get("tools") or ()))

        def gen() -> Generator[ChatResponse, None, None]:
            yield response

        return gen()

    @llm_chat_callback()
    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseAsyncGen:
        """Async :meth:`stream_chat`."""
        response = self._reply(self._accept(messages, kwargs.get("tools") or ()))

        async def gen() -> AsyncGenerator[ChatResponse, None]:
            yield response

        return gen()

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        """The prompt is checked as one user message."""
        return self._complete(prompt)

    @llm_completion_callback()
    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        """Async :meth:`complete`."""
        return self._complete(prompt)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        """:meth:`complete` as a one-chunk stream."""
        response = self._complete(prompt)

        def gen() -> Generator[CompletionResponse, None, None]:
            yield response

        return gen()

    @llm_completion_callback()
    async def astream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseAsyncGen:
        """Async :meth:`stream_complete`."""
        response = self._complete(prompt)

        async def gen() -> AsyncGenerator[CompletionResponse, None]:
            yield response

        return gen()

    def _prepare_chat_with_tools(  # noqa: PLR0917 - FunctionCallingLLM's signature
        self,
        tools: Sequence[BaseTool],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        messages = list(chat_history or [])
        if user_msg is not None:
            messages.append(ChatMessage(role="user", content=user_msg) if isinstance(user_msg, str) else user_msg)
        return {"messages": messages, "tools": list(tools)}

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        """The tool calls the reply requests, whatever their shape."""
        calls = tool_calls_of(response.message)
        if not calls and error_on_no_tool_call:
            raise ValueError(f"response: expected at least one tool call, got none ({response.message.content!r})")
        return [ToolSelection(tool_id=c.id, tool_name=c.name, tool_kwargs=c.args) for c in calls]


def _check_ids(messages: Sequence[ChatMessage]) -> None:
    """Reject calls and results without a call id, as a provider does before it looks at the pairing."""
    for index, chat in enumerate(messages):
        role = chat.role.value if isinstance(chat.role, MessageRole) else str(chat.role)
        call_id = chat.additional_kwargs.get("tool_call_id")
        if role in ("tool", "function") and not call_id:
            raise InvalidMessageError(f"messages[{index}]: a tool result without a tool_call_id", field="messages")
        if role in ("tool", "function") and not isinstance(call_id, str):
            raise InvalidMessageError(
                f"messages[{index}].tool_call_id: expected a string, got {type(call_id).__name__}", field="messages"
            )
        if lacks_tool_call_ids(chat):
            raise InvalidMessageError(f"messages[{index}]: a tool call without an id", field="messages")


def _openai_call(call_id: str, call: FakeToolCall) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.args, separators=(",", ":"))},
    }
