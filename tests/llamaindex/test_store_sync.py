"""``set()`` with equal copies, and chat stores that fail: the store and the session never disagree."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import SnapshotError, SnapshotStoreError
from ctxbudget.session.snapshot import SessionSnapshot
from llama_index.core.llms import ChatMessage
from llama_index.core.storage.chat_store import SimpleChatStore

from llamaindex_ctxbudget import SNAPSHOT_SUFFIX, BudgetedMemory, persist_simple_chat_store
from llamaindex_ctxbudget.persistence import load_snapshot, save_snapshot


def _copies(messages: list[ChatMessage]) -> list[ChatMessage]:
    """What a chat store that deserializes (Redis, Postgres) hands back: equal messages, not the same objects."""
    return [ChatMessage.model_validate(m.model_dump()) for m in messages]


def _view(messages: list[ChatMessage]) -> list[tuple[str, str | None]]:
    return [(m.role.value, m.content) for m in messages]


def _tool_turn(turn: int) -> list[ChatMessage]:
    call = {"id": f"c{turn}", "type": "function", "function": {"name": "note", "arguments": '{"n": ' + str(turn) + "}"}}
    return [
        ChatMessage(role="user", content=f"question {turn} " + "detail " * 30),
        ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [call]}),
        ChatMessage(role="tool", content=f"noted {turn} " * 20, additional_kwargs={"tool_call_id": f"c{turn}"}),
        ChatMessage(role="assistant", content=f"answer {turn} " + "reply " * 30),
    ]


def _compacted(store: SimpleChatStore | None = None, key: str = "k") -> BudgetedMemory:
    memory = BudgetedMemory.from_defaults(
        max_tokens=3000,
        policy=CompactionPolicy(keep_recent_messages=4),
        system_prompt="Be brief.",
        chat_store=store or SimpleChatStore(),
        chat_store_key=key,
    )
    for turn in range(30):
        memory.put_messages(_tool_turn(turn))
        memory.get()
    assert memory.session.summary is not None
    assert len(memory.session.history) < len(memory.get_all())
    return memory


# -- set() with equal copies -----------------------------------------------------------------------------------------
def test_set_with_equal_copies_adds_only_the_new_message() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=100_000)
    history = [ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="hello")]
    memory.set(history)
    memory.set([*_copies(history), ChatMessage(role="user", content="next")])
    assert _view(memory.get_all()) == [("user", "hi"), ("assistant", "hello"), ("user", "next")]
    assert _view(memory.get()) == [("user", "hi"), ("assistant", "hello"), ("user", "next")]
    memory.set(_copies(memory.get_all()))  # the same conversation again: nothing changes
    assert len(memory.get_all()) == 3
    assert [m.text for m in memory.session.history] == ["hi", "hello", "next"]


def test_set_with_a_leading_system_message_sends_it_once() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=100_000)
    history = [
        ChatMessage(role="system", content="be terse"),
        ChatMessage(role="user", content="hi"),
        ChatMessage(role="assistant", content="hello"),
    ]
    memory.set(history)
    memory.set([*_copies(history), ChatMessage(role="user", content="next")])
    assert [m.content for m in memory.get_all()] == ["be terse", "hi", "hello", "next"]
    sent = memory.get()
    assert [m.content for m in sent] == ["be terse", "hi", "hello", "next"]
    assert memory.session.summary is None
    memory.set(history)  # the original objects (no "next"): it is dropped from the live history, not duplicated
    assert [m.content for m in memory.get()][:3] == ["be terse", "hi", "hello"]
    assert len(memory.get_all()) == 4


def test_set_after_a_compaction_does_not_bring_the_conversation_back() -> None:
    memory = _compacted()
    stored = memory.get_all()
    live = [m.id for m in memory.session.history]
    sent = _view(memory.get())
    memory.set(_copies(stored))  # the whole conversation, reloaded from a persistent store
    assert memory.get_all() == stored
    assert [m.id for m in memory.session.history] == live
    assert _view(memory.get()) == sent
    memory.set(_copies(stored[-len(live) :]))  # only the recent part: the same live messages
    assert memory.get_all() == stored
    assert [m.id for m in memory.session.history] == live
    assert _view(memory.get()) == sent


def test_set_copies_after_compaction_then_new_message_resumes_exactly() -> None:
    store = SimpleChatStore()
    memory = _compacted(store)
    stored = memory.get_all()
    new = ChatMessage(role="user", content="one more question")
    memory.set([*_copies(stored), new])
    assert memory.get_all() == [*stored, new]
    assert memory.get()[-1].content == "one more question"
    again = BudgetedMemory.from_defaults(max_tokens=3000, chat_store=store, chat_store_key="k")
    assert _view(again.get()) == _view(memory.get())
    assert again.get_all() == memory.get_all()


def test_set_matches_equal_messages_in_order_and_honours_ctxbudget_id() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=100_000)
    memory.put_messages([ChatMessage(role="user", content=t) for t in ("ok", "x", "ok")])
    first, _, last = memory.session.history
    memory.set([*_copies(memory.get_all()), ChatMessage(role="user", content="ok")])  # a third "ok" is new
    assert [m.text for m in memory.session.history] == ["ok", "x", "ok", "ok"]
    assert len(memory.get_all()) == 4
    tagged = ChatMessage(role="user", content="ok", additional_kwargs={"ctxbudget_id": last.id})
    memory.set([tagged])  # the id picks the second "ok", not the first equal one
    assert [m.id for m in memory.session.history] == [last.id]
    assert len(memory.get_all()) == 4
    assert first.id not in {m.id for m in memory.session.history}


# -- a chat store that fails -----------------------------------------------------------------------------------------
class FlakyStore(SimpleChatStore):
    """A chat store with transient errors (a Redis connection reset) on the next ``fail`` writes."""

    fail: int = 0
    skip: int = 0  # writes that still succeed before the failures start
    fail_snapshot: bool = False

    def _maybe_fail(self) -> None:
        if self.fail and self.skip:
            self.skip -= 1
        elif self.fail:
            self.fail -= 1
            raise ConnectionError("redis: connection reset")

    def add_message(self, key: str, message: ChatMessage, idx: int | None = None) -> None:
        self._maybe_fail()
        super().add_message(key, message, idx)

    async def async_add_message(self, key: str, message: ChatMessage, idx: int | None = None) -> None:
        await asyncio.sleep(0)  # a real network round trip: other coroutines run meanwhile
        self._maybe_fail()
        super().add_message(key, message, idx)

    def set_messages(self, key: str, messages: list[ChatMessage]) -> None:
        if self.fail_snapshot:
            self.fail_snapshot = False
            raise ConnectionError("redis: timeout")
        super().set_messages(key, messages)

    async def aset_messages(self, key: str, messages: list[ChatMessage]) -> None:
        await asyncio.sleep(0)
        self.set_messages(key, messages)


def _agree(memory: BudgetedMemory, store: FlakyStore, **kwargs: Any) -> BudgetedMemory:
    """The live history is the store's messages, and a second memory on the store resumes the same state."""
    memory.save()
    resumed = BudgetedMemory.from_defaults(chat_store=store, chat_store_key="k", **kwargs)
    assert _view(resumed.get()) == _view(memory.get())
    assert [m.id for m in resumed.session.history] == [m.id for m in memory.session.history]
    assert resumed.get_all() == memory.get_all()
    return resumed


def test_a_failed_put_changes_nothing_and_a_retry_adds_the_message_once() -> None:
    store = FlakyStore()
    memory = BudgetedMemory.from_defaults(max_tokens=50_000, chat_store=store, chat_store_key="k")
    memory.put(ChatMessage(role="user", content="first"))
    second = ChatMessage(role="user", content="second")
    store.fail = 1
    with pytest.raises(SnapshotStoreError, match="connection reset") as caught:
        memory.put(second)
    assert isinstance(caught.value.__cause__, ConnectionError)
    assert [m.text for m in memory.session.history] == ["first"]
    memory.put(second)  # the caller retries the same object
    assert [m.text for m in memory.session.history] == ["first", "second"]
    assert [m.content for m in memory.get_all()] == ["first", "second"]
    _agree(memory, store, max_tokens=50_000)


def test_a_store_failure_midway_keeps_what_was_stored_in_both() -> None:
    store = FlakyStore()
    memory = BudgetedMemory.from_defaults(max_tokens=50_000, chat_store=store, chat_store_key="k")
    batch = [ChatMessage(role="user", content=t) for t in ("a", "b", "c")]

    store.fail, store.skip = 1, 1
    with pytest.raises(SnapshotStoreError, match="first 1 of 3"):
        memory.put_messages(batch)
    assert [m.text for m in memory.session.history] == ["a"]
    assert [m.content for m in memory.get_all()] == ["a"]
    memory.put_messages(batch[1:])
    assert [m.text for m in memory.session.history] == ["a", "b", "c"]
    _agree(memory, store, max_tokens=50_000)


def test_a_failed_set_keeps_store_and_session_in_step() -> None:
    store = FlakyStore()
    memory = _compacted(store)
    stored = memory.get_all()
    more = [ChatMessage(role="user", content="new one"), ChatMessage(role="assistant", content="new two")]
    store.fail = 1
    with pytest.raises(SnapshotStoreError):
        memory.set([*_copies(stored), *more])
    assert memory.get_all() == stored
    memory.set([*_copies(stored), *more])
    assert memory.get_all() == [*stored, *more]
    assert [m.text for m in memory.session.history][-2:] == ["new one", "new two"]
    _agree(memory, store, max_tokens=3000)


def test_a_failed_snapshot_write_is_typed_and_written_again_later() -> None:
    store = FlakyStore()
    memory = BudgetedMemory.from_defaults(max_tokens=50_000, chat_store=store, chat_store_key="k")
    memory.put(ChatMessage(role="user", content="a"))
    store.fail_snapshot = True
    with pytest.raises(SnapshotStoreError, match="snapshot"):
        memory.save()
    memory.set([ChatMessage(role="user", content="b")])  # replaces the history: writes the snapshot
    resumed = _agree(memory, store, max_tokens=50_000)
    assert [m.text for m in resumed.session.history] == ["b"]


async def test_async_failed_put_and_retry() -> None:
    store = FlakyStore()
    memory = BudgetedMemory.from_defaults(max_tokens=50_000, chat_store=store, chat_store_key="k")
    await memory.aput(ChatMessage(role="user", content="first"))
    second = ChatMessage(role="user", content="second")
    store.fail = 1
    with pytest.raises(SnapshotStoreError):
        await memory.aput(second)
    assert [m.text for m in memory.session.history] == ["first"]
    await memory.aput(second)
    assert [m.content for m in await memory.aget_all()] == ["first", "second"]
    store.fail = 1
    with pytest.raises(SnapshotStoreError):
        await memory.aset([*_copies(await memory.aget_all()), ChatMessage(role="user", content="third")])
    await memory.aset([*_copies(await memory.aget_all()), ChatMessage(role="user", content="third")])
    assert [m.text for m in memory.session.history] == ["first", "second", "third"]
    _agree(memory, store, max_tokens=50_000)


async def test_concurrent_async_puts_keep_store_and_session_in_the_same_order() -> None:
    store = FlakyStore()
    memory = BudgetedMemory.from_defaults(max_tokens=50_000, chat_store=store, chat_store_key="k")
    batches = [[ChatMessage(role="user", content=f"{name}{i}") for i in range(3)] for name in "abcd"]
    await asyncio.gather(*(memory.aput_messages(batch) for batch in batches))
    stored = [m.content for m in await memory.aget_all()]
    assert [m.text for m in memory.session.history] == stored
    for batch in batches:  # each call's messages stay together
        first = stored.index(batch[0].content)
        assert stored[first : first + 3] == [m.content for m in batch]
    memory.compact()
    _agree(memory, store, max_tokens=50_000)


# -- the stored snapshot does not repeat what the chat store holds -----------------------------------------------------
def _stored_snapshot(store: SimpleChatStore, key: str = "k") -> ChatMessage:
    (message,) = store.get_messages(key + SNAPSHOT_SUFFIX)
    return message


def test_stored_snapshot_leaves_out_archived_originals_and_resume_is_exact(tmp_path: Path) -> None:
    store = SimpleChatStore()
    memory = BudgetedMemory.from_defaults(
        max_tokens=3000, system_prompt="Be brief.", chat_store=store, chat_store_key="k"
    )
    memory.put(ChatMessage(role="system", content="Answer in French."))
    for turn in range(40):
        memory.put_messages(_tool_turn(turn))
        if turn % 10 == 3:  # an oversized tool output, bounded on arrival: its original goes to the archive
            memory.put_messages(_tool_turn(1000 + turn)[:2])
            memory.put(
                ChatMessage(role="tool", content="line\n" * 3000, additional_kwargs={"tool_call_id": f"c{1000 + turn}"})
            )
        memory.get()
    memory.save()
    full = memory.session.snapshot()
    assert len(full.archive) > 100
    stored = _stored_snapshot(store)
    slim = SessionSnapshot.from_json(stored.content or "")
    assert len(slim.archive) < len(full.archive) // 4
    # what is kept is only what compaction derived (cleared or bounded versions), never an original
    assert all(e.message is None or "ctxbudget_archived" in e.message.metadata for e in slim.archive)
    assert len(stored.content or "") < len(full.to_json()) // 3
    assert load_snapshot(store, "k") == full

    persist_simple_chat_store(store, tmp_path / "store.json")  # a real JSON round trip of both keys
    reloaded = SimpleChatStore.from_persist_path(str(tmp_path / "store.json"))
    for source in (store, reloaded):
        resumed = BudgetedMemory.from_defaults(max_tokens=3000, chat_store=source, chat_store_key="k")
        assert resumed.session.snapshot() == full  # archive, order, history, summary: all exactly as they were
        assert _view(resumed.get()) == _view(memory.get())
        assert _view(resumed.get_all()) == _view(memory.get_all())
        assert [m.id for m in resumed.session.originals()] == [m.id for m in memory.session.originals()]

    save_snapshot(store, "k", full)  # a full snapshot (the earlier format) still resumes the same
    resumed = BudgetedMemory.from_defaults(max_tokens=3000, chat_store=store, chat_store_key="k")
    assert resumed.session.snapshot() == full


def test_stored_snapshot_grows_with_the_live_history_not_the_whole_conversation() -> None:
    store = SimpleChatStore()
    memory = BudgetedMemory.from_defaults(max_tokens=3000, chat_store=store, chat_store_key="k")
    sizes = []
    for turn in range(120):
        memory.put_messages(_tool_turn(turn))
        memory.get()
        if turn in (39, 119):
            memory.save()
            sizes.append((len(_stored_snapshot(store).content or ""), len(memory.session.snapshot().to_json())))
    (slim_40, full_40), (slim_120, full_120) = sizes
    assert full_120 > 2.5 * full_40  # the full snapshot holds every original ever archived
    assert slim_120 < full_120 / 3
    assert slim_120 - slim_40 < (full_120 - full_40) / 3  # per turn, a fraction of what the full one grows
    resumed = BudgetedMemory.from_defaults(max_tokens=3000, chat_store=store, chat_store_key="k")
    assert resumed.session.snapshot() == memory.session.snapshot()


def test_a_store_that_lost_archived_messages_fails_loudly() -> None:
    store = SimpleChatStore()
    memory = _compacted(store)
    memory.save()
    store.set_messages("k", store.get_messages("k")[:5])
    with pytest.raises(SnapshotError, match="holds 5 messages"):
        BudgetedMemory.from_defaults(chat_store=store, chat_store_key="k")
