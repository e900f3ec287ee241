"""A second memory object (or process) on the same chat store resumes the same session."""

from __future__ import annotations

from pathlib import Path

import pytest
from ctxbudget.errors import SnapshotError, SnapshotFormatError
from llama_index.core.llms import ChatMessage
from llama_index.core.storage.chat_store import SimpleChatStore

from llamaindex_ctxbudget import SNAPSHOT_SUFFIX, BudgetedMemory, persist_simple_chat_store


def _turns(memory: BudgetedMemory, start: int, stop: int) -> list[ChatMessage]:
    put = []
    for turn in range(start, stop):
        for message in (
            ChatMessage(role="user", content=f"turn {turn}: remember the number {turn * 13}"),
            ChatMessage(
                role="assistant",
                content="",
                additional_kwargs={
                    "tool_calls": [
                        {"id": f"c{turn}", "type": "function", "function": {"name": "note", "arguments": "{}"}}
                    ]
                },
            ),
            ChatMessage(role="tool", content=f"noted {turn} " * 20, additional_kwargs={"tool_call_id": f"c{turn}"}),
            ChatMessage(role="assistant", content=f"ok, {turn * 13} noted"),
        ):
            memory.put(message)
            put.append(message)
        memory.get()
    return put


def _contents(messages: list[ChatMessage]) -> list[tuple[str, str | None, object]]:
    return [(m.role.value, m.content, m.additional_kwargs.get("tool_call_id")) for m in messages]


def test_two_memories_share_a_store_and_a_json_file(tmp_path: Path) -> None:
    store = SimpleChatStore()
    first = BudgetedMemory.from_defaults(
        max_tokens=1500, system_prompt="Be brief.", chat_store=store, chat_store_key="alice"
    )
    put = _turns(first, 0, 60)
    assert first.session.summary is not None
    expected = first.get()

    second = BudgetedMemory.from_defaults(max_tokens=1500, chat_store=store, chat_store_key="alice")
    assert second.session.session_id == first.session.session_id
    assert second.session.summary == first.session.summary
    assert _contents(second.get()) == _contents(expected)
    assert second.get_all() == put
    assert second.session.system_prompt == "Be brief."

    path = tmp_path / "chat_store.json"
    persist_simple_chat_store(store, path)  # SimpleChatStore.persist is broken under pydantic >= 2.12
    reloaded = SimpleChatStore.from_persist_path(str(path))
    third = BudgetedMemory.from_defaults(max_tokens=1500, chat_store=reloaded, chat_store_key="alice")
    assert _contents(third.get()) == _contents(expected)
    assert _contents(third.get_all()) == _contents(put)
    assert len(third.session.originals()) == len(put)

    more = _turns(third, 60, 80)  # the resumed memory carries on, compacting again
    assert _contents(third.get_all()) == _contents(put + more)
    fourth = BudgetedMemory.from_defaults(max_tokens=1500, chat_store=reloaded, chat_store_key="alice")
    assert _contents(fourth.get()) == _contents(third.get())


def test_messages_after_the_last_snapshot_are_replayed() -> None:
    store = SimpleChatStore()
    first = BudgetedMemory.from_defaults(max_tokens=1500, chat_store=store)
    _turns(first, 0, 40)
    first.put(ChatMessage(role="user", content="one more thing"))  # not in any snapshot yet
    second = BudgetedMemory.from_defaults(max_tokens=1500, chat_store=store)
    assert second.get()[-1].content == "one more thing"
    assert len(second.get_all()) == 40 * 4 + 1


def test_plain_llamaindex_history_is_adopted() -> None:
    store = SimpleChatStore()
    store.set_messages("bob", [ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="hey")])
    memory = BudgetedMemory.from_defaults(max_tokens=8_000, chat_store=store, chat_store_key="bob")
    assert [m.content for m in memory.get()] == ["hi", "hey"]


def test_reset_clears_both_keys() -> None:
    store = SimpleChatStore()
    memory = BudgetedMemory.from_defaults(max_tokens=1500, chat_store=store, chat_store_key="k")
    _turns(memory, 0, 40)
    assert store.get_messages("k" + SNAPSHOT_SUFFIX)
    memory.reset()
    assert store.get_messages("k") == []
    assert store.get_messages("k" + SNAPSHOT_SUFFIX) == []
    assert memory.get() == []


def test_corrupt_or_foreign_snapshot_key_fails_loudly() -> None:
    store = SimpleChatStore()
    store.set_messages("k" + SNAPSHOT_SUFFIX, [ChatMessage(role="user", content="not a snapshot")])
    with pytest.raises(SnapshotError, match="'k::ctxbudget-snapshot'"):
        BudgetedMemory.from_defaults(chat_store=store, chat_store_key="k")
    store.set_messages(
        "k" + SNAPSHOT_SUFFIX,
        [
            ChatMessage(
                role="system",
                content='{"schema": "ctxbudget.session.v1"}',
                additional_kwargs={"ctxbudget_snapshot": True},
            )
        ],
    )
    with pytest.raises(SnapshotFormatError, match="snapshot"):
        BudgetedMemory.from_defaults(chat_store=store, chat_store_key="k")


def test_store_shorter_than_snapshot_fails_loudly() -> None:
    store = SimpleChatStore()
    memory = BudgetedMemory.from_defaults(max_tokens=1500, chat_store=store, chat_store_key="k")
    _turns(memory, 0, 40)
    store.set_messages("k", store.get_messages("k")[:3])
    with pytest.raises(SnapshotError, match="holds 3 messages"):
        BudgetedMemory.from_defaults(chat_store=store, chat_store_key="k")
