"""How a :class:`~llamaindex_ctxbudget.memory.BudgetedMemory` lives in a LlamaIndex chat store.

Two keys per conversation:

* ``chat_store_key`` holds every original ``ChatMessage`` ever put, in order, append-only: exactly what
  ``memory.get_all()`` returns and what any other LlamaIndex tool reading the store expects to find there. A put
  costs one ``add_message``.
* ``chat_store_key + SNAPSHOT_SUFFIX`` holds one message whose text is the ctxbudget session snapshot JSON (summary,
  archive, live history, add order). It is rewritten only when the session changes in a way replaying cannot
  reproduce: a compaction, or a ``set`` that replaced the history.

Resuming = restore the snapshot, then replay the originals it does not cover yet (``stored[len(snapshot.order):]``).
"""

from __future__ import annotations

import json
from pathlib import Path

from ctxbudget.errors import SnapshotError
from ctxbudget.snapshot import SessionSnapshot
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.storage.chat_store import BaseChatStore, SimpleChatStore

__all__ = [
    "SNAPSHOT_SUFFIX",
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


def snapshot_key(chat_store_key: str) -> str:
    """The chat-store key that holds the snapshot of the conversation under ``chat_store_key``."""
    return chat_store_key + SNAPSHOT_SUFFIX


def snapshot_message(snapshot: SessionSnapshot) -> ChatMessage:
    """Wrap a snapshot as the single ``ChatMessage`` stored under :func:`snapshot_key`."""
    return ChatMessage(
        role="system", content=snapshot.to_json(), additional_kwargs={_MARK: True, "messages": len(snapshot.order)}
    )


def parse_snapshot(stored: list[ChatMessage], key: str) -> SessionSnapshot | None:
    """The snapshot held in ``stored`` (the messages under ``key``), or ``None`` when there is none.

    Raises:
        SnapshotError: the key holds something that is not a ctxbudget snapshot.
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
    return SessionSnapshot.from_json(last.content)


def load_snapshot(store: BaseChatStore, chat_store_key: str) -> SessionSnapshot | None:
    """Read the snapshot stored for ``chat_store_key`` (``None`` when there is none)."""
    key = snapshot_key(chat_store_key)
    return parse_snapshot(store.get_messages(key), key)


def save_snapshot(store: BaseChatStore, chat_store_key: str, snapshot: SessionSnapshot) -> None:
    """Replace the snapshot stored for ``chat_store_key``."""
    store.set_messages(snapshot_key(chat_store_key), [snapshot_message(snapshot)])


def persist_simple_chat_store(store: SimpleChatStore, path: str | Path) -> None:
    """Write ``store`` to ``path`` in the format ``SimpleChatStore.from_persist_path`` reads.

    ``SimpleChatStore.persist`` fails under pydantic >= 2.12 (its wrap serializer passes ``info`` where pydantic
    now expects an index key), whatever the messages. This writes the same JSON by dumping each message directly.
    """
    data = {
        "store": {
            key: [message.model_dump(mode="json") for message in messages] for key, messages in store.store.items()
        },
        "class_name": store.class_name(),
    }
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
