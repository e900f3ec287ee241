"""``BudgetedMemory``'s writes: ``put``/``set`` (sync and async) into the chat store and the session, in step.

A mixin of :class:`~llamaindex_ctxbudget.memory.BudgetedMemory` (one concept per module); what it reads of the
memory is declared below for the type checker only.

The chat store is written first, the session second, in the same order, under one lock: a store write that fails
leaves the session as it was (a retry is not a duplicate), and the store always holds at least what the session (and
so any snapshot) covers, in the session's add order. ``set`` matches what it is given against what is held (the
same objects, an honoured ``ctxbudget_id``, then equal copies in order) and adds only what is new.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ctxbudget.errors import SnapshotStoreError
from ctxbudget.messages import Message, new_message_id
from llama_index.core.base.llms.types import ChatMessage

from .convert import ChatMessageConverter, ContentKey, content_key, given_id, is_system_key

if TYPE_CHECKING:
    import threading
    import weakref

    from ctxbudget import ContextSession
    from llama_index.core.storage.chat_store import BaseChatStore

__all__ = ["MemoryWrites"]

_Positions = set[int]


class MemoryWrites:
    """Appending and setting messages (mixed into ``BudgetedMemory``)."""

    if TYPE_CHECKING:  # provided by BudgetedMemory
        chat_store: BaseChatStore
        chat_store_key: str
        _dirty: bool
        _lock: threading.RLock
        _converter: ChatMessageConverter
        _ids: list[str]
        _keys: list[ContentKey]
        _pos_of: dict[str, int]
        _by_key: dict[ContentKey, list[int]]
        _alocks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]

        def _live(self) -> ContextSession: ...
        def _hold(self, chat: ChatMessage, message: Message) -> None: ...
        def _save_if_dirty(self) -> None: ...
        async def _asave_locked(self) -> None: ...

    # -- writing -----------------------------------------------------------------------------------------------
    # The chat store is written first, the session second, in the same order, under one lock: a store write that
    # fails leaves the session as it was (a retry is not a duplicate), and the store always holds at least what
    # the session (and so any snapshot) covers, in the session's add order.
    def _convert(self, chats: Sequence[ChatMessage]) -> list[tuple[ChatMessage, Message]]:
        """Convert ``chats`` to new session messages, with ids the session does not hold yet. Changes no state."""
        pairs: list[tuple[ChatMessage, Message]] = []
        taken: set[str] = set()
        for chat in chats:
            message = self._converter.known(chat)
            source = chat
            if message is not None and (message.id in self._pos_of or message.id in taken):
                source, message = chat.model_copy(), None  # the same object put again: a second, distinct message
            if message is None:
                given = given_id(source.additional_kwargs)
                fresh = given is not None and (given in self._pos_of or given in taken)
                message = self._converter.to_message(source, message_id=new_message_id() if fresh else None)
            if message.role == "system" and message.metadata.get("pinned") is not True:
                message = message.model_copy(update={"metadata": {**message.metadata, "pinned": True}})
                self._converter.remember(source, message)
            taken.add(message.id)
            pairs.append((chat, message))
        return pairs

    def _store_failed(self, exc: Exception, done: int, total: int) -> SnapshotStoreError:
        kept = "nothing was added" if not done else f"the first {done:,} of {total:,} messages were added"
        return SnapshotStoreError(
            f"chat store {type(self.chat_store).__name__}: adding a message to key {self.chat_store_key!r} failed "
            f"({type(exc).__name__}: {exc}); {kept}, store and session agree, the call can be retried"
        )

    def _write(self, pairs: list[tuple[ChatMessage, Message]], *, commit: Callable[[], None] | None = None) -> None:
        """Append ``pairs`` to the store, then to the session (``commit`` instead, when all were stored)."""
        done = 0
        try:
            for chat, _ in pairs:
                self.chat_store.add_message(self.chat_store_key, chat)
                done += 1
        except SnapshotStoreError:
            self._added(pairs[:done])
            raise
        except Exception as exc:
            self._added(pairs[:done])
            raise self._store_failed(exc, done, len(pairs)) from exc
        if commit is None:
            self._added(pairs)
        else:
            commit()
            self._held(pairs)

    async def _awrite(
        self, pairs: list[tuple[ChatMessage, Message]], *, commit: Callable[[], None] | None = None
    ) -> None:
        """Async :meth:`_write`; the caller holds this loop's write lock."""
        done = 0
        try:
            for chat, _ in pairs:
                await self.chat_store.async_add_message(self.chat_store_key, chat)
                done += 1
        except SnapshotStoreError:
            with self._lock:
                self._added(pairs[:done])
            raise
        except Exception as exc:
            with self._lock:
                self._added(pairs[:done])
            raise self._store_failed(exc, done, len(pairs)) from exc
        with self._lock:
            if commit is None:
                self._added(pairs)
            else:
                commit()
                self._held(pairs)

    def _added(self, pairs: Sequence[tuple[ChatMessage, Message]]) -> None:
        if pairs:
            self._live().add(*(message for _, message in pairs))
            self._held(pairs)

    def _held(self, pairs: Sequence[tuple[ChatMessage, Message]]) -> None:
        for chat, message in pairs:
            self._hold(chat, message)

    def _write_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._lock:
            lock = self._alocks.get(loop)
            if lock is None:
                lock = self._alocks[loop] = asyncio.Lock()
            return lock

    def put(self, message: ChatMessage) -> None:
        """Append one message (O(its size)); system messages are pinned, oversized tool outputs bounded.

        Raises:
            SnapshotStoreError: the chat store failed; the message was not added (retrying is safe).
        """
        self.put_messages([message])

    async def aput(self, message: ChatMessage) -> None:
        """Async :meth:`put`."""
        await self.aput_messages([message])

    def put_messages(self, messages: list[ChatMessage]) -> None:
        """Append messages in order (to the chat store first, then to the session).

        Raises:
            SnapshotStoreError: the chat store failed; the messages before the failing one were added to both.
        """
        with self._lock:
            self._live()
            self._write(self._convert(messages))

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        """Async :meth:`put_messages`; concurrent calls on one event loop are applied one after the other."""
        async with self._write_lock():
            with self._lock:
                self._live()
                pairs = self._convert(messages)
            await self._awrite(pairs)

    def set(self, messages: list[ChatMessage]) -> None:
        """Make ``messages`` the live history (what a framework's ``chat_history`` says the conversation is).

        Messages this memory already holds, as the same objects or as equal copies (a chat store that deserializes
        returns copies), keep their (possibly compacted) live form; messages already compacted away are not brought
        back; system messages already held stay in the leading system block. Only new ones are added and appended
        to the store. History that disappears is archived.

        Raises:
            SnapshotStoreError: the chat store failed; the live history is unchanged except for the new messages
                that were stored before the failure (appended, as ``put`` would).
        """
        with self._lock:
            wanted, new, replaced = self._plan(messages)
            self._write(new, commit=lambda: self._live().sync(wanted))
            if replaced:
                self._dirty = True
            self._save_if_dirty()

    async def aset(self, messages: list[ChatMessage]) -> None:
        """Async :meth:`set`."""
        async with self._write_lock():
            with self._lock:
                wanted, new, replaced = self._plan(messages)
            await self._awrite(new, commit=lambda: self._live().sync(wanted))
            if replaced:
                self._dirty = True
            await self._asave_locked()

    def _plan(self, chats: Sequence[ChatMessage]) -> tuple[list[Message], list[tuple[ChatMessage, Message]], bool]:
        """What :meth:`set` does, without changing any state.

        Returns the history to sync, the new messages (in the order the session adds them: new system messages
        first) and whether the live history is replaced rather than extended.
        """
        session = self._live()
        history = session.history
        live = {m.id: m for m in history}
        cursor = -1
        used: set[int] = set()
        body: list[Message | int] = []  # live messages, and indexes into new_body
        new_system: list[ChatMessage] = []
        new_body: list[ChatMessage] = []
        for chat in chats:
            key = content_key(chat)
            position = self._match(chat, key, cursor, used)
            if position is None:
                if is_system_key(key):
                    new_system.append(chat)
                else:
                    body.append(len(new_body))
                    new_body.append(chat)
                continue
            used.add(position)
            if is_system_key(self._keys[position]):
                continue  # held in the leading system block for good
            cursor = position
            held = live.get(self._ids[position])
            if held is not None:
                body.append(held)
            # else: already compacted away and archived; the summary stands for it
        new = self._convert([*new_system, *new_body])
        added = [message for _, message in new[len(new_system) :]]
        wanted = [
            *(message for _, message in new[: len(new_system)]),
            *(added[item] if isinstance(item, int) else item for item in body),
        ]
        kept = [item.id for item in body[: len(history)] if not isinstance(item, int)]
        extends = len(kept) == len(history) and kept == [m.id for m in history]
        return wanted, new, not extends

    def _match(self, chat: ChatMessage, key: ContentKey, cursor: int, used: _Positions) -> int | None:
        """The position of the held message ``chat`` stands for, if any (each held message is matched once).

        The same object, then an honoured ``ctxbudget_id`` with the same content, then the first equal message
        after the previous match (system messages: the first equal one not matched yet).
        """
        known = self._converter.known(chat)
        if known is not None:
            position = self._pos_of.get(known.id)
            if position is not None and position not in used:
                return position
        given = given_id(chat.additional_kwargs)
        if given is not None:
            position = self._pos_of.get(given)
            if position is not None and position not in used and self._keys[position] == key:
                return position
        positions = self._by_key.get(key)
        if not positions:
            return None
        index = 0 if is_system_key(key) else bisect_right(positions, cursor)
        while index < len(positions) and positions[index] in used:
            index += 1
        return positions[index] if index < len(positions) else None
