"""A conversation key may not end with ``SNAPSHOT_SUFFIX``: that name holds another conversation's snapshot.

``BudgetedMemory`` keeps conversation ``k``'s snapshot (archived originals included) under ``k + SNAPSHOT_SUFFIX`` in
the same chat store. A memory opened on such a key is refused with a ``UsageError`` naming the key and the suffix,
by every constructor, before it reads or writes anything; the conversation whose snapshot it is stays intact.
"""

from __future__ import annotations

import pickle

import pytest
from ctxbudget.errors import UsageError
from llama_index.core.llms import ChatMessage
from llama_index.core.storage.chat_store import SimpleChatStore
from pydantic import ValidationError

from llamaindex_ctxbudget import SNAPSHOT_SUFFIX, BudgetedMemory
from llamaindex_ctxbudget.persistence import load_snapshot

RESERVED = "alice" + SNAPSHOT_SUFFIX
REFUSED = f"chat_store_key '{RESERVED}' ends with '{SNAPSHOT_SUFFIX}', which is reserved"


def _alice() -> tuple[SimpleChatStore, list[ChatMessage]]:
    """A store holding alice's conversation, compacted, with her archived secrets in the snapshot."""
    store = SimpleChatStore()
    alice = BudgetedMemory.from_defaults(max_tokens=3000, chat_store=store, chat_store_key="alice")
    for turn in range(30):
        alice.put(ChatMessage(role="user", content=f"turn {turn}: my password is hunter{turn} " + "pad " * 40))
        alice.put(ChatMessage(role="assistant", content="noted " * 20))
    alice.get()
    assert alice.session.archive.entries()
    assert store.get_keys() == ["alice", RESERVED]
    return store, alice.get_all()


def _untouched(store: SimpleChatStore, alice: list[ChatMessage]) -> None:
    assert store.get_keys() == ["alice", RESERVED]
    reopened = BudgetedMemory.from_defaults(max_tokens=3000, chat_store=store, chat_store_key="alice")
    assert reopened.get_all() == alice
    assert reopened.session.archive.entries()


def test_from_defaults_refuses_a_snapshot_key() -> None:
    store, alice = _alice()
    with pytest.raises(UsageError, match=REFUSED) as raised:
        BudgetedMemory.from_defaults(max_tokens=200_000, chat_store=store, chat_store_key=RESERVED)
    assert raised.value.field == "chat_store_key"
    assert "the conversation 'alice'" in str(raised.value)
    _untouched(store, alice)


def test_the_constructor_refuses_a_snapshot_key() -> None:
    store, alice = _alice()
    with pytest.raises(UsageError, match=REFUSED):
        BudgetedMemory(chat_store=store, chat_store_key=RESERVED, max_tokens=200_000)
    _untouched(store, alice)


def test_from_dict_and_from_string_refuse_a_snapshot_key() -> None:
    store, alice = _alice()
    data = BudgetedMemory.from_defaults(max_tokens=3000, chat_store=store, chat_store_key="alice").to_dict()
    with pytest.raises(UsageError, match=REFUSED):
        BudgetedMemory.from_dict({**data, "chat_store_key": RESERVED})
    forged = BudgetedMemory.from_defaults(max_tokens=3000, chat_store=store, chat_store_key="alice").to_string()
    with pytest.raises(UsageError, match=REFUSED):
        BudgetedMemory.from_string(forged.replace('"chat_store_key": "alice"', f'"chat_store_key": "{RESERVED}"'))
    _untouched(store, alice)


def test_model_validate_refuses_a_snapshot_key_inside_pydantics_validation_error() -> None:
    store, alice = _alice()
    with pytest.raises(ValidationError, match=REFUSED) as raised:
        BudgetedMemory.model_validate({"chat_store": store, "chat_store_key": RESERVED, "max_tokens": 200_000})
    assert isinstance(raised.value.errors()[0]["ctx"]["error"], UsageError)
    _untouched(store, alice)


def test_a_memory_built_by_model_construct_is_refused_by_every_use() -> None:
    """``model_construct`` validates nothing: such a memory reads and writes nothing either."""
    store, alice = _alice()
    memory = BudgetedMemory.model_construct(chat_store=store, chat_store_key=RESERVED, max_tokens=200_000)
    for use in (
        memory.get,
        memory.get_all,
        memory.reset,
        memory.save,
        lambda: memory.put(ChatMessage(role="user", content="hello")),
    ):
        with pytest.raises(UsageError, match=REFUSED):
            use()
    _untouched(store, alice)


def test_an_app_opening_every_key_of_the_store_is_refused_on_the_snapshot_key_only() -> None:
    store, alice = _alice()
    opened, refused = [], []
    for key in store.get_keys():
        try:
            opened.append(BudgetedMemory.from_defaults(max_tokens=3000, chat_store=store, chat_store_key=key))
        except UsageError:
            refused.append(key)
    assert [memory.chat_store_key for memory in opened] == ["alice"]
    assert refused == [RESERVED]
    _untouched(store, alice)


@pytest.mark.parametrize("key", ["bob", RESERVED + "-2", SNAPSHOT_SUFFIX + "::x", SNAPSHOT_SUFFIX.strip(":")])
def test_keys_that_only_contain_the_suffix_elsewhere_are_ordinary_conversations(key: str) -> None:
    store, alice = _alice()
    memory = BudgetedMemory.from_defaults(max_tokens=3000, chat_store=store, chat_store_key=key)
    memory.put(ChatMessage(role="user", content="hello"))
    memory.save()
    reopened = pickle.loads(pickle.dumps(memory))
    assert [m.content for m in reopened.get_all()] == ["hello"]
    assert BudgetedMemory.from_defaults(max_tokens=3000, chat_store=store, chat_store_key="alice").get_all() == alice


def test_the_snapshot_helpers_refuse_a_snapshot_key() -> None:
    store, _ = _alice()
    with pytest.raises(UsageError, match=REFUSED):
        load_snapshot(store, RESERVED)
