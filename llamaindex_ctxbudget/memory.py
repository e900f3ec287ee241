"""``BudgetedMemory``: a drop-in LlamaIndex memory that always returns a valid, in-budget history.

Use it wherever LlamaIndex takes ``memory=``: ``SimpleChatEngine``, ``ContextChatEngine``,
``CondensePlusContextChatEngine``, ``FunctionAgent``, ``ReActAgent``, ``AgentWorkflow``::

    memory = BudgetedMemory.from_defaults(model="gpt-4o-mini", max_tokens=16_000, system_prompt="Be terse.")
    agent = FunctionAgent(tools=tools, llm=llm)
    await agent.run("hello", memory=memory)

What it does that ``ChatMemoryBuffer`` and ``Memory`` do not:

* ``get()`` costs O(history) list building and no re-tokenizing: every message is counted once, on ``put``, by a
  per-memory, model-aware counter (never LlamaIndex's process-global tokenizer), tool-call arguments included;
* over the threshold it compacts through :class:`~ctxbudget.session.session.ContextSession` (bound oversized tool
  outputs, clear old results, summarize the older safe prefix); a failing summarizer falls back to an extractive
  summary and never loses a message;
* the result never starts on a tool result and never separates a call from its result (parallel calls too); the
  system prompt and system messages are kept; past the hard stop it raises
  :class:`~ctxbudget.errors.ContextOverflowError` with the figures instead of sending an over-window request;
* history set through ``set(chat_history)`` is budgeted like any other;
* ``get_all()`` returns every message ever put, as given: compaction moves originals to the archive, never away.

Persistence: pass a ``chat_store`` (any ``BaseChatStore``) and ``chat_store_key``; another memory object (or
process) built on the same store and key resumes the same session (see :mod:`llamaindex_ctxbudget.persistence`).

This module opens the session and holds the fields; reading and forgetting are
:mod:`llamaindex_ctxbudget._memory_history`'s, writing :mod:`llamaindex_ctxbudget._memory_writes`'s, snapshots
:mod:`llamaindex_ctxbudget._memory_persistence`'s (mixins of the one class).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ctxbudget import ContextSession
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import AsyncSummarizer, Summarizer
from ctxbudget.context.evidence import excerpt
from ctxbudget.errors import InvalidPolicyError, SnapshotError
from ctxbudget.messages import Message, ToolSchema, new_message_id
from ctxbudget.messages.registry import DEFAULT_REGISTRY
from ctxbudget.messages.tokens import TokenCounter
from ctxbudget.session._args import resolve_window
from ctxbudget.session.events import Event
from ctxbudget.session.snapshot import SessionSnapshot
from ctxbudget.session.tracking import ContextState
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import ConfigDict, Field, PrivateAttr, SerializeAsAny, field_serializer
from llama_index.core.llms.llm import LLM
from llama_index.core.memory.types import DEFAULT_CHAT_STORE_KEY, BaseMemory
from llama_index.core.storage.chat_store import BaseChatStore, SimpleChatStore
from llama_index.core.tools import BaseTool

from ._memory_history import MemoryHistory
from ._memory_persistence import MemoryPersistence
from ._memory_writes import MemoryWrites
from ._render import RenderedView
from .convert import ChatMessageConverter, ContentKey, content_key, tool_schemas
from .instrumentation import forward_session_events
from .persistence import check_conversation_key, parse_snapshot, snapshot_key

__all__ = ["BudgetedMemory"]


_TOKEN_LIMIT_RATIO = 0.75
"""``ChatMemoryBuffer``'s share of an ``llm``'s context window when no limit is given."""


def _window_args(
    model: str | None, max_tokens: int | None, token_limit: int | None, llm: LLM | None
) -> tuple[str | None, int | None]:
    """``model`` and ``max_tokens`` from ``ChatMemoryBuffer``'s ``token_limit`` and ``llm`` (same meaning)."""
    if token_limit is not None:
        if max_tokens is not None and max_tokens != token_limit:
            raise InvalidPolicyError(
                f"token_limit: {token_limit!r} disagrees with max_tokens={max_tokens!r} (the same budget: give one)",
                field="token_limit",
            )
        max_tokens = token_limit
    if llm is not None:
        metadata = llm.metadata
        if model is None and metadata.model_name and DEFAULT_REGISTRY.find(metadata.model_name) is not None:
            model = metadata.model_name
        if max_tokens is None:
            max_tokens = int(metadata.context_window * _TOKEN_LIMIT_RATIO)
    return model, max_tokens


class BudgetedMemory(MemoryHistory, MemoryWrites, MemoryPersistence, BaseMemory):
    """LlamaIndex memory backed by a ctxbudget :class:`~ctxbudget.session.session.ContextSession`.

    Build it with :meth:`from_defaults`. Fields mirror the session's arguments; ``counter`` and ``summarizer`` are
    live objects and are not serialized.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    chat_store: SerializeAsAny[BaseChatStore] = Field(default_factory=SimpleChatStore)
    """Where originals and the session snapshot are kept."""
    chat_store_key: str = DEFAULT_CHAT_STORE_KEY
    """The conversation's key in ``chat_store``."""
    model: str | None = None
    """Model name (``gpt-4o``, ``openai:gpt-4o``, ...): picks the window (unless ``max_tokens``) and the counter."""
    max_tokens: int | None = None
    """Prompt budget in tokens, at most the model's window; default: the model's window minus its output reserve.
    A new session needs ``model`` or ``max_tokens``: there is no default window."""
    system_prompt: str | None = None
    """Sent first by every ``get()``; never compacted."""
    tools: list[ToolSchema] = Field(default_factory=list)
    """Tool schemas the LLM is given (counted in every request)."""
    policy: CompactionPolicy | None = None
    """Compaction policy (threshold, target, hard stop, ...); default ``CompactionPolicy()``."""
    compact_instructions: str | None = None
    """Project "Compact Instructions" added to every compaction prompt."""
    session_id: str | None = None
    """Stable session id (default: the stored one when resuming, else random)."""
    reserve_tokens: int = Field(default=0, ge=0)
    """Tokens the framework always adds that this memory cannot see (an agent's own system prompt, say)."""
    counter: TokenCounter | None = Field(default=None, exclude=True)
    """Token counter; default: exact for OpenAI models, calibrated estimate for others. Never process-global."""
    summarizer: Summarizer | AsyncSummarizer | None = Field(default=None, exclude=True)
    """Summarizer (e.g. :class:`~llamaindex_ctxbudget.summarizer.LlamaIndexSummarizer`); default: extractive."""

    _session: ContextSession | None = PrivateAttr(default=None)
    _converter: ChatMessageConverter = PrivateAttr(default_factory=ChatMessageConverter)
    _lock: threading.RLock = PrivateAttr(default_factory=threading.RLock)
    _dirty: bool = PrivateAttr(default=False)
    _unsubscribe: list[Callable[[], None]] = PrivateAttr(default_factory=list)
    # The session's history object and its converted ChatMessages so far: get() converts only what is new.
    _view: RenderedView = PrivateAttr(default_factory=RenderedView)
    # Every message the session holds (live, archived, system), by its position in the chat store (which is also
    # its position in the session's add order): its id, its content key, and positions by key, so set() can match
    # equal copies (a store that deserializes) to what is already held.
    _ids: list[str] = PrivateAttr(default_factory=list)
    _keys: list[ContentKey] = PrivateAttr(default_factory=list)
    _pos_of: dict[str, int] = PrivateAttr(default_factory=dict)
    _by_key: dict[ContentKey, list[int]] = PrivateAttr(default_factory=dict)
    # Archive handle -> whether its entry is exactly what the chat store's message rebuilds (then not persisted).
    _rebuildable: dict[str, bool] = PrivateAttr(default_factory=dict)
    # Coroutines writing to the store are serialized per event loop (a threading lock cannot be held across await).
    _alocks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = PrivateAttr(
        default_factory=weakref.WeakKeyDictionary
    )

    def __init__(self, **data: Any) -> None:
        """Validate the fields (build it with :meth:`from_defaults`, which passes them here).

        Raises:
            UsageError: ``chat_store_key`` ends with the reserved
                :data:`~llamaindex_ctxbudget.persistence.SNAPSHOT_SUFFIX` (it names another conversation's snapshot).
        """
        super().__init__(**data)
        check_conversation_key(self.chat_store_key)

    @field_serializer("chat_store")
    def _serialize_store(self, chat_store: BaseChatStore) -> dict[str, Any]:
        data: dict[str, Any]
        if type(chat_store) is SimpleChatStore:  # its own serializer fails under pydantic >= 2.12 (index_key)
            data = {"store": {k: [m.model_dump(mode="json") for m in v] for k, v in chat_store.store.items()}}
        else:
            data = chat_store.model_dump()
        data["class_name"] = chat_store.class_name()
        return data

    @classmethod
    def class_name(cls) -> str:
        """Name used in LlamaIndex serialization."""
        return "BudgetedMemory"

    @classmethod
    def from_defaults(  # type: ignore[override]  # keyword-only config instead of BaseMemory's **kwargs
        cls,
        *,
        chat_history: Sequence[ChatMessage] | None = None,
        model: str | None = None,
        max_tokens: int | None = None,
        system_prompt: str | None = None,
        tools: Sequence[BaseTool | ToolSchema] = (),
        policy: CompactionPolicy | None = None,
        summarizer: Summarizer | AsyncSummarizer | None = None,
        counter: TokenCounter | None = None,
        chat_store: BaseChatStore | None = None,
        chat_store_key: str = DEFAULT_CHAT_STORE_KEY,
        session_id: str | None = None,
        compact_instructions: str | None = None,
        reserve_tokens: int = 0,
        token_limit: int | None = None,
        llm: LLM | None = None,
    ) -> BudgetedMemory:
        """Create a memory; resumes the session already stored under ``chat_store_key`` in ``chat_store``.

        Args:
            chat_history: messages to start with (``set`` semantics: they become the live history).
            model: model name (window and counter from the registry); ``openai:gpt-4o`` and
                ``openai/gpt-4o`` forms are accepted.
            max_tokens: prompt budget; overrides the model's window minus its output reserve, never above the window.
            system_prompt: sent first by every ``get()``.
            tools: LlamaIndex tools or schemas the LLM is given; their schemas are counted.
            policy: compaction policy.
            summarizer: sync or async summarizer, e.g. ``LlamaIndexSummarizer(llm)``.
            counter: token counter (default: per-memory, from ``model``).
            chat_store: persistence (default: a fresh ``SimpleChatStore``).
            chat_store_key: the conversation's key.
            session_id: stable session id.
            compact_instructions: text added to every compaction prompt.
            reserve_tokens: tokens the framework adds that this memory cannot see.
            token_limit: ``ChatMemoryBuffer``'s name for ``max_tokens`` (what ``SimpleChatEngine`` and
                ``CondenseQuestionChatEngine`` pass with ``memory_cls=``); give one of the two, or both equal.
            llm: as ``ChatMemoryBuffer`` reads it: without a limit the budget is 75% of its
                ``metadata.context_window``; its ``metadata.model_name``, when registered, picks the counter.

        Raises:
            UsageError: neither ``model`` nor ``max_tokens`` is given and the store holds no session to resume, or
                ``chat_store_key`` ends with the reserved :data:`~llamaindex_ctxbudget.persistence.SNAPSHOT_SUFFIX`.
            UnknownModelError: ``model`` is not registered and ``max_tokens`` is not given (names the nearest).
            InvalidPolicyError: ``max_tokens`` is above the model's context window.
            SystemPromptTooLargeError: the system prompt and tools alone exceed the window.
            InvalidPolicyError: ``token_limit`` and ``max_tokens`` disagree.
        """
        model, max_tokens = _window_args(model, max_tokens, token_limit, llm)
        if model is not None or max_tokens is not None:  # checked even when a stored session is resumed
            resolve_window(model, max_tokens, DEFAULT_REGISTRY)
        memory = cls(
            chat_store=chat_store or SimpleChatStore(),
            chat_store_key=chat_store_key,
            model=model,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            tools=list(tool_schemas(tools)),
            policy=policy,
            compact_instructions=compact_instructions,
            session_id=session_id,
            reserve_tokens=reserve_tokens,
            counter=counter,
            summarizer=summarizer,
        )
        memory._live()  # resume now, so a bad store fails here rather than on first use
        if chat_history is not None:
            memory.set(list(chat_history))
        return memory

    # -- ChatMemoryBuffer's name for the budget ---------------------------------------------------------------
    @property
    def token_limit(self) -> int:
        """The prompt budget in tokens (``ChatMemoryBuffer``'s name for it): the session's ``max_tokens``."""
        return self._live().max_tokens

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def _live(self) -> ContextSession:
        """The session, opened (or resumed from the chat store) on first use."""
        if self._session is None:
            with self._lock:
                if self._session is None:
                    key = snapshot_key(self.chat_store_key)
                    stored = self.chat_store.get_messages(key)
                    chats = self.chat_store.get_messages(self.chat_store_key)
                    self._open(parse_snapshot(stored, key, chats), chats)
        assert self._session is not None  # _open sets it
        return self._session

    def _new_session(self) -> ContextSession:
        return ContextSession(
            model=self.model,
            max_tokens=self.max_tokens,
            counter=self.counter,
            system_prompt=self.system_prompt,
            tools=self.tools,
            policy=self.policy,
            summarizer=self.summarizer,
            session_id=self.session_id,
            compact_instructions=self.compact_instructions,
        )

    def _restored_session(self, snapshot: SessionSnapshot) -> ContextSession:
        session = ContextSession.restore(snapshot, counter=self.counter, summarizer=self.summarizer)
        if self.system_prompt is not None:
            session.system_prompt = self.system_prompt
        if self.tools:
            session.tools = self.tools
        if self.policy is not None:
            session.policy = self.policy
        return session

    def _open(self, snapshot: SessionSnapshot | None, stored: Sequence[ChatMessage]) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._converter.clear()
        self._view.forget()
        self._ids, self._keys, self._pos_of, self._by_key = [], [], {}, {}
        self._rebuildable = {}
        session = self._new_session() if snapshot is None else self._restored_session(snapshot)
        self._unsubscribe = [forward_session_events(session), session.subscribe(self._mark_dirty, "context_compacted")]
        covered = 0 if snapshot is None else len(snapshot.order)
        if len(stored) < covered:
            raise SnapshotError(
                f"chat store key {self.chat_store_key!r} holds {len(stored):,} messages, fewer than the "
                f"{covered:,} its snapshot covers; the store was changed behind this memory's back"
            )
        for chat, message in zip(stored[:covered], session.originals(), strict=True):
            self._converter.remember(chat, message)
            self._hold(chat, message)
        replay = self._convert(stored[covered:])
        session.add(*(message for _, message in replay))
        for chat, message in replay:
            self._hold(chat, message)
        self._session = session

    def _hold(self, chat: ChatMessage, message: Message) -> None:
        """Record that ``message`` (from ``chat``) is now in the session and at the end of the chat store."""
        position = len(self._ids)
        key = content_key(chat)
        self._ids.append(message.id)
        self._keys.append(key)
        self._pos_of[message.id] = position
        self._by_key.setdefault(key, []).append(position)

    def _mark_dirty(self, event: Event) -> None:
        self._dirty = True

    # -- the session -------------------------------------------------------------------------------------------
    @property
    def session(self) -> ContextSession:
        """The underlying session (state, archive, events, snapshots, manual compaction)."""
        return self._live()

    @property
    def state(self) -> ContextState:
        """How full the window is now."""
        return self._live().state

    @property
    def tokenizer_fn(self) -> Callable[[str], list[int]]:
        """What chat engines call to size their own prefix messages: one token per entry, by this memory's counter.

        The text is measured as one system message (framing included), since that is how engines send it.
        """
        counter = self._live().counter

        def tokens(text: str) -> list[int]:
            return [0] * counter.count_message(Message(role="system", content=text, id="prefix"))

        return tokens

    def compact(self, instructions: str | None = None) -> None:
        """Compact now; ``instructions`` focus the summary. Persists the result."""
        with self._lock:
            self._live().compact(instructions)
            self._save_if_dirty()

    async def acompact(self, instructions: str | None = None) -> None:
        """Async :meth:`compact`."""
        await self._live().acompact(instructions)
        await self._asave_if_dirty()

    def bound_tool_output(self, text: str, *, source: str) -> str:
        """Bound one tool output to this memory's per-output limit before it enters any prompt.

        Returns ``text`` when it fits; otherwise a head/tail excerpt whose marker names the archive handle of the
        full text (kept in the session archive and persisted with it).
        """
        session = self._live()
        limit = session.policy.tool_output_limit(session.max_tokens)
        if session.counter.count_text(text) <= limit:
            return text
        with self._lock:
            key = new_message_id("tool-output-")  # digits: its handle, in the excerpt, takes one token count
            handle = session.archive.put_text(key, text, source=source, reason="bounded")
            self._dirty = True
        return excerpt(text, max_tokens=limit, counter=session.counter, handle=handle)

    def record_usage(self, prompt_tokens: int, completion_tokens: int | None = None) -> None:
        """Record the provider-reported usage of the last request (calibrates the counter)."""
        self._live().record_usage(prompt_tokens, completion_tokens)
