"""``BudgetedMemory``'s persistence: the session snapshot in the chat store, and ChatMemoryBuffer's serialization.

A mixin of :class:`~llamaindex_ctxbudget.memory.BudgetedMemory` (one concept per module): what it reads of the
memory is declared below for the type checker only.

* The snapshot is written to the chat store after compaction or ``set`` (:meth:`save` forces it), without the
  archived originals the chat store's own messages rebuild.
* ``to_dict`` / ``to_string`` / ``from_dict`` / ``from_string`` and pickling save the snapshot first, so the copy
  resumes exactly this session; ``counter`` and ``summarizer`` are live objects and are passed again.
"""

from __future__ import annotations

import asyncio
import json
import pickle
from typing import TYPE_CHECKING, Any, TypeVar

from ctxbudget.archive import HANDLE_PREFIX, ArchiveEntry
from ctxbudget.errors import InvalidPolicyError, SnapshotStoreError
from ctxbudget.messages import Message
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import BaseModel
from llama_index.core.storage.chat_store.loading import load_chat_store

from .persistence import StoreRef, rebuilt_message, snapshot_key, snapshot_message

if TYPE_CHECKING:
    import threading

    from ctxbudget import ContextSession
    from llama_index.core.storage.chat_store import BaseChatStore

    from .convert import ChatMessageConverter

__all__ = ["MemoryPersistence"]

_Self = TypeVar("_Self", bound="MemoryPersistence")


class MemoryPersistence:
    """Snapshot persistence and serialization for a memory (mixed into ``BudgetedMemory``)."""

    if TYPE_CHECKING:  # provided by BudgetedMemory
        chat_store: BaseChatStore
        chat_store_key: str
        _dirty: bool
        _lock: threading.RLock
        _converter: ChatMessageConverter
        _pos_of: dict[str, int]
        _rebuildable: dict[str, bool]

        def __init__(self, **data: Any) -> None: ...
        def _live(self) -> ContextSession: ...
        def _write_lock(self) -> asyncio.Lock: ...
        def model_dump(self, **kwargs: Any) -> dict[str, Any]: ...
        @classmethod
        def class_name(cls) -> str: ...

    # -- serialization (ChatMemoryBuffer's surface) -------------------------------------------------------------
    def to_dict(self, **kwargs: Any) -> dict[str, Any]:
        """The memory as a dict (configuration and chat store, which holds the originals and the snapshot).

        The snapshot is written to the chat store first, so :meth:`from_dict` resumes exactly this session.
        ``counter`` and ``summarizer`` are live objects: pass them again to :meth:`from_dict`.
        """
        self.save()
        data: dict[str, Any] = self.model_dump(mode="json", **kwargs)
        data["class_name"] = self.class_name()
        return data

    def to_string(self) -> str:
        """:meth:`to_dict` as JSON (what ``ChatMemoryBuffer.to_string`` gives)."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls: type[_Self], data: dict[str, Any], **kwargs: Any) -> _Self:
        """Rebuild a memory from :meth:`to_dict`'s output; ``kwargs`` (``counter=``, ``summarizer=``) are added.

        Raises:
            InvalidPolicyError: ``data`` is not a dict.
        """
        if not isinstance(data, dict):
            raise InvalidPolicyError(f"data: expected a dict, got {type(data).__name__}", field="data")
        fields = {k: v for k, v in data.items() if k != "class_name"}
        store = fields.get("chat_store")
        if isinstance(store, dict):
            fields["chat_store"] = load_chat_store(store)
        memory = cls(**{**fields, **kwargs})
        memory._live()  # resume now, so a bad store fails here
        return memory

    @classmethod
    def from_string(cls: type[_Self], json_str: str, **kwargs: Any) -> _Self:
        """Rebuild a memory from :meth:`to_string`'s output (see :meth:`from_dict`)."""
        return cls.from_dict(json.loads(json_str), **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the configuration and chat store (snapshot saved first); live objects are rebuilt on load."""
        self.save()
        if not isinstance(self, BaseModel):  # always true: mixed into BudgetedMemory (narrows the type)
            raise TypeError(f"{type(self).__name__}: MemoryPersistence is mixed into a pydantic model only")
        state = dict(BaseModel.__getstate__(self))
        kept = {}
        for key, value in state["__dict__"].items():
            try:
                pickle.dumps(value)
            except Exception:  # a live counter or summarizer that cannot be pickled is left out, as LlamaIndex does
                continue
            kept[key] = value
        state["__dict__"] = kept
        state["__pydantic_private__"] = {}
        return state

    # -- persistence -------------------------------------------------------------------------------------------
    def save(self) -> None:
        """Write the session snapshot to the chat store now (done automatically after compaction or ``set``)."""
        with self._lock:
            self._dirty = True
            self._save_if_dirty()

    def _snapshot_message(self) -> ChatMessage:
        """The session snapshot to store, without the archive entries the chat store's messages rebuild."""
        snapshot = self._live().snapshot()
        kept: list[ArchiveEntry] = []
        refs: list[StoreRef] = []
        for index, entry in enumerate(snapshot.archive):
            if entry.message is not None and self._from_store(entry, entry.message, snapshot.order):
                refs.append((index, snapshot.order[entry.message.id], entry.reason))
            else:
                kept.append(entry)
        if refs:
            snapshot = snapshot.model_copy(update={"archive": tuple(kept)})
        return snapshot_message(snapshot, from_store=refs)

    def _from_store(self, entry: ArchiveEntry, message: Message, order: dict[str, int]) -> bool:
        if entry.text is not None or entry.source is not None:
            return False
        if entry.handle != f"{HANDLE_PREFIX}{message.id}.{entry.reason}":
            return False
        position = order.get(message.id)
        if position is None or self._pos_of.get(message.id) != position:
            return False
        rebuildable = self._rebuildable.get(entry.handle)
        if rebuildable is None:
            chat = self._converter.original(message.id)
            rebuildable = self._rebuildable[entry.handle] = chat is not None and _rebuilds(chat, message)
        return rebuildable

    def _snapshot_failed(self, exc: Exception) -> SnapshotStoreError:
        return SnapshotStoreError(
            f"chat store {type(self.chat_store).__name__}: writing the snapshot to key "
            f"{snapshot_key(self.chat_store_key)!r} failed ({type(exc).__name__}: {exc}); it is written again on "
            "the next change or save()"
        )

    def _save_if_dirty(self) -> None:
        if self._dirty:
            message = self._snapshot_message()
            try:
                self.chat_store.set_messages(snapshot_key(self.chat_store_key), [message])
            except Exception as exc:
                raise self._snapshot_failed(exc) from exc
            self._dirty = False

    async def _asave_if_dirty(self) -> None:
        if self._dirty:
            async with self._write_lock():
                await self._asave_locked()

    async def _asave_locked(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            self._dirty = False
            message = self._snapshot_message()
        try:
            await self.chat_store.aset_messages(snapshot_key(self.chat_store_key), [message])
        except Exception as exc:
            self._dirty = True
            raise self._snapshot_failed(exc) from exc


def _rebuilds(chat: ChatMessage, message: Message) -> bool:
    """Whether ``chat``, as a chat store hands it back, rebuilds exactly ``message``."""
    try:
        stored = ChatMessage.model_validate_json(chat.model_dump_json())
        return rebuilt_message(stored, message.id) == message
    except Exception:  # whatever does not survive a round trip is kept in the snapshot
        return False
