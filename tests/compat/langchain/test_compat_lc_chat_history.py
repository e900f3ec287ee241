"""Ports of LangChain's chat-history tests, run on the framework's histories and on ``BudgetedChatMessageHistory``.

Upstream (langchain-core 1.8.3): ``libs/core/tests/unit_tests/chat_history/test_chat_history.py`` (the
``BaseChatMessageHistory`` defaults, with a history implementing only ``add_message`` or only ``add_messages``)
and ``libs/core/tests/unit_tests/runnables/test_history.py`` (``RunnableWithMessageHistory``; upstream's fake
``ChatMessageHistory`` is ``InMemoryChatMessageHistory``, and a store of histories is compared by their messages).
On ``ctxbudget`` every history is wrapped in ``BudgetedChatMessageHistory`` (a window large enough that nothing is
compacted, so the budget never changes what is stored).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain_core.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.runnables.utils import ConfigurableFieldSpec

from langchain_ctxbudget import BudgetedChatMessageHistory

from .conftest import impls

pytestmark = pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")


def _history(impl: str) -> Callable[[BaseChatMessageHistory], BaseChatMessageHistory]:
    if impl == "langchain":
        return lambda inner: inner
    return lambda inner: BudgetedChatMessageHistory(inner, max_tokens=100_000)


def _in_memory() -> InMemoryChatMessageHistory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return InMemoryChatMessageHistory()


# -- chat_history/test_chat_history.py ---------------------------------------------------------------------------


@pytest.mark.parametrize("impl", impls())
def test_add_message_implementation_only(impl: str) -> None:
    class SampleChatHistory(BaseChatMessageHistory):
        def __init__(self, *, store: list[BaseMessage]) -> None:
            self.store = store

        def add_message(self, message: BaseMessage) -> None:
            self.store.append(message)

        def clear(self) -> None:
            raise NotImplementedError

    store: list[BaseMessage] = []
    chat_history = _history(impl)(SampleChatHistory(store=store))
    chat_history.add_message(HumanMessage(content="Hello"))
    assert len(store) == 1
    assert store[0] == HumanMessage(content="Hello")
    chat_history.add_message(HumanMessage(content="World"))
    assert len(store) == 2
    assert store[1] == HumanMessage(content="World")

    chat_history.add_messages([HumanMessage(content="Hello"), HumanMessage(content="World")])
    assert len(store) == 4
    assert store[2] == HumanMessage(content="Hello")
    assert store[3] == HumanMessage(content="World")


@pytest.mark.parametrize("impl", impls())
def test_bulk_message_implementation_only(impl: str) -> None:
    store: list[BaseMessage] = []

    class BulkAddHistory(BaseChatMessageHistory):
        def __init__(self, *, store: list[BaseMessage]) -> None:
            self.store = store

        def add_messages(self, message: Sequence[BaseMessage]) -> None:
            self.store.extend(message)

        def clear(self) -> None:
            raise NotImplementedError

    chat_history = _history(impl)(BulkAddHistory(store=store))
    chat_history.add_message(HumanMessage(content="Hello"))
    assert len(store) == 1
    assert store[0] == HumanMessage(content="Hello")
    chat_history.add_message(HumanMessage(content="World"))
    assert len(store) == 2
    assert store[1] == HumanMessage(content="World")

    chat_history.add_messages([HumanMessage(content="Hello"), HumanMessage(content="World")])
    assert len(store) == 4
    assert store[2] == HumanMessage(content="Hello")
    assert store[3] == HumanMessage(content="World")


@pytest.mark.parametrize("impl", impls())
async def test_async_interface(impl: str) -> None:
    class BulkAddHistory(BaseChatMessageHistory):
        def __init__(self) -> None:
            self.messages: list[BaseMessage] = []  # type: ignore[misc]

        def add_messages(self, message: Sequence[BaseMessage]) -> None:
            self.messages.extend(message)

        def clear(self) -> None:
            self.messages.clear()

    chat_history = _history(impl)(BulkAddHistory())
    await chat_history.aadd_messages([HumanMessage(content="Hello"), HumanMessage(content="World")])
    assert await chat_history.aget_messages() == [HumanMessage(content="Hello"), HumanMessage(content="World")]
    await chat_history.aadd_messages([HumanMessage(content="!")])
    assert await chat_history.aget_messages() == [
        HumanMessage(content="Hello"),
        HumanMessage(content="World"),
        HumanMessage(content="!"),
    ]
    await chat_history.aclear()
    assert await chat_history.aget_messages() == []


# -- runnables/test_history.py -----------------------------------------------------------------------------------


@pytest.mark.parametrize("impl", impls())
def test_interfaces(impl: str) -> None:
    history = _history(impl)(_in_memory())
    history.add_message(SystemMessage(content="system"))
    history.add_user_message("human 1")
    history.add_ai_message("ai")
    history.add_message(HumanMessage(content="human 2"))
    assert str(history) == "System: system\nHuman: human 1\nAI: ai\nHuman: human 2"


def _get_get_session_history(impl: str) -> Callable[..., BaseChatMessageHistory]:
    chat_history_store: dict[str, BaseChatMessageHistory] = {}

    def get_session_history(session_id: str, **kwargs: Any) -> BaseChatMessageHistory:
        if session_id not in chat_history_store:
            chat_history_store[session_id] = _history(impl)(_in_memory())
        return chat_history_store[session_id]

    return get_session_history


def _said(messages: Sequence[BaseMessage], *more: str) -> str:
    return "you said: " + "\n".join([str(m.content) for m in messages if isinstance(m, HumanMessage)] + list(more))


def _said_all(messages: Sequence[BaseMessage]) -> str:
    return _said(messages)


@pytest.mark.parametrize("impl", impls())
def test_input_messages(impl: str) -> None:
    runnable = RunnableLambda(_said_all)
    with_history = RunnableWithMessageHistory(runnable, _get_get_session_history(impl))
    config: RunnableConfig = {"configurable": {"session_id": "1"}}
    output = with_history.invoke([HumanMessage(content="hello")], config)
    assert output == "you said: hello"
    output = with_history.invoke([HumanMessage(content="good bye")], config)
    assert output == "you said: hello\ngood bye"


@pytest.mark.parametrize("impl", impls())
def test_input_dict(impl: str) -> None:
    runnable = RunnableLambda(lambda input: _said(input["messages"]))
    with_history = RunnableWithMessageHistory(runnable, _get_get_session_history(impl), input_messages_key="messages")
    config: RunnableConfig = {"configurable": {"session_id": "2"}}
    output = with_history.invoke({"messages": [HumanMessage(content="hello")]}, config)
    assert output == "you said: hello"
    output = with_history.invoke({"messages": [HumanMessage(content="good bye")]}, config)
    assert output == "you said: hello\ngood bye"


@pytest.mark.parametrize("impl", impls())
def test_input_dict_with_history_key(impl: str) -> None:
    runnable = RunnableLambda(lambda input: _said(input["history"], input["input"]))
    with_history = RunnableWithMessageHistory(
        runnable, _get_get_session_history(impl), input_messages_key="input", history_messages_key="history"
    )
    config: RunnableConfig = {"configurable": {"session_id": "3"}}
    output = with_history.invoke({"input": "hello"}, config)
    assert output == "you said: hello"
    output = with_history.invoke({"input": "good bye"}, config)
    assert output == "you said: hello\ngood bye"


@pytest.mark.parametrize("impl", impls())
def test_output_message(impl: str) -> None:
    runnable = RunnableLambda(lambda input: AIMessage(content=_said(input["history"], input["input"])))
    with_history = RunnableWithMessageHistory(
        runnable, _get_get_session_history(impl), input_messages_key="input", history_messages_key="history"
    )
    config: RunnableConfig = {"configurable": {"session_id": "4"}}
    output = with_history.invoke({"input": "hello"}, config)
    assert output == AIMessage(content="you said: hello")
    output = with_history.invoke({"input": "good bye"}, config)
    assert output == AIMessage(content="you said: hello\ngood bye")


@pytest.mark.parametrize("impl", impls())
def test_output_messages(impl: str) -> None:
    runnable = RunnableLambda(lambda input: [AIMessage(content=_said(input["history"], input["input"]))])
    with_history = RunnableWithMessageHistory(
        runnable, _get_get_session_history(impl), input_messages_key="input", history_messages_key="history"
    )
    config: RunnableConfig = {"configurable": {"session_id": "5"}}
    output = with_history.invoke({"input": "hello"}, config)
    assert output == [AIMessage(content="you said: hello")]
    output = with_history.invoke({"input": "good bye"}, config)
    assert output == [AIMessage(content="you said: hello\ngood bye")]


@pytest.mark.parametrize("impl", impls())
def test_output_dict(impl: str) -> None:
    runnable = RunnableLambda(lambda input: {"output": [AIMessage(content=_said(input["history"], input["input"]))]})
    with_history = RunnableWithMessageHistory(
        runnable,
        _get_get_session_history(impl),
        input_messages_key="input",
        history_messages_key="history",
        output_messages_key="output",
    )
    config: RunnableConfig = {"configurable": {"session_id": "6"}}
    output = with_history.invoke({"input": "hello"}, config)
    assert output == {"output": [AIMessage(content="you said: hello")]}
    output = with_history.invoke({"input": "good bye"}, config)
    assert output == {"output": [AIMessage(content="you said: hello\ngood bye")]}


@pytest.mark.parametrize("impl", impls())
async def test_output_dict_async(impl: str) -> None:
    """Upstream's async twin of ``test_output_dict`` (``ainvoke``)."""
    runnable = RunnableLambda(lambda input: {"output": [AIMessage(content=_said(input["history"], input["input"]))]})
    with_history = RunnableWithMessageHistory(
        runnable,
        _get_get_session_history(impl),
        input_messages_key="input",
        history_messages_key="history",
        output_messages_key="output",
    )
    config: RunnableConfig = {"configurable": {"session_id": "6a"}}
    output = await with_history.ainvoke({"input": "hello"}, config)
    assert output == {"output": [AIMessage(content="you said: hello")]}
    output = await with_history.ainvoke({"input": "good bye"}, config)
    assert output == {"output": [AIMessage(content="you said: hello\ngood bye")]}


@pytest.mark.parametrize("impl", impls())
def test_using_custom_config_specs(impl: str) -> None:
    def _fake_llm(input: dict[str, Any]) -> list[BaseMessage]:
        return [AIMessage(content=_said(input["messages"]))]

    runnable = RunnableLambda(_fake_llm)
    store: dict[tuple[str, str], BaseChatMessageHistory] = {}

    def get_session_history(user_id: str, conversation_id: str) -> BaseChatMessageHistory:
        if (user_id, conversation_id) not in store:
            store[(user_id, conversation_id)] = _history(impl)(_in_memory())
        return store[(user_id, conversation_id)]

    with_message_history = RunnableWithMessageHistory(
        runnable,
        get_session_history=get_session_history,
        input_messages_key="messages",
        history_messages_key="history",
        history_factory_config=[
            ConfigurableFieldSpec(
                id="user_id", annotation=str, name="User ID", description="Unique user.", default="", is_shared=True
            ),
            ConfigurableFieldSpec(
                id="conversation_id",
                annotation=str,
                name="Conversation ID",
                description="Unique conversation.",
                default=None,
                is_shared=True,
            ),
        ],
    )

    def stored() -> dict[tuple[str, str], list[BaseMessage]]:
        return {key: history.messages for key, history in store.items()}

    result = with_message_history.invoke(
        {"messages": [HumanMessage(content="hello")]}, {"configurable": {"user_id": "user1", "conversation_id": "1"}}
    )
    assert result == [AIMessage(content="you said: hello")]
    assert stored() == {("user1", "1"): [HumanMessage(content="hello"), AIMessage(content="you said: hello")]}

    result = with_message_history.invoke(
        {"messages": [HumanMessage(content="goodbye")]}, {"configurable": {"user_id": "user1", "conversation_id": "1"}}
    )
    assert result == [AIMessage(content="you said: goodbye")]
    assert stored() == {
        ("user1", "1"): [
            HumanMessage(content="hello"),
            AIMessage(content="you said: hello"),
            HumanMessage(content="goodbye"),
            AIMessage(content="you said: goodbye"),
        ]
    }

    result = with_message_history.invoke(
        {"messages": [HumanMessage(content="meow")]}, {"configurable": {"user_id": "user2", "conversation_id": "1"}}
    )
    assert result == [AIMessage(content="you said: meow")]
    assert stored() == {
        ("user1", "1"): [
            HumanMessage(content="hello"),
            AIMessage(content="you said: hello"),
            HumanMessage(content="goodbye"),
            AIMessage(content="you said: goodbye"),
        ],
        ("user2", "1"): [HumanMessage(content="meow"), AIMessage(content="you said: meow")],
    }
