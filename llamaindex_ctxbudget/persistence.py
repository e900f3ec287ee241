"""How a :class:`~llamaindex_ctxbudget.memory.BudgetedMemory` lives in a LlamaIndex chat store.

Two keys per conversation:

* ``chat_store_key`` holds every original ``ChatMessage`` ever put, in order, append-only: exactly what
  ``memory.get_all()`` returns and what any other LlamaIndex tool reading the store expects to find there. A put
  costs one ``add_message``.
* ``chat_store_key + SNAPSHOT_SUFFIX`` holds one message whose text is the ctxbudget session snapshot JSON (summary,
  archive, live history, add order). It is rewritten only when the session changes in a way replaying cannot
  reproduce: a compaction, or a ``set`` that replaced the history. Archive entries that are exactly the conversion
  of a message the first key already holds (the originals compaction moved out) are not written again: the snapshot
  message lists them (archive index, message position, reason) and they are rebuilt from the first key on load. What
  is still written for the whole conversation is the add order (one id per message) and the versions compaction
  derived (cleared or bounded tool results), not the originals.

Resuming = restore the snapshot, then replay the originals it does not cover yet (``stored[len(snapshot.order):]``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxbudget.archive import HANDLE_PREFIX, ArchiveEntry
from ctxbudget.errors import SnapshotError, SnapshotFormatError, UsageError
from ctxbudget.messages import Message
from ctxbudget.session._args import check_type
from ctxbudget.session.snapshot import SessionSnapshot
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.storage.chat_store import BaseChatStore, SimpleChatStore

from .convert import from_chat_message

__all__ = [
    "SNAPSHOT_SUFFIX",
    "check_conversation_key",
    "load_snapshot",
    "parse_snapshot",
    "persist_simple_chat_store",
    "save_snapshot",
    "snapshot_key",
    "snapshot_message",
]

SNAPSHOT_SUFFIX = "::ctxbudget-snapshot"
"""Appended to ``chat_store_key`` to name the key that holds the session snapshot."""

_MARK = "ctxbudget_snapshot"
_FROM_STORE = "ctxbudget_archive_from_store"

StoreRef = tuple[int, int, str]
"""An archive entry left out of a stored snapshot: (its index in the archive, its message's position in the
conversation's messages, archive reason). The message id is the one the snapshot's ``order`` gives that position."""


def check_conversation_key(chat_store_key: str) -> str:
    """``chat_store_key``, checked to be usable as a conversation's key: it must not end with :data:`SNAPSHOT_SUFFIX`.

    Such a key is (or may become) another conversation's snapshot key: a memory opened on it would read that
    conversation's snapshot, archived originals included, as its history, and its writes would break it.

    Raises:
        UsageError: ``chat_store_key`` ends with the reserved suffix (the key and the suffix are named).
    """
    if chat_store_key.endswith(SNAPSHOT_SUFFIX):
        owner = chat_store_key.removesuffix(SNAPSHOT_SUFFIX)
        raise UsageError(
            f"chat_store_key {chat_store_key!r} ends with {SNAPSHOT_SUFFIX!r}, which is reserved: that key holds the "
            f"session snapshot of the conversation {owner!r}; choose a key that does not end with {SNAPSHOT_SUFFIX!r}",
            field="chat_store_key",
        )
    return chat_store_key


def snapshot_key(chat_store_key: str) -> str:
    """The chat-store key that holds the snapshot of the conversation under ``chat_store_key``.

    Raises:
        UsageError: ``chat_store_key`` is itself a snapshot key (see :func:`check_conversation_key`).
    """
    return check_conversation_key(chat_store_key) + SNAPSHOT_SUFFIX


def snapshot_message(snapshot: SessionSnapshot, *, from_store: Sequence[StoreRef] = ()) -> ChatMessage:
    """Wrap a snapshot as the single ``ChatMessage`` stored under :func:`snapshot_key`.

    Args:
        snapshot: the snapshot, without the archive entries ``from_store`` lists.
        from_store: archive entries left out because :func:`rebuilt_message` rebuilds them from the chat store.
    """
    kwargs: dict[str, Any] = {_MARK: True, "messages": len(snapshot.order)}
    if from_store:
        kwargs[_FROM_STORE] = [list(ref) for ref in from_store]
    return ChatMessage(role="system", content=snapshot.to_json(), additional_kwargs=kwargs)


def rebuilt_message(chat: ChatMessage, message_id: str) -> Message:
    """The session message a memory made of ``chat`` when it was added (system messages are pinned)."""
    message = from_chat_message(chat, message_id=message_id)
    if message.role == "system" and message.metadata.get("pinned") is not True:
        message = message.model_copy(update={"metadata": {**message.metadata, "pinned": True}})
    return message


def _refs(raw: object, key: str) -> list[StoreRef]:
    if raw is None:
        return []
    refs: list[StoreRef] = []
    if isinstance(raw, (list, tuple)):
        for item in raw:
            if (
                isinstance(item, (list, tuple))
                and len(item) == 3
                and isinstance(item[0], int)
                and isinstance(item[1], int)
                and isinstance(item[2], str)
            ):
                refs.append((item[0], item[1], item[2]))
            else:
                break
        else:
            return sorted(refs)
    raise SnapshotFormatError(f"chat store key {key!r}: {_FROM_STORE} is malformed", field=_FROM_STORE)


def parse_snapshot(
    stored: list[ChatMessage], key: str, chats: Sequence[ChatMessage] | None = None
) -> SessionSnapshot | None:
    """The snapshot held in ``stored`` (the messages under ``key``), or ``None`` when there is none.

    Args:
        stored: the messages under the snapshot key.
        key: that key (named in errors).
        chats: the conversation's messages (under ``chat_store_key``); needed when the snapshot left archive
            entries to be rebuilt from them.

    Raises:
        SnapshotError: the key holds something that is not a ctxbudget snapshot, or the conversation's messages
            are missing or too few to rebuild it.
        SnapshotFormatError: the snapshot JSON does not validate (the field is named).
    """
    if not stored:
        return None
    last = stored[-1]
    if len(stored) != 1 or not last.additional_kwargs.get(_MARK) or not last.content:
        raise SnapshotError(
            f"chat store key {key!r}: expected 1 ctxbudget snapshot message, found {len(stored)} message(s) "
            "that are not one; is another memory using this key?"
        )
    snapshot = SessionSnapshot.from_json(last.content)
    refs = _refs(last.additional_kwargs.get(_FROM_STORE), key)
    if not refs:
        return snapshot
    if chats is None:
        raise SnapshotError(f"chat store key {key!r}: the snapshot is rebuilt from the conversation's messages")
    if len(chats) < len(snapshot.order):
        chat_key = key.removesuffix(SNAPSHOT_SUFFIX)
        raise SnapshotError(
            f"chat store key {chat_key!r} holds {len(chats):,} messages, fewer than the {len(snapshot.order):,} "
            "its snapshot covers; the store was changed behind this memory's back"
        )
    ids = {position: message_id for message_id, position in snapshot.order.items()}
    kept = iter(snapshot.archive)
    archive: list[ArchiveEntry] = []
    for index, position, reason in refs:
        message_id = ids.get(position)
        if message_id is None or position >= len(chats):
            raise SnapshotFormatError(
                f"chat store key {key!r}: {_FROM_STORE}: position {position} is not in the snapshot's order",
                field=_FROM_STORE,
            )
        while len(archive) < index and (entry := next(kept, None)) is not None:
            archive.append(entry)
        try:
            entry = ArchiveEntry(
                handle=f"{HANDLE_PREFIX}{message_id}.{reason}",
                reason=reason,
                message=rebuilt_message(chats[position], message_id),
            )
        except ValueError as exc:
            raise SnapshotFormatError(f"chat store key {key!r}: {_FROM_STORE}: {exc}", field=_FROM_STORE) from exc
        archive.append(entry)
    archive.extend(kept)
    return snapshot.model_copy(update={"archive": tuple(archive)})


def load_snapshot(store: BaseChatStore, chat_store_key: str) -> SessionSnapshot | None:
    """Read the snapshot stored for ``chat_store_key`` (``None`` when there is none), archive complete."""
    key = snapshot_key(chat_store_key)
    stored = store.get_messages(key)
    return parse_snapshot(stored, key, store.get_messages(chat_store_key) if stored else None)


def save_snapshot(store: BaseChatStore, chat_store_key: str, snapshot: SessionSnapshot) -> None:
    """Replace the snapshot stored for ``chat_store_key``."""
    store.set_messages(snapshot_key(chat_store_key), [snapshot_message(snapshot)])


def persist_simple_chat_store(store: SimpleChatStore, path: str | Path) -> None:
    """Write ``store`` to ``path`` in the format ``SimpleChatStore.from_persist_path`` reads.

    ``SimpleChatStore.persist`` fails under pydantic >= 2.12 (its wrap serializer passes ``info`` where pydantic
    now expects an index key), whatever the messages. This writes the same JSON by dumping each message directly.

    Raises:
        UsageError: ``store`` is not a ``SimpleChatStore``.
    """
    check_type("store", store, SimpleChatStore, UsageError)
    data = {
        "store": {
            key: [message.model_dump(mode="json") for message in messages] for key, messages in store.store.items()
        },
        "class_name": store.class_name(),
    }
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
