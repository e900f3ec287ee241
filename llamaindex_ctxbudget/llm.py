"""``BudgetedLLM``: every model call an agent makes fits the window, its in-run scratchpad included.

LlamaIndex agents send ``[system prompt, *memory.get(), *scratchpad]``: the tool calls and results of the current
run live in the workflow's scratchpad and reach the memory only when the run ends, so a memory alone cannot keep a
long run inside the window. ``BudgetedLLM`` wraps the user's LLM and fits each request on its way out, the way
LangChain's ``ContextBudgetMiddleware`` fits each model call::

    memory = BudgetedMemory.from_defaults(model="gpt-4o-mini")
    agent = FunctionAgent(tools=tools, llm=BudgetedLLM(OpenAI(model="gpt-4o-mini"), memory=memory))
    await agent.run("...", memory=memory)

* Leading system messages (the agent's system prompt, the memory's summary) pass through unchanged and are
  counted; the rest of the request goes through a per-LLM ``BudgetedMemory`` (the same compaction: bound
  oversized outputs, clear old results, summarize, truncate; never an orphaned tool pair), with the tool schemas
  the call carries counted too.
* With ``memory=``, that memory's window, counter, policy and summarizer are used, and whatever a call compacts
  away is added to the memory's session archive under the same handle: ``archive_tools(memory)`` reads it back
  and it is persisted with the memory.
* Within a run the request grows by the scratchpad only, so each call costs O(new messages); a new run (the
  request no longer extends the previous one) starts the call view afresh from the memory's output.
* Usage the provider reports (``prompt_tokens`` in ``additional_kwargs`` or ``raw["usage"]``) calibrates it.
* Past the hard stop it raises :class:`~llamaindex_ctxbudget.errors.LlamaIndexContextOverflowError` before any
  request is sent.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncGenerator, Generator, Sequence
from typing import Any

from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import AsyncSummarizer, Summarizer
from ctxbudget.errors import InvalidPolicyError
from ctxbudget.messages import ToolSchema
from ctxbudget.messages.tokens import TokenCounter
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.bridge.pydantic import ConfigDict, Field, PrivateAttr, SerializeAsAny
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import LLM, ToolSelection
from llama_index.core.storage.chat_store import SimpleChatStore
from llama_index.core.tools import BaseTool

from .convert import from_chat_message, tool_schemas
from .errors import overflow_as_value_error
from .memory import BudgetedMemory

__all__ = ["BudgetedLLM"]

_TOOLS_KEY = "ctxbudget_tool_schemas"
"""Key under which :meth:`BudgetedLLM._prepare_chat_with_tools_compat` hands the call's schemas to ``chat``."""


class _CallMemory(BudgetedMemory):
    """The per-LLM view of the requests: a ``BudgetedMemory`` that never writes a snapshot (it is rebuilt per run)."""

    def _save_if_dirty(self) -> None:
        self._dirty = False

    async def _asave_if_dirty(self) -> None:
        self._dirty = False

    async def _asave_locked(self) -> None:
        self._dirty = False


def _leading_system(messages: Sequence[ChatMessage]) -> int:
    end = 0
    while end < len(messages) and messages[end].role.value in ("system", "developer"):
        end += 1
    return end


def _prompt_tokens(response: ChatResponse) -> int | None:
    """The billed prompt tokens a response reports, OpenAI style (``additional_kwargs`` or ``raw["usage"]``)."""
    value = response.additional_kwargs.get("prompt_tokens")
    raw = response.raw
    usage = raw.get("usage") if isinstance(raw, dict) else getattr(raw, "usage", None)
    if value is None and usage is not None:
        value = usage.get("prompt_tokens") if isinstance(usage, dict) else getattr(usage, "prompt_tokens", None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class BudgetedLLM(FunctionCallingLLM):
    """Wraps a LlamaIndex LLM; every chat request is fitted to the window before it is sent.

    Args:
        llm: the LLM to call (a ``FunctionCallingLLM`` for agents that call tools).
        memory: the agent's :class:`BudgetedMemory`: its window, counter, policy, summarizer and archive are used.
        max_tokens: the window requests must fit; default: the memory's, else 75% of ``llm``'s context window.
        policy: compaction policy; default: the memory's, else ``CompactionPolicy()``.
        counter: token counter; default: the memory's, else exact ``o200k_base``.
        summarizer: summarizer for in-run compaction; default: the memory's, else extractive.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    llm: SerializeAsAny[LLM]
    """The wrapped LLM."""
    memory: BudgetedMemory | None = Field(default=None, exclude=True)
    """The memory whose budget and archive the calls share."""
    max_tokens: int | None = Field(default=None, gt=0)
    """The window every request must fit (tokens)."""
    policy: CompactionPolicy | None = Field(default=None, exclude=True)
    """Compaction policy for in-run compaction."""
    counter: TokenCounter | None = Field(default=None, exclude=True)
    """Token counter."""
    summarizer: Summarizer | AsyncSummarizer | None = Field(default=None, exclude=True)
    """Summarizer for in-run compaction."""

    _calls: _CallMemory | None = PrivateAttr(default=None)
    _sent: list[ChatMessage] = PrivateAttr(default_factory=list)
    _system: tuple[tuple[object, ...], int] = PrivateAttr(default=((), 0))
    _lock: threading.RLock = PrivateAttr(default_factory=threading.RLock)
    _copied: int = PrivateAttr(default=0)
    _alocks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = PrivateAttr(
        default_factory=weakref.WeakKeyDictionary
    )

    def __init__(self, llm: LLM, **data: Any) -> None:
        if not isinstance(llm, LLM):
            raise InvalidPolicyError(f"llm: expected a LlamaIndex LLM, got {type(llm).__name__}", field="llm")
        super().__init__(llm=llm, callback_manager=llm.callback_manager, **data)

    @classmethod
    def class_name(cls) -> str:
        """Name used in LlamaIndex serialization."""
        return "BudgetedLLM"

    @property
    def metadata(self) -> LLMMetadata:
        """The wrapped LLM's metadata."""
        return self.llm.metadata

    @property
    def session(self) -> Any:
        """The session of the call view (state, events, compactions of the current run's requests)."""
        return self._call_memory().session

    # -- the call view ---------------------------------------------------------------------------------------
    def _window(self) -> int:
        if self.max_tokens is not None:
            return self.max_tokens
        if self.memory is not None:
            return self.memory.token_limit
        return int(self.llm.metadata.context_window * 0.75)

    def _call_memory(self) -> _CallMemory:
        if self._calls is None:
            memory = self.memory
            self._calls = _CallMemory(
                chat_store=SimpleChatStore(),
                max_tokens=self._window(),
                policy=self.policy or (memory.policy if memory is not None else None),
                counter=self.counter or (memory.session.counter if memory is not None else None),
                summarizer=self.summarizer or (memory.summarizer if memory is not None else None),
            )
        return self._calls

    def _share_archive(self, calls: _CallMemory) -> None:
        """Copy what the calls archived into the memory's archive (same handles) and persist it with the memory."""
        memory = self.memory
        archive = calls.session.archive
        if memory is None or len(archive) <= self._copied:
            return
        target = memory.session.archive
        for entry in archive.entries()[self._copied :]:
            target.add(entry)
        self._copied = len(archive)
        memory.save()

    def _system_tokens(self, lead: Sequence[ChatMessage], counter: TokenCounter) -> int:
        key = tuple((m.role.value, m.content) for m in lead)
        if self._system[0] != key:
            self._system = (key, sum(counter.count_message(from_chat_message(m)) for m in lead))
        return self._system[1]

    def _absorb(self, calls: _CallMemory, body: list[ChatMessage]) -> None:
        """Bring the call view up to ``body``: append what is new, or start afresh when it does not extend."""
        sent = self._sent
        extends = len(body) >= len(sent) and all(a is b or a == b for a, b in zip(sent, body, strict=False))
        if not extends:
            calls.reset()  # a new run: the memory's output stands for everything before it
            sent, self._copied = [], 0
        calls.put_messages(body[len(sent) :])
        self._sent = list(body)

    def _configure(self, calls: _CallMemory, schemas: Sequence[ToolSchema] | None) -> None:
        if schemas is not None and tuple(schemas) != calls.session.tools:
            calls.session.tools = tuple(schemas)

    def _fit(self, messages: Sequence[ChatMessage], schemas: Sequence[ToolSchema] | None) -> list[ChatMessage]:
        with self._lock, overflow_as_value_error():
            calls, lead, reserve = self._prepare(messages, schemas)
            fitted = calls.get(initial_token_count=reserve)
            self._share_archive(calls)
            return [*lead, *fitted]

    async def _afit(self, messages: Sequence[ChatMessage], schemas: Sequence[ToolSchema] | None) -> list[ChatMessage]:
        """Async :meth:`_fit`: compaction awaits the summarizer; calls on one event loop are fitted one at a time."""
        async with self._loop_lock():
            with overflow_as_value_error():
                with self._lock:
                    calls, lead, reserve = self._prepare(messages, schemas)
                fitted = await calls.aget(initial_token_count=reserve)
                with self._lock:
                    self._share_archive(calls)
                return [*lead, *fitted]

    def _prepare(
        self, messages: Sequence[ChatMessage], schemas: Sequence[ToolSchema] | None
    ) -> tuple[_CallMemory, list[ChatMessage], int]:
        """The call view brought up to ``messages`` (leading system messages apart), and their tokens."""
        calls = self._call_memory()
        self._configure(calls, schemas)
        cut = _leading_system(messages)
        lead, body = list(messages[:cut]), list(messages[cut:])
        self._absorb(calls, body)
        return calls, lead, self._system_tokens(lead, calls.session.counter)

    def _loop_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._lock:
            lock = self._alocks.get(loop)
            if lock is None:
                lock = self._alocks[loop] = asyncio.Lock()
            return lock

    def _record(self, response: ChatResponse | None) -> None:
        tokens = _prompt_tokens(response) if response is not None else None
        if tokens is not None:
            self._call_memory().record_usage(tokens)

    def _schemas(self, kwargs: dict[str, Any]) -> Sequence[ToolSchema] | None:
        schemas = kwargs.pop(_TOOLS_KEY, None)
        if schemas is not None:
            return list(schemas)
        tools = kwargs.get("tools")
        if isinstance(tools, (list, tuple)) and all(isinstance(t, (BaseTool, ToolSchema)) for t in tools):
            return tool_schemas(tools)
        return None

    # -- chat ------------------------------------------------------------------------------------------------
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        """Fit ``messages`` to the window, then call the wrapped LLM's ``chat``."""
        fitted = self._fit(messages, self._schemas(kwargs))
        response = self.llm.chat(fitted, **kwargs)
        self._record(response)
        return response

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        """Async :meth:`chat`."""
        fitted = await self._afit(messages, self._schemas(kwargs))
        response = await self.llm.achat(fitted, **kwargs)
        self._record(response)
        return response

    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        """:meth:`chat` streamed; the usage of the last chunk calibrates."""
        fitted = self._fit(messages, self._schemas(kwargs))
        stream = self.llm.stream_chat(fitted, **kwargs)

        def gen() -> Generator[ChatResponse, None, None]:
            last = None
            for last in stream:
                yield last
            self._record(last)

        return gen()

    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseAsyncGen:
        """Async :meth:`stream_chat` (what ``FunctionAgent`` calls when streaming)."""
        fitted = await self._afit(messages, self._schemas(kwargs))
        stream = await self.llm.astream_chat(fitted, **kwargs)

        async def gen() -> AsyncGenerator[ChatResponse, None]:
            last = None
            async for last in stream:
                yield last
            self._record(last)

        return gen()

    # -- completion: one prompt, nothing to compact ------------------------------------------------------------
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        """The wrapped LLM's ``complete`` (a single prompt is passed through)."""
        return self.llm.complete(prompt, formatted=formatted, **kwargs)

    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        """Async :meth:`complete`."""
        return await self.llm.acomplete(prompt, formatted=formatted, **kwargs)

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        """The wrapped LLM's ``stream_complete``."""
        return self.llm.stream_complete(prompt, formatted=formatted, **kwargs)

    async def astream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseAsyncGen:
        """Async :meth:`stream_complete`."""
        return await self.llm.astream_complete(prompt, formatted=formatted, **kwargs)

    # -- function calling: the wrapped LLM's own formats ----------------------------------------------------------
    def _function_llm(self) -> FunctionCallingLLM:
        if not isinstance(self.llm, FunctionCallingLLM):
            raise InvalidPolicyError(
                f"llm: {type(self.llm).__name__} is not a FunctionCallingLLM; tool calling needs one", field="llm"
            )
        return self.llm

    def _prepare_chat_with_tools_compat(  # noqa: PLR0917 - FunctionCallingLLM's signature
        self,
        tools: Sequence[BaseTool],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        prepared = self._function_llm()._prepare_chat_with_tools_compat(
            tools,
            user_msg=user_msg,
            chat_history=chat_history,
            verbose=verbose,
            allow_parallel_tool_calls=allow_parallel_tool_calls,
            tool_required=tool_required,
            **kwargs,
        )
        return {**prepared, _TOOLS_KEY: tool_schemas(tools)}

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
        return self._prepare_chat_with_tools_compat(
            tools,
            user_msg=user_msg,
            chat_history=chat_history,
            verbose=verbose,
            allow_parallel_tool_calls=allow_parallel_tool_calls,
            tool_required=tool_required,
            **kwargs,
        )

    def _validate_chat_with_tools_response(
        self,
        response: ChatResponse,
        tools: Sequence[BaseTool],
        allow_parallel_tool_calls: bool = False,
        **kwargs: Any,
    ) -> ChatResponse:
        return self._function_llm()._validate_chat_with_tools_response(
            response, tools, allow_parallel_tool_calls=allow_parallel_tool_calls, **kwargs
        )

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        """The wrapped LLM's reading of the tool calls in ``response``."""
        return self._function_llm().get_tool_calls_from_response(
            response, error_on_no_tool_call=error_on_no_tool_call, **kwargs
        )
