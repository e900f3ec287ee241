"""Issue 16, windows through LlamaIndex: BudgetedMemory.from_defaults takes its window from the model, never a guess."""

from __future__ import annotations

import pytest
from ctxbudget.errors import InvalidPolicyError, SystemPromptTooLargeError, UnknownModelError, UsageError
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import ChatMessage
from llama_index.core.storage.chat_store import SimpleChatStore

from llamaindex_ctxbudget import BudgetedMemory, FakeReply, StrictFakeLLM


def test_from_defaults_without_model_or_max_tokens_is_refused() -> None:
    with pytest.raises(UsageError) as info:  # was a silent 128,000-token window whatever the LLM
        BudgetedMemory.from_defaults(system_prompt="Be terse.")
    assert info.value.field == "max_tokens"


def test_a_stored_session_resumes_without_repeating_the_window() -> None:
    store = SimpleChatStore()
    first = BudgetedMemory.from_defaults(max_tokens=2_000, chat_store=store, chat_store_key="k")
    first.put(ChatMessage(role="user", content="hello"))
    first.save()
    assert BudgetedMemory.from_defaults(chat_store=store, chat_store_key="k").session.max_tokens == 2_000


def test_a_provider_prefixed_model_gives_the_window_and_runs_in_a_chat_engine() -> None:
    memory = BudgetedMemory.from_defaults(model="openai:gpt-4o-mini")
    assert memory.session.max_tokens == 128_000 - 16_384
    assert memory.session.counter.exact is True  # type: ignore[attr-defined]
    llm = StrictFakeLLM(context_window=128_000, script=[FakeReply(text="hi")])
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    assert str(engine.chat("hello")) == "hi"


def test_max_tokens_above_the_models_window_is_refused() -> None:
    with pytest.raises(InvalidPolicyError, match="128,000") as info:
        BudgetedMemory.from_defaults(model="gpt-4o", max_tokens=200_000)
    assert info.value.field == "max_tokens"


def test_a_misspelt_model_is_caught_even_when_a_stored_session_is_resumed() -> None:
    store = SimpleChatStore()
    BudgetedMemory.from_defaults(max_tokens=2_000, chat_store=store, chat_store_key="k").save()
    with pytest.raises(UnknownModelError) as info:
        BudgetedMemory.from_defaults(model="gpt4o", chat_store=store, chat_store_key="k")
    assert info.value.suggestions[0] == "gpt-4o"


def test_an_unknown_model_with_a_window_is_counted_as_an_estimate() -> None:
    memory = BudgetedMemory.from_defaults(model="llama3", max_tokens=8_000)
    assert memory.session.counter.exact is False  # type: ignore[attr-defined]
    assert memory.session.counter.name.startswith("estimate:")


def test_a_system_prompt_over_the_window_is_refused_with_both_numbers() -> None:
    with pytest.raises(SystemPromptTooLargeError) as info:
        BudgetedMemory.from_defaults(max_tokens=50, system_prompt="Always cite the policy section. " * 30)
    assert info.value.max_tokens == 50
    assert info.value.prompt_tokens > 50
    assert f"{info.value.prompt_tokens:,} tokens" in str(info.value)
