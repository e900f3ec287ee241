"""``BudgetedMemory``'s history as it is handed out and forgotten: ``get`` (in budget), ``get_all`` and ``reset``.

A mixin of :class:`~llamaindex_ctxbudget.memory.BudgetedMemory` (one concept per module); what it reads of the
memory is declared below for the type checker only.

``get()`` builds the session's request (compacting first when it is over the threshold) and renders it as
``ChatMessage`` objects, only what is new converted; ``get_all()`` reads the chat store, which holds every original
as given; both, and ``areset()``, take ``Memory``'s ``status`` (``ACTIVE``: still sent, ``ARCHIVED``: compacted away).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ctxbudget import BuiltRequest
from ctxbudget.errors import InvalidPolicyError
from ctxbudget.messages import Message
from llama_index.core.base.llms.types import ChatMessage

from .convert import ChatMessageConverter, ContentKey, is_system_key
from .errors import overflow_as_value_error
from .persistence import check_conversation_key, snapshot_key

if TYPE_CHECKING:
    import asyncio
    import threading

    from ctxbudget import ContextSession
    from llama_index.core.storage.chat_store import BaseChatStore

    from ._render import RenderedView

__all__ = ["MemoryHistory"]


def _check_count(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidPolicyError(f"{field}: must be an int >= 0, got {value!r}", field=field)
    return value


class MemoryHistory:
    """Reading and forgetting the history (mixed into ``BudgetedMemory``)."""

    if TYPE_CHECKING:  # provided by BudgetedMemory
        chat_store: BaseChatStore
        chat_store_key: str
        reserve_tokens: int
        _lock: threading.RLock
        _converter: ChatMessageConverter
        _view: RenderedView
        _ids: list[str]
        _keys: list[ContentKey]

        def _live(self) -> ContextSession: ...
        def _open(self, snapshot: None, stored: Sequence[ChatMessage]) -> None: ...
        def _save_if_dirty(self) -> None: ...
        async def _asave_if_dirty(self) -> None: ...
        def _convert(self, chats: Sequence[ChatMessage]) -> list[tuple[ChatMessage, Message]]: ...
        def _added(self, pairs: Sequence[tuple[ChatMessage, Message]]) -> None: ...
        def _write_lock(self) -> asyncio.Lock: ...

    # -- reading -----------------------------------------------------------------------------------------------
    def get(self, input: str | None = None, initial_token_count: int = 0, **kwargs: Any) -> list[ChatMessage]:
        """The history to send: valid for strict providers and within budget, compacting first when needed.

        The summary of compacted turns is a system message right after the system prompt, as
        ``ChatSummaryMemoryBuffer`` sends its summary. The last message is a copy that stays the same object while
        it is the last one: an agent formats its state into it in place once per run (``state_prompt``), and every
        later ``get()`` of the run hands that edited copy back, counted at its edited size.

        Args:
            input: the pending user input (unused; accepted for the ``BaseMemory`` signature).
            initial_token_count: tokens the caller will add around the result (its own prompt); room is made.
            **kwargs: ignored, as ``ChatMemoryBuffer`` does.

        Raises:
            LlamaIndexContextOverflowError: even after compaction the request is past the hard stop (figures
                included); a ``ValueError`` too, as ``ChatMemoryBuffer`` raises.
            InvalidPolicyError: ``initial_token_count`` is not an int >= 0.
        """
        reserve = self.reserve_tokens + _check_count(initial_token_count, "initial_token_count")
        with self._lock, overflow_as_value_error():
            session = self._live()
            request = session.build_request(reserve_tokens=reserve)
            edited = self._view.edit_tokens(request, session.counter)
            if edited:
                request = session.build_request(reserve_tokens=reserve + edited)
            self._save_if_dirty()
            return self._render(request)

    async def aget(
        self,
        input: str | None = None,
        initial_token_count: int = 0,
        **kwargs: Any,
    ) -> list[ChatMessage]:
        """Async :meth:`get`: compaction uses the summarizer's ``asummarize`` when it has one."""
        reserve = self.reserve_tokens + _check_count(initial_token_count, "initial_token_count")
        with overflow_as_value_error():
            session = self._live()
            request = await session.abuild_request(reserve_tokens=reserve)
            with self._lock:
                edited = self._view.edit_tokens(request, session.counter)
            if edited:
                request = await session.abuild_request(reserve_tokens=reserve + edited)
        await self._asave_if_dirty()
        with self._lock:
            return self._render(request)

    def _render(self, request: BuiltRequest) -> list[ChatMessage]:
        return self._view.render(request.messages, self._converter)

    def get_all(self, status: object = None) -> list[ChatMessage]:
        """Every message ever put or set, as given, in order (nothing compaction did is visible here).

        Args:
            status: as ``Memory.get_all`` takes it: ``MessageStatus.ACTIVE`` (or ``"active"``) gives only the
                messages still live in the window, ``ARCHIVED`` only those compacted away; ``None``: all.

        Raises:
            InvalidPolicyError: ``status`` is none of those.
            UsageError: ``chat_store_key`` is another conversation's snapshot key (a memory built without
                ``__init__``, as ``model_validate`` does, is refused here and by every other use).
        """
        key = check_conversation_key(self.chat_store_key)
        return self._with_status(list(self.chat_store.get_messages(key)), status)

    async def aget_all(self, status: object = None) -> list[ChatMessage]:
        """Async :meth:`get_all`."""
        key = check_conversation_key(self.chat_store_key)
        return self._with_status(list(await self.chat_store.aget_messages(key)), status)

    def _with_status(self, chats: list[ChatMessage], status: object) -> list[ChatMessage]:
        wanted = _status(status)
        if wanted is None:
            return chats
        with self._lock:
            active = self._active(len(chats))
        return [chat for chat, live in zip(chats, active, strict=False) if live == (wanted == "active")]

    def _active(self, count: int) -> list[bool]:
        """Whether each of the first ``count`` stored messages is still sent: live, or a held system message."""
        live = {m.id for m in self._live().history}
        return [self._ids[i] in live or is_system_key(self._keys[i]) for i in range(min(count, len(self._ids)))]

    def reset(self) -> None:
        """Forget the conversation: the store's keys are deleted and a fresh session starts."""
        with self._lock:
            snapshot = snapshot_key(self.chat_store_key)  # refuses a reserved key before anything is deleted
            self.chat_store.delete_messages(self.chat_store_key)
            self.chat_store.delete_messages(snapshot)
            self._open(None, [])

    async def areset(self, status: object = None) -> None:
        """Async :meth:`reset`, or with ``status`` (as ``Memory.areset`` takes it) forget only those messages.

        ``ARCHIVED`` forgets the messages compacted away, with the summary and archive made from them; the messages
        still sent (live, and system messages) start a fresh conversation, in order. ``ACTIVE`` forgets the
        messages still sent. Nothing compacted away yet: that is everything, as :meth:`reset`.

        Raises:
            InvalidPolicyError: ``status`` is not ``ACTIVE``/``ARCHIVED`` (or their values) or ``None``; or it is
                ``ACTIVE`` while messages are archived, which would leave them without the conversation their
                summary is about (forget everything with ``areset()``, or the archived ones with ``ARCHIVED``).
        """
        wanted = _status(status)
        check_conversation_key(self.chat_store_key)
        async with self._write_lock():
            kept: list[ChatMessage] = []
            if wanted is not None:
                chats = list(await self.chat_store.aget_messages(self.chat_store_key))
                with self._lock:
                    active = self._active(len(chats))
                kept = [chat for chat, live in zip(chats, active, strict=False) if live != (wanted == "active")]
                if wanted == "active" and kept:
                    raise InvalidPolicyError(
                        f"status: areset(status=ACTIVE) would keep {len(kept):,} archived message(s) without the "
                        "conversation they were compacted from; call areset() to forget everything, or "
                        "areset(status=ARCHIVED) to forget only the archived ones",
                        field="status",
                    )
                if wanted == "archived" and len(kept) == len(chats):
                    return  # nothing is archived
            # The snapshot goes first: should the store fail after it, reopening replays every message it holds.
            await self.chat_store.adelete_messages(snapshot_key(self.chat_store_key))
            if kept:  # one call replaces the conversation with the messages kept: none is ever only in memory
                await self.chat_store.aset_messages(self.chat_store_key, kept)
            else:
                await self.chat_store.adelete_messages(self.chat_store_key)
            with self._lock:
                self._open(None, [])
                self._added(self._convert(kept))


def _status(status: object) -> str | None:
    """``"active"``, ``"archived"`` or ``None`` from a ``MessageStatus`` or its value; else a typed error."""
    wanted = getattr(status, "value", status)
    if wanted is not None and wanted not in ("active", "archived"):
        raise InvalidPolicyError(f"status: expected 'active', 'archived' or None, got {status!r}", field="status")
    return wanted
