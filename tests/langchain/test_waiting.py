"""Messages counted from their LangChain form and added to the session later: sent and counted as when added at once.

A model call that compacts nothing leaves the new state messages *waiting* (counted with the counter's
``count_fields``, not converted, not in the session) until something needs them in the session. The reference is the
same middleware with a counter that cannot count fields (a ``TiktokenCounter`` whose ``count_message`` is its own):
its views convert and add every message as it arrives, as every call did before. Both run the same script against
the strict fake model; every request must be the same messages with the same count, every state update the same.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import InvalidMessageError
from ctxbudget.messages import Message
from ctxbudget.messages.tokens import TiktokenCounter
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import ContextBudgetMiddleware, StrictFakeChatModel, from_langchain
from langchain_ctxbudget._waiting import Waiting, fields_counter

from .conftest import agent_with

ID = re.compile(r"lc_\d{39}")
"""The ids the adapter gives messages without one: random, and always as many tokens (see test_id_tokens)."""


class EagerCounter(TiktokenCounter):
    """Exact counts; its own ``count_message`` means no field counting: every message is added as it arrives."""

    def count_message(self, message: Message) -> int:
        return super().count_message(message)


class FieldCounting(TiktokenCounter):
    """Exact counts, how many messages were counted from their fields, and which as core messages (by id)."""

    def __init__(self) -> None:
        super().__init__()
        self.fields = 0
        self.messages: list[str] = []

    def count_fields(self, *args: Any, **kwargs: Any) -> int:
        self.fields += 1
        return super().count_fields(*args, **kwargs)

    def count_message(self, message: Message) -> int:
        self.messages.append(message.id)
        return super().count_message(message)


@tool
def fetch(key: str, call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
    """Fetch the record stored under ``key`` (a few hundred words, one in four much longer)."""
    words = 3_000 if key.endswith("3") else 150
    rows = "\n".join(f"{key} row {i}: value={i * 7 % 101} path=src/mod_{i % 13}.py" for i in range(words // 8))
    return ToolMessage(rows, tool_call_id=call_id, name="fetch", id=f"result_{call_id}")  # the same id every run


def _replies(turns: int) -> list[AIMessage]:
    """Per turn: two parallel calls, then an answer; fixed ids, so both runs send the same text."""
    out: list[AIMessage] = []
    for turn in range(turns):
        calls = [
            {"id": f"call_{turn:04d}_{i}", "name": "fetch", "args": {"key": f"k{turn}{i}"}, "type": "tool_call"}
            for i in range(2)
        ]
        out.append(AIMessage("", tool_calls=calls, id=f"msg_{turn:04d}_a"))
        out.append(AIMessage(f"Turn {turn}: both records read; k{turn}0 and k{turn}1 agree.", id=f"msg_{turn:04d}_b"))
    return out


def _sent(model: StrictFakeChatModel) -> list[tuple[int, list[tuple[str, str, str]]]]:
    """Each request as its count and its messages (type, id, text), the random ids we give written as ``ID``."""
    return [
        (
            request.tokens,
            [
                (m.type, ID.sub("ID", m.id or ""), ID.sub("ID", f"{m.text}|{getattr(m, 'tool_calls', '')}"))
                for m in request.messages
            ],
        )
        for request in model.requests
    ]


def _question(turn: int) -> str:
    return f"Question {turn}: read k{turn}0 and k{turn}1."


def _run(
    counter: TiktokenCounter,
    *,
    window: int,
    turns: int,
    policy: CompactionPolicy | None = None,
    first: list[BaseMessage] | None = None,
    between: Callable[[Any, dict[str, Any], int], None] | None = None,
    script: tuple[Callable[[int], str], list[AIMessage]] | None = None,
) -> tuple[StrictFakeChatModel, ContextBudgetMiddleware, Any, dict[str, Any]]:
    """``turns`` turns of an agent on the strict fake model: ``script`` gives each turn's question and the replies."""
    question, replies = script or (_question, _replies(turns))
    model = StrictFakeChatModel(max_input_tokens=window, responses=replies)
    middleware = ContextBudgetMiddleware(counter=counter, policy=policy)
    agent = agent_with(model, middleware, tools=[fetch], checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    for turn in range(turns):
        opening = first if turn == 0 and first is not None else []
        agent.invoke({"messages": [*opening, HumanMessage(question(turn), id=f"q{turn}")]}, config)
        if between is not None:
            between(agent, config, turn)
    return model, middleware, agent, config


def _notes(turns: int) -> tuple[Callable[[int], str], list[AIMessage]]:
    """A user who states things for ``turns - 1`` turns (no request, no tool call: the goal stays tentative), then asks.

    Compaction takes the first note out of the window: the summary shows it as the goal until a request replaces it.
    """

    def question(turn: int) -> str:
        if turn == turns - 1:
            return "Can you move the export to the night window and tell me what else it changes?"
        facts = " ".join(f"Fact {turn}.{i}: the export job on host h{i} took {40 + i} minutes." for i in range(30))
        return f"Note {turn}: the billing export is slow. {facts}"

    replies = [AIMessage(f"Noted {turn}.", id=f"msg_{turn:04d}_n") for turn in range(turns)]
    return question, replies


_BIG = "\n".join(f"preloaded row {i}: value={i * 7 % 101} path=src/mod_{i % 13}.py" for i in range(900))
"""A tool output over the per-output limit, in the history an agent is started with (no tool call bounded it)."""


def _state(agent: Any, config: dict[str, Any]) -> dict[str, Any]:
    values = agent.get_state(config).values
    meta = dict(values.get("ctxbudget_meta") or {})
    meta.pop("pinned", None)  # message dicts holding the random ids; pinned_ids says which
    return {
        "messages": [(m.type, ID.sub("ID", m.text)) for m in values["messages"]],
        "summary": ID.sub("ID", values.get("ctxbudget_summary") or ""),
        "meta": {k: v for k, v in meta.items() if k not in ("goal_id", "pinned_ids")},
    }


SCENARIOS = {
    "nothing compacted": {"window": 1_000_000, "turns": 8},
    "compaction firing": {"window": 6_000, "turns": 12},
    "outputs bounded on arrival": {
        "window": 20_000,
        "turns": 8,
        "policy": CompactionPolicy(max_tool_output_tokens=300),
    },
    "a caller system message": {"window": 6_000, "turns": 10, "first": [SystemMessage("Answer in French.")]},
    "an oversized output in the history given": {
        "window": 40_000,
        "turns": 4,
        "first": [
            HumanMessage("Read the preloaded table.", id="pre_q"),
            AIMessage("", tool_calls=[{"id": "pre_c", "name": "fetch", "args": {"key": "pre"}}], id="pre_a"),
            ToolMessage(_BIG, tool_call_id="pre_c", name="fetch", id="pre_t"),
            AIMessage("The table is loaded.", id="pre_f"),
        ],
    },
    "a question after the goal left the window": {"window": 4_000, "turns": 9, "script": _notes(9)},
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_request_and_state_update_is_what_adding_each_message_on_arrival_gave(scenario: str) -> None:
    settings_ = SCENARIOS[scenario]
    counting = FieldCounting()
    lazy_model, lazy_mw, lazy_agent, lazy_config = _run(counting, **settings_)
    assert counting.fields > 0  # messages waited
    eager_model, eager_mw, eager_agent, eager_config = _run(EagerCounter(), **settings_)
    assert _sent(lazy_model) == _sent(eager_model)
    assert _state(lazy_agent, lazy_config) == _state(eager_agent, eager_config)
    lazy, eager = lazy_mw.session("t"), eager_mw.session("t")
    assert lazy is not None
    assert eager is not None
    assert lazy.conversation.live.sizes == eager.conversation.live.sizes
    assert lazy.counted_tokens() == eager.counted_tokens()
    assert lazy.tracker.calibration.ratio == eager.tracker.calibration.ratio  # calibrated from the same counts
    assert lazy.tracker.calibration.samples == eager.tracker.calibration.samples


def test_a_call_that_compacts_nothing_converts_nothing_and_counts_each_new_message_once() -> None:
    counter = FieldCounting()
    model, middleware, agent, config = _run(counter, window=1_000_000, turns=5)
    state = agent.get_state(config).values["messages"]
    assert not {m.id for m in state} & set(counter.messages)  # none converted and counted as a core message
    assert counter.fields == len(state) - 1  # each counted once, from its LangChain form (the last reply: next call)
    view = middleware._views.get("t")
    assert view is not None
    assert len(view.converter) == 0  # the thread's converter never saw a message
    assert len(model.requests) == 10


def test_the_session_holds_every_message_with_its_exact_count_once_asked_for() -> None:
    model, middleware, agent, config = _run(TiktokenCounter(), window=1_000_000, turns=4)
    session = middleware.session("t")
    assert session is not None
    state = agent.get_state(config).values["messages"][:-1]  # the final reply joins at the next model call
    live = session.conversation.live
    assert [m.id for m in live.messages] == [m.id for m in state]
    exact = TiktokenCounter()
    assert live.sizes == [exact.count_message(from_langchain(m.model_copy())) for m in state]
    # the count the last request was sent with is the session's own count of it, once every message is in
    assert session.counted_tokens() == model.requests[-1].tokens


def test_a_compaction_still_sees_every_message_the_state_holds() -> None:
    model, _, agent, config = _run(TiktokenCounter(), window=6_000, turns=12)
    hard = math.floor(CompactionPolicy().hard_stop * 6_000)
    assert all(request.tokens <= hard for request in model.requests)
    assert agent.get_state(config).values.get("ctxbudget_summary")  # it compacted, with the waiting messages in


def test_a_tool_call_left_unanswered_is_sent_with_a_result_never_alone() -> None:
    def interrupt(agent: Any, config: dict[str, Any], turn: int) -> None:
        if turn == 1:  # a human-in-the-loop step left a call the tools never ran
            call = {"id": "call_unanswered", "name": "fetch", "args": {"key": "x"}, "type": "tool_call"}
            agent.update_state(config, {"messages": [AIMessage("", tool_calls=[call], id="ai_unanswered")]})

    lazy_model, *_ = _run(TiktokenCounter(), window=1_000_000, turns=4, between=interrupt)
    eager_model, *_ = _run(EagerCounter(), window=1_000_000, turns=4, between=interrupt)
    assert _sent(lazy_model) == _sent(eager_model)  # the strict model accepted each: no orphaned call was sent
    after = next(i for i, r in enumerate(lazy_model.requests) if any(m.id == "ai_unanswered" for m in r.messages))
    sent = lazy_model.requests[after].messages
    at = next(i for i, m in enumerate(sent) if m.id == "ai_unanswered")
    assert isinstance(sent[at + 1], ToolMessage)
    assert sent[at + 1].tool_call_id == "call_unanswered"


def _refused(counter: TiktokenCounter, bad: BaseMessage) -> str:
    """The error a second turn that brings ``bad`` raises (after a first turn left messages waiting)."""
    model = StrictFakeChatModel(max_input_tokens=1_000_000, responses=_replies(2))
    agent = agent_with(model, ContextBudgetMiddleware(counter=counter), tools=[fetch], checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "bad"}}
    agent.invoke({"messages": [HumanMessage("Question 0", id="q0")]}, config)
    with pytest.raises(InvalidMessageError) as raised:
        agent.invoke({"messages": [bad.model_copy(), HumanMessage("Question 1", id="q1")]}, config)
    return str(raised.value)


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (AIMessage("", tool_calls=[{"id": "c1", "name": "fetch", "args": {"x": math.nan}}], id="nan"), "args"),
        (AIMessage("", tool_calls=[{"id": "c1", "name": "fetch", "args": {}}] * 2, id="twice"), "duplicate"),
        (HumanMessage("broken \ud800 text", id="surrogate"), "content"),
    ],
    ids=["arguments-json-cannot-hold", "call-ids-twice", "lone-surrogate"],
)
def test_bad_input_raises_the_typed_error_adding_it_at_once_raised(bad: BaseMessage, field: str) -> None:
    message = _refused(TiktokenCounter(), bad)
    assert field in message
    assert message == _refused(EagerCounter(), bad)


def _compacted_then(counter: TiktokenCounter, message: BaseMessage) -> str:
    """The error ``message`` raises after compaction took the first question out of the state."""
    *_, agent, config = _run(counter, window=6_000, turns=8)
    assert "q0" not in {m.id for m in agent.get_state(config).values["messages"]}
    with pytest.raises(InvalidMessageError) as raised:
        agent.invoke({"messages": [message.model_copy()]}, config)
    return str(raised.value)


def test_a_message_under_an_id_compaction_archived_raises_as_adding_it_at_once_raised() -> None:
    message = HumanMessage("Question 0 again", id="q0")
    refused = _compacted_then(TiktokenCounter(), message)
    assert "already in this session" in refused
    assert refused == _compacted_then(EagerCounter(), message)


def test_a_counter_with_its_own_count_message_counts_every_message_itself() -> None:
    assert fields_counter(TiktokenCounter()) is not None
    assert fields_counter(EagerCounter()) is None  # it overrides count_message, not count_fields
    assert fields_counter(FieldCounting()) is not None  # it overrides both


def test_async_agent_sends_and_counts_what_the_sync_one_does() -> None:
    async def run(counter: TiktokenCounter) -> StrictFakeChatModel:
        model = StrictFakeChatModel(max_input_tokens=6_000, responses=_replies(10))
        agent = agent_with(model, ContextBudgetMiddleware(counter=counter), tools=[fetch], checkpointer=InMemorySaver())
        config: dict[str, Any] = {"configurable": {"thread_id": "a"}}
        for turn in range(10):
            await agent.ainvoke(
                {"messages": [HumanMessage(f"Question {turn}: read k{turn}0 and k{turn}1.", id=f"q{turn}")]}, config
            )
        return model

    assert _sent(asyncio.run(run(TiktokenCounter()))) == _sent(asyncio.run(run(EagerCounter())))


# -- one message: counted from its fields exactly as converted --------------------------------------------------
characters = st.characters(blacklist_categories=("Cs",))  # a lone surrogate is refused (see the test above)
text = st.text(characters, max_size=300)
names = st.one_of(st.none(), st.text(characters, min_size=1, max_size=12))
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**30), 10**30), st.floats(allow_nan=False, allow_infinity=False), text
)
arguments = st.dictionaries(st.text(characters, max_size=8), scalars | st.lists(scalars, max_size=3), max_size=4)


@st.composite
def turns(draw: st.DrawFn) -> list[BaseMessage]:
    """A human message, an AI message with calls (or none), each call's result, and a final answer."""
    count = draw(st.integers(0, 3))
    calls = [
        {"id": f"c{i}", "name": draw(st.sampled_from(["fetch", "grep", "read_file"])), "args": draw(arguments)}
        for i in range(count)
    ]
    out: list[BaseMessage] = [
        HumanMessage(draw(text), name=draw(names), id="h"),
        AIMessage(draw(text), tool_calls=calls, id="a"),
    ]
    out += [
        ToolMessage(draw(text), tool_call_id=call["id"], name=call["name"], id=f"t{i}") for i, call in enumerate(calls)
    ]
    out.append(AIMessage(draw(text), name=draw(names), id="f"))
    return out


@settings(max_examples=150, deadline=None)
@given(messages=turns())
def test_a_message_counted_from_its_fields_counts_what_its_conversion_counts(messages: list[BaseMessage]) -> None:
    from ctxbudget import ContextSession

    counter = TiktokenCounter()
    waiting = Waiting(counter, ContextSession(max_tokens=10_000_000, counter=counter))
    exact = TiktokenCounter()
    for message in messages:
        assert waiting.take(message)
    assert waiting.sizes == [exact.count_message(from_langchain(m.model_copy())) for m in messages]
    assert waiting.tokens == sum(waiting.sizes)


# -- when messages may wait, and when the session must have them -------------------------------------------------
def _view(window: int = 100_000, **session: Any) -> Any:
    from ctxbudget import ContextSession

    from langchain_ctxbudget._view import ThreadView
    from langchain_ctxbudget.convert import MessageConverter
    from langchain_ctxbudget.events import EventForwarder

    live = ContextSession(max_tokens=window, **session)
    return ThreadView(live, MessageConverter(), EventForwarder(frozenset()), None)  # type: ignore[arg-type]


def _call(call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"id": call_id, "name": "fetch", "args": {"key": call_id}}], id=f"a_{call_id}")


def test_a_request_whose_last_call_is_unanswered_is_built_by_the_session() -> None:
    view = _view()
    view.arrive([HumanMessage("read k1", id="h1"), _call("c1")])
    assert len(view.waiting) == 2
    assert view.waiting_request() is None  # the session sends a synthetic result for c1
    view.settle()
    built = view.session.build_request()
    assert [m.role for m in built.messages] == ["user", "assistant", "tool"]


def test_a_message_after_an_unanswered_call_is_added_with_those_before_it() -> None:
    view = _view()
    view.arrive([HumanMessage("read k1", id="h1"), _call("c1"), HumanMessage("never mind", id="h2")])
    assert not view.waiting  # h2 could not wait: all three went to the session, in order
    assert [m.id for m in view.session.history] == ["h1", "a_c1", "h2"]


def test_messages_wait_only_while_the_request_is_below_the_threshold() -> None:
    view = _view(window=1_000)
    view.arrive([HumanMessage("short question", id="h1")])
    assert view.waiting_request() is not None
    view.arrive([AIMessage("word " * 900, id="a1")])  # past 80% of the window: the session compacts
    assert view.waiting_request() is None


def test_the_count_sent_is_the_session_own_count_once_the_messages_are_in() -> None:
    view = _view(system_prompt="Be brief.")
    view.arrive([HumanMessage("read k1", id="h1"), _call("c1"), ToolMessage("k1: 42", tool_call_id="c1", id="t1")])
    counted = view.waiting_request()
    assert counted is not None
    view.settle()
    assert counted == view.session.counted_tokens() == view.session.build_request().tokens
