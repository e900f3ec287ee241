"""Messages by status, as LlamaIndex's ``Memory`` reads and resets them: active (still sent) or archived."""

from __future__ import annotations

import pytest
from ctxbudget.errors import InvalidPolicyError
from llama_index.core.llms import ChatMessage
from llama_index.core.storage.chat_store import SimpleChatStore
from llama_index.core.storage.chat_store.base_db import MessageStatus

from llamaindex_ctxbudget import BudgetedMemory
from llamaindex_ctxbudget.persistence import SNAPSHOT_SUFFIX


def _compacted(store: SimpleChatStore | None = None) -> BudgetedMemory:
    """A memory whose oldest turns were compacted away, with a system message put first."""
    memory = BudgetedMemory.from_defaults(token_limit=2_000, chat_store=store or SimpleChatStore())
    memory.put(ChatMessage(role="system", content="Answer in one line."))
    for turn in range(40):
        memory.put(ChatMessage(role="user", content=f"question {turn}: " + "details " * 20))
        memory.put(ChatMessage(role="assistant", content=f"answer {turn}: " + "because " * 20))
        memory.get()
    return memory


def _texts(chats: list[ChatMessage]) -> list[str]:
    return [str(chat.content) for chat in chats]


def test_a_system_message_still_sent_is_active_and_the_compacted_turns_are_archived() -> None:
    memory = _compacted()
    everything = memory.get_all()
    active, archived = memory.get_all(status=MessageStatus.ACTIVE), memory.get_all(status="archived")
    assert active[0].content == "Answer in one line."  # always sent, in the leading system block
    assert archived[:1] == [memory.get_all()[1]]  # the first question, compacted away
    assert len(active) + len(archived) == len(everything) == 81
    assert sorted(_texts(active) + _texts(archived)) == sorted(_texts(everything))


async def test_areset_archived_forgets_only_what_was_compacted_away() -> None:
    store = SimpleChatStore()
    memory = _compacted(store)
    active = _texts(memory.get_all(status=MessageStatus.ACTIVE))
    assert str(memory.get()[1].content).startswith("[Context Summary]")  # the archived turns' summary is sent
    await memory.areset(status=MessageStatus.ARCHIVED)
    assert _texts(memory.get_all()) == active  # in order, as given
    assert memory.get_all(status=MessageStatus.ARCHIVED) == []
    sent = memory.get()
    assert _texts(sent) == active  # the summary went with the messages it was made from
    memory.put(ChatMessage(role="user", content="one more"))
    reopened = BudgetedMemory.from_defaults(token_limit=2_000, chat_store=store)
    assert _texts(reopened.get_all()) == [*active, "one more"]
    assert _texts(reopened.get()) == _texts(memory.get())


async def test_areset_archived_with_nothing_archived_changes_nothing() -> None:
    memory = BudgetedMemory.from_defaults(token_limit=2_000)
    memory.put_messages([ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="hello")])
    await memory.areset(status=MessageStatus.ARCHIVED)
    assert _texts(memory.get_all()) == ["hi", "hello"]
    assert _texts(memory.get()) == ["hi", "hello"]


async def test_areset_active_is_refused_while_archived_messages_depend_on_the_conversation() -> None:
    memory = _compacted()
    before = _texts(memory.get_all())
    with pytest.raises(InvalidPolicyError, match=r"would keep \d+ archived message") as info:
        await memory.areset(status=MessageStatus.ACTIVE)
    assert info.value.field == "status"
    assert _texts(memory.get_all()) == before  # nothing was forgotten


async def test_areset_active_with_nothing_archived_forgets_everything() -> None:
    memory = BudgetedMemory.from_defaults(token_limit=2_000)
    memory.put(ChatMessage(role="user", content="hi"))
    await memory.areset(status=MessageStatus.ACTIVE)
    assert memory.get() == []
    assert memory.get_all() == []


@pytest.mark.parametrize("status", ["deleted", 3])
async def test_an_unknown_status_is_a_typed_error_and_nothing_is_forgotten(status: object) -> None:
    memory = BudgetedMemory.from_defaults(token_limit=2_000)
    memory.put(ChatMessage(role="user", content="hi"))
    with pytest.raises(InvalidPolicyError, match="status: expected 'active', 'archived' or None") as info:
        await memory.areset(status=status)
    assert info.value.field == "status"
    assert _texts(memory.get_all()) == ["hi"]


class _FailingStore(SimpleChatStore):
    """A chat store that fails to replace a conversation (as a store losing its connection would)."""

    fail: bool = False

    async def aset_messages(self, key: str, messages: list[ChatMessage]) -> None:
        if self.fail and not key.endswith(SNAPSHOT_SUFFIX):
            raise ConnectionError("store unreachable")
        await super().aset_messages(key, messages)


async def test_a_store_failing_during_areset_archived_loses_nothing() -> None:
    store = _FailingStore()
    memory = _compacted(store)
    everything = _texts(memory.get_all())
    store.fail = True
    with pytest.raises(ConnectionError, match="store unreachable"):
        await memory.areset(status=MessageStatus.ARCHIVED)
    assert _texts(memory.get_all()) == everything
    store.fail = False
    reopened = BudgetedMemory.from_defaults(token_limit=2_000, chat_store=store)
    assert _texts(reopened.get_all()) == everything  # every message is still in the store, and read back
