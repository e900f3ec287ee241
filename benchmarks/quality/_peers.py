"""The peers, each driven the way its framework drives it, in the same window as ctxbudget.

* LangChain ``trim_messages`` (strategy "last", start_on "human", include_system, exact tiktoken counter).
* LlamaIndex ``ChatMemoryBuffer`` (token_limit = window, o200k tokenizer; put every message, get before each call
  with ``initial_token_count`` = the system prompt's tokens, which the agent sends on top).
* LangChain ``ContextEditingMiddleware`` (``ClearToolUsesEdit`` triggered at 80% of the window, keep 3, exact
  counter), applied through ``wrap_model_call`` with a handler that captures the request, as an agent applies it.

Messages are converted with ``langchain_ctxbudget.convert`` / ``llamaindex_ctxbudget.convert`` and what the peer
returns is converted back, so every system is counted and scored by the same code.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ctxbudget import Message, get_encoding

from .systems import COUNTER, Meter, QualityReport
from .workloads import Workload

ENCODING = get_encoding("o200k_base")


def _system(workload: Workload) -> Message:
    return Message(role="system", content=workload.system_prompt, id=f"{workload.name}-system")


class _LangChainSide:
    """LangChain copies of a workload's messages, exact counts cached by (id, content), conversion back cached."""

    def __init__(self) -> None:
        from langchain_ctxbudget.convert import from_langchain, to_langchain

        self._to, self._from = to_langchain, from_langchain
        self._core: dict[tuple[str, str], Message] = {}
        self._counts: dict[tuple[str, str], int] = {}

    def to_langchain(self, message: Message) -> Any:
        converted = self._to(message)
        key = (converted.id, converted.content)
        self._core[key], self._counts[key] = message, COUNTER.count_message(message)
        return converted

    def _key(self, message: Any) -> tuple[str, str]:
        key = (message.id, message.content if isinstance(message.content, str) else repr(message.content))
        if key not in self._core:
            core = self._from(message)
            self._core[key], self._counts[key] = core, COUNTER.count_message(core)
        return key

    def to_core(self, messages: Sequence[Any]) -> list[Message]:
        return [self._core[self._key(m)] for m in messages]

    def count(self, messages: Sequence[Any]) -> int:
        """Exact request tokens of LangChain messages (what the peer is given as its token counter)."""
        return COUNTER.request_overhead + sum(self._counts[self._key(m)] for m in messages)


def run_trim_messages(workload: Workload, *, window: int) -> QualityReport:
    from langchain_core.messages import BaseMessage
    from langchain_core.messages.utils import trim_messages

    started = time.perf_counter()
    side = _LangChainSide()

    def token_counter(messages: list[BaseMessage]) -> int:
        return side.count(messages)

    history = [side.to_langchain(_system(workload))]
    meter, trims = Meter(window), 0
    for batch in workload.calls:
        history.extend(side.to_langchain(m) for m in batch)
        kept = trim_messages(
            history,
            max_tokens=window,
            token_counter=token_counter,
            strategy="last",
            start_on="human",
            include_system=True,
        )
        trims += len(kept) < len(history)
        meter.record(side.to_core(kept))
    return meter.report(
        system="LangChain trim_messages", workload=workload, recover=None, compactions=trims, started=started
    )


def run_context_editing(workload: Workload, *, window: int) -> QualityReport:
    from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware
    from langchain.agents.middleware.types import ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage, BaseMessage

    from langchain_ctxbudget import StrictFakeChatModel

    started = time.perf_counter()
    side = _LangChainSide()
    system = _system(workload)
    system_lc = side.to_langchain(system)
    trigger = int(0.8 * window)

    def token_counter(messages: Sequence[BaseMessage]) -> int:
        return side.count([system_lc, *messages])

    middleware = ContextEditingMiddleware(
        edits=[ClearToolUsesEdit(trigger=trigger, keep=3)], token_counter=token_counter
    )
    model = StrictFakeChatModel(max_input_tokens=10**9)
    history: list[BaseMessage] = []
    captured: list[Sequence[BaseMessage]] = []

    def handler(request: ModelRequest[Any]) -> ModelResponse[Any]:
        captured.append(request.messages)
        return ModelResponse(result=[AIMessage(content="ok")])

    meter, edited = Meter(window), 0
    for batch in workload.calls:
        history.extend(side.to_langchain(m) for m in batch)
        request = ModelRequest(
            model=model,
            messages=list(history),  # type: ignore[arg-type]
            system_message=system_lc,
            tools=[],
            state={"messages": list(history)},  # type: ignore[typeddict-item]
        )
        middleware.wrap_model_call(request, handler)
        sent = captured.pop()
        edited += any(a.content != b.content for a, b in zip(sent, history, strict=True))
        meter.record([system, *side.to_core(sent)])
    return meter.report(
        system=f"LangChain ContextEditingMiddleware (clear tool uses at {trigger:,}, keep 3)",
        workload=workload,
        recover=None,
        compactions=edited,
        started=started,
    )


def run_chat_memory_buffer(workload: Workload, *, window: int) -> QualityReport:
    from llama_index.core.memory import ChatMemoryBuffer

    from llamaindex_ctxbudget.convert import from_chat_message, to_chat_message

    started = time.perf_counter()
    system = _system(workload)
    memory = ChatMemoryBuffer.from_defaults(token_limit=window, tokenizer_fn=ENCODING.encode_ordinary)
    initial = len(ENCODING.encode_ordinary(workload.system_prompt))
    core: dict[str, Message] = {}
    tail = _Tail(window - initial)
    meter, trims = Meter(window), 0
    for batch in workload.calls:
        for message in batch:
            chat = to_chat_message(message, include_id=True)
            core[message.id] = message
            memory.put(chat)
            tail.add(chat)
        tail.prune(memory)
        got = memory.get(initial_token_count=initial)
        trims += len(got) < tail.total
        meter.record([system, *(_back(c, core, from_chat_message) for c in got)])
    return meter.report(
        system="LlamaIndex ChatMemoryBuffer",
        workload=workload,
        recover=None,
        compactions=trims,
        started=started,
        notes=(
            "ChatMemoryBuffer.get() re-tokenizes every candidate suffix of the whole history; the harness drops "
            "stored messages older than a suffix already over the limit before each get() (get() would skip them "
            "anyway), so the request is the same and the run finishes",
        ),
    )


def _back(chat: Any, core: dict[str, Message], convert: Any) -> Message:
    """The workload message ``chat`` was made from (by its ctxbudget id), or a fresh conversion."""
    original = core.get(str(chat.additional_kwargs.get("ctxbudget_id")))
    return original if original is not None else convert(chat)


class _Tail:
    """Keeps ChatMemoryBuffer's store to the shortest suffix already over its limit (get() would skip the rest)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._sizes: list[int] = []

    def add(self, chat: Any) -> None:
        self.total += 1
        self._sizes.append(len(ENCODING.encode_ordinary(str(chat.content))))

    def prune(self, memory: Any) -> None:
        stored = memory.get_all()
        keep, running = len(stored), 0
        for index in range(len(stored) - 1, -1, -1):
            running += self._sizes[index] + 1
            if running > self.limit + 64:
                keep = len(stored) - index
                break
        while keep < len(stored):
            joined = " ".join(str(m.content) for m in stored[-keep:])
            if len(ENCODING.encode_ordinary(joined)) > self.limit:
                break
            keep += 1
        if keep < len(stored):
            memory.set(stored[-keep:])
            del self._sizes[: len(self._sizes) - keep]
