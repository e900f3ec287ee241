"""The per-model-call path with nothing to compact: what it builds, counts and sends (behaviour, not speed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.messages import Message, ToolCall
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.session import ContextSession
from langchain.agents import create_agent
from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import ContextBudgetMiddleware, StrictFakeChatModel, ToolLoop, from_langchain
from langchain_ctxbudget.events import EventForwarder

from .conftest import agent_with, lookup, search


class CountingCounter(TiktokenCounter):
    """Exact counts, and how many times each message id was counted."""

    def __init__(self) -> None:
        super().__init__()
        self.counted: dict[str, int] = {}

    def count_message(self, message: Message) -> int:
        self.counted[message.id] = self.counted.get(message.id, 0) + 1
        return super().count_message(message)


def _sent(model: StrictFakeChatModel, index: int) -> list[Any]:
    """The request's messages after the agent's system message, as (id, type, text) triples."""
    return [(m.id, m.type, m.text) for m in model.requests[index].messages[1:]]


def test_a_tool_output_is_counted_once_on_arrival_and_its_size_is_exact() -> None:
    counter = CountingCounter()
    session = ContextSession(max_tokens=100_000, counter=counter)
    session.add(Message(role="user", content="find it", id="u"))
    session.add(Message(role="assistant", tool_calls=(ToolCall(id="c1", name="grep", args={"q": "x"}),), id="a"))
    session.add(Message(role="tool", tool_call_id="c1", name="grep", content="line\n" * 2_000, id="t"))
    assert counter.counted["t"] == 1  # bounding on arrival counts it; the history takes that count
    live = session.conversation.live
    assert live.sizes[-1] == TiktokenCounter().count_message(live.messages[-1])


def test_a_bounded_tool_output_is_sized_as_bounded() -> None:
    policy = CompactionPolicy(max_tool_output_tokens=200)
    session = ContextSession(max_tokens=100_000, policy=policy)
    session.add(Message(role="user", content="find it", id="u"))
    session.add(Message(role="assistant", tool_calls=(ToolCall(id="c1", name="grep", args={}),), id="a"))
    session.add(Message(role="tool", tool_call_id="c1", content="word " * 5_000, id="t"))
    live = session.conversation.live
    bounded = live.messages[-1]
    assert bounded.text != "word " * 5_000
    assert live.sizes[-1] == TiktokenCounter().count_message(bounded)
    assert live.tokens == sum(TiktokenCounter().count_message(m) for m in live.messages)


def test_the_forwarder_subscribes_only_to_the_types_it_forwards() -> None:
    session = ContextSession(max_tokens=10_000)
    forwarder = EventForwarder()
    unsubscribe = forwarder.attach(session)
    assert not session.events.wants("context_update")  # so the session does not build it on every message
    assert session.events.wants("context_compacted")
    unsubscribe()
    assert not session.events.wants("context_compacted")

    chatty = EventForwarder(frozenset({"context_update"}))
    chatty.attach(session)
    session.add(Message(role="user", content="hello", id="u"))
    assert [event.type for event in chatty.flush()] == ["context_update"]
    assert chatty.flush() == []


def test_every_call_sends_the_state_as_it_is_when_nothing_is_compacted() -> None:
    model = StrictFakeChatModel(max_input_tokens=1_000_000, respond=ToolLoop("lookup", parallel=2))
    middleware = ContextBudgetMiddleware()
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "plain"}}
    for turn in range(4):
        agent.invoke({"messages": [HumanMessage(f"question {turn}")]}, config)
        state = agent.get_state(config).values["messages"]
        # the last request carried every state message but the final reply, in order, as the state holds them
        assert _sent(model, -1) == [(m.id, m.type, m.text) for m in state[:-1]]
    view = middleware._views.get("plain")
    assert view is not None
    assert view.synced is not None  # the view knows its messages are the session's history, list and length


def test_a_history_changed_behind_the_view_is_compared_again_not_assumed() -> None:
    model = StrictFakeChatModel(max_input_tokens=1_000_000, respond=ToolLoop("lookup"))
    middleware = ContextBudgetMiddleware()
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "behind"}}
    agent.invoke({"messages": [HumanMessage("first question")]}, config)
    session = middleware.session("behind")
    assert session is not None
    session.add(Message(role="user", content="added to the session directly", id="direct"))
    agent.invoke({"messages": [HumanMessage("second question")]}, config)
    view = middleware._views.get("behind")
    assert view is not None
    assert view.synced is None  # the session's list grew behind it: the next request is compared, not assumed
    sent = [from_langchain(m.model_copy()).text for m in model.requests[-1].messages]
    assert "added to the session directly" in sent  # what the session holds is what is sent, as before


class Recording(AgentMiddleware[Any, Any]):
    """Records the message list of every request it is handed (a real middleware, around or inside ours)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name
        self.lists: list[list[Any]] = []

    @property
    def name(self) -> str:
        return self._name

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        self.lists.append(request.messages)
        return handler(request)


def _recorded_agent(messages_in: list[Any] | None = None) -> tuple[Any, Recording, Recording, ContextBudgetMiddleware]:
    model = StrictFakeChatModel(max_input_tokens=1_000_000, respond=ToolLoop("lookup", parallel=2))
    outer, inner = Recording("outer"), Recording("inner")
    middleware = ContextBudgetMiddleware(counter=CountingCounter())
    agent = create_agent(
        model,
        tools=[search, lookup],
        middleware=[outer, middleware, inner],
        system_prompt="You are a careful research assistant.",
        checkpointer=InMemorySaver(),
    )
    return agent, outer, inner, middleware


def test_a_call_that_changes_nothing_hands_on_the_state_own_list_and_counts_every_message_exactly() -> None:
    agent, outer, inner, middleware = _recorded_agent()
    config: dict[str, Any] = {"configurable": {"thread_id": "as-is"}}
    for turn in range(3):
        agent.invoke({"messages": [HumanMessage(f"question {turn}")]}, config)
    assert len(inner.lists) == len(outer.lists) >= 6
    for given, handed in zip(outer.lists, inner.lists, strict=True):
        assert handed is given  # not a copy of the history: the very list the agent gave
    session = middleware.session("as-is")
    assert session is not None
    state = agent.get_state(config).values["messages"][:-1]  # the final reply joins at the next model call
    exact = TiktokenCounter()
    live = session.conversation.live
    assert [m.id for m in live.messages] == [m.id for m in state]  # every message is in the session, in order
    assert live.sizes == [exact.count_message(from_langchain(m.model_copy())) for m in state]  # counted exactly
    counted = middleware.counter
    assert isinstance(counted, CountingCounter)
    assert all(times == 1 for key, times in counted.counted.items() if key in {m.id for m in state})


def test_a_caller_system_message_in_the_state_is_still_moved_first() -> None:
    agent, outer, inner, _ = _recorded_agent()
    config: dict[str, Any] = {"configurable": {"thread_id": "with-system"}}
    agent.invoke({"messages": [SystemMessage("Answer in French."), HumanMessage("question")]}, config)
    assert inner.lists
    assert all(handed is not given for given, handed in zip(outer.lists, inner.lists, strict=True))
    for handed in inner.lists:
        assert handed[0].type == "system"
        assert handed[0].text == "Answer in French."
        assert [m.type for m in handed[1:]].count("system") == 0


def _editing_agent() -> tuple[Any, ContextBudgetMiddleware, StrictFakeChatModel]:
    """An agent with our middleware and a checkpointer (update_state edits its state), its middleware and model."""
    model = StrictFakeChatModel(max_input_tokens=1_000_000, respond=ToolLoop("lookup"))
    middleware = ContextBudgetMiddleware()
    return agent_with(model, middleware, checkpointer=InMemorySaver()), middleware, model


def _edited_and_counted(middleware: ContextBudgetMiddleware, model: StrictFakeChatModel, key: str) -> None:
    """The model received what the state holds, and the session counted exactly that, message for message."""
    session = middleware.session(key)
    assert session is not None
    sent = [from_langchain(m.model_copy()) for m in model.requests[-1].messages[1:]]
    live = session.conversation.live
    assert [(m.id, m.text) for m in live.messages] == [(m.id, m.text) for m in sent]
    exact = TiktokenCounter()
    assert live.sizes == [exact.count_message(m) for m in live.messages]


def test_the_first_request_edited_under_its_own_id_is_sent_and_counted_as_edited() -> None:
    agent, middleware, model = _editing_agent()
    config: dict[str, Any] = {"configurable": {"thread_id": "edit-first"}}
    agent.invoke({"messages": [HumanMessage("first question about the billing export", id="q1")]}, config)
    agent.update_state(config, {"messages": [HumanMessage("EDITED: the question is about the refund flow", id="q1")]})
    agent.invoke({"messages": [HumanMessage("second question", id="q2")]}, config)
    sent = [m.text for m in model.requests[-1].messages if m.id == "q1"]
    assert sent == ["EDITED: the question is about the refund flow"]
    _edited_and_counted(middleware, model, "edit-first")


def test_the_latest_message_the_model_saw_edited_under_its_own_id_is_sent_and_counted_as_edited() -> None:
    # The view holds what the last request sent; the reply (and a human-in-the-loop edit of it, before its tools
    # run) is new to it at the next call. The newest message it holds is the last tool result: edited here.
    agent, middleware, model = _editing_agent()
    config: dict[str, Any] = {"configurable": {"thread_id": "edit-last"}}
    agent.invoke({"messages": [HumanMessage("first question", id="q1")]}, config)
    held = agent.get_state(config).values["messages"][-2]  # the final reply joins at the next model call
    assert held.type == "tool"
    agent.update_state(config, {"messages": [held.model_copy(update={"content": "EDITED: the lookup found 3 rows"})]})
    agent.invoke({"messages": [HumanMessage("second question", id="q2")]}, config)
    assert "EDITED: the lookup found 3 rows" in [m.text for m in model.requests[-1].messages]
    _edited_and_counted(middleware, model, "edit-last")
