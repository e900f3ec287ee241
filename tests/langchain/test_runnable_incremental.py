"""The stateless runnable's cache: exactly the uncached fit, on any sequence of calls, at O(new messages) per call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import InvalidMessageError
from ctxbudget.messages.tokens import TiktokenCounter
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

from langchain_ctxbudget import ContextBudgetRunnable, LangChainContextOverflowError, fit_messages
from langchain_ctxbudget.errors import NoHumanMessageError

COUNTER = TiktokenCounter()


def _words(tag: str, n: int) -> str:
    return " ".join(f"{tag}w{i % 50}" for i in range(n))


@st.composite
def _turn(draw: st.DrawFn, t: int) -> list[BaseMessage]:
    """One agent turn: maybe a human message, an AI message with 0-3 calls, their results (some missing, out of
    order, orphaned or duplicated), maybe a final answer; some messages without ids."""

    def mid(prefix: str) -> str | None:
        return None if draw(st.integers(0, 5)) == 0 else f"{prefix}{t}"

    out: list[BaseMessage] = []
    if draw(st.integers(0, 6)) > 0:
        out.append(HumanMessage(content=_words(f"h{t}", draw(st.integers(1, 40))), id=mid("h")))
    calls = draw(st.integers(0, 3))
    ids = [f"c{t}_{i}" if draw(st.integers(0, 9)) else "" for i in range(calls)]
    tool_calls = [{"id": cid, "name": "search", "args": {"q": f"q{t}{i}"}} for i, cid in enumerate(ids)]
    out.append(AIMessage(content=_words(f"a{t}", draw(st.integers(0, 8))), tool_calls=tool_calls, id=mid("a")))
    answered = [i for i in range(calls) if ids[i] and draw(st.integers(0, 6))]
    order = draw(st.permutations(answered))
    for i in order:
        size = draw(st.sampled_from([5, 30, 120, 400]))
        out.append(ToolMessage(content=_words(f"r{t}{i}", size), tool_call_id=ids[i], id=mid(f"r{i}_")))
    if answered and draw(st.integers(0, 8)) == 0:
        out.append(ToolMessage(content="again", tool_call_id=ids[answered[0]], id=f"dup{t}"))
    if draw(st.integers(0, 8)) == 0:
        out.append(ToolMessage(content="ghost", tool_call_id=f"ghost{t}", id=f"ghost{t}"))
    if draw(st.booleans()):
        out.append(AIMessage(content=_words(f"f{t}", draw(st.integers(1, 20))), id=mid("f")))
    return out


@st.composite
def _pool(draw: st.DrawFn) -> list[BaseMessage]:
    systems = [
        SystemMessage(content=_words(f"s{i}", draw(st.integers(1, 30))), id=None if draw(st.booleans()) else f"s{i}")
        for i in range(draw(st.integers(0, 2)))
    ]
    turns = draw(st.integers(1, 14))
    body: list[BaseMessage] = []
    for t in range(turns):
        body.extend(draw(_turn(t)))
    return systems + body


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["extend", "extend", "extend", "edit", "shrink", "drop_front", "copy", "same", "prompt"]),
        st.integers(0, 10_000),
    ),
    min_size=1,
    max_size=8,
)


@dataclass
class _Outcome:
    messages: list[BaseMessage] | None = None
    error: tuple[type[BaseException], str] | None = None


def _outcome(call: Any) -> _Outcome:
    try:
        return _Outcome(messages=list(call()))
    except (LangChainContextOverflowError, NoHumanMessageError) as exc:
        return _Outcome(error=(type(exc), str(exc)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    pool=_pool(),
    ops=_OPS,
    budget=st.integers(150, 5_000),
    limit=st.sampled_from([None, 40, 150]),
    start=st.integers(0, 100),
)
def test_cached_equals_uncached_on_any_sequence_of_calls(
    pool: list[BaseMessage], ops: list[tuple[str, int]], budget: int, limit: int | None, start: int
) -> None:
    policy = CompactionPolicy(max_tool_output_tokens=limit)
    runnable = ContextBudgetRunnable(max_tokens=budget, counter=COUNTER, policy=policy)
    length = start % (len(pool) + 1)
    live: list[BaseMessage] = []  # one list object the caller changes in place between calls, as agent loops do
    for op, arg in [("same", 0), *ops]:
        if op == "extend":
            length = min(len(pool), length + 1 + arg % 6)
        elif op == "edit" and length:
            index = arg % length
            pool[index] = pool[index].model_copy(update={"content": f"edited {arg} " + str(pool[index].content)})
        elif op == "shrink":
            length = arg % (length + 1)
        elif op == "drop_front" and length:
            drop = 1 + arg % 3
            del pool[:drop]
            length = max(0, length - drop)
        elif op == "copy":
            pool[:] = [m.model_copy() for m in pool]
        current = pool[:length]
        value: Any = current
        if arg % 2:
            live[:] = current
            value = live
        if op == "prompt":
            value = ChatPromptTemplate.from_messages([MessagesPlaceholder("m")]).invoke({"m": current})
        expected = _outcome(lambda: fit_messages(current, max_tokens=budget, counter=COUNTER, policy=policy))  # noqa: B023  # called at once
        got = _outcome(lambda: runnable.invoke(value))  # noqa: B023  # called at once
        assert got == expected, (op, arg, length)
        kept = len(got.messages) if got.messages is not None else -1
        event(f"{op}: " + (got.error[0].__name__ if got.error else "trimmed" if kept < length else "whole"))


def _agent(turns: int, *, prefix: str = "") -> list[BaseMessage]:
    history: list[BaseMessage] = [SystemMessage(content="You are a coding agent.")]
    for t in range(turns):
        history.append(HumanMessage(content=f"step {t}: inspect module {t}", id=f"{prefix}h{t}"))
        calls = [{"id": f"{prefix}c{t}_{i}", "name": "cat", "args": {"path": f"m{t}_{i}.py"}} for i in range(2)]
        history.append(AIMessage(content="", tool_calls=calls, id=f"{prefix}a{t}"))
        history.extend(
            ToolMessage(content=_words(f"out{t}{i}", 300), tool_call_id=f"{prefix}c{t}_{i}", id=f"{prefix}r{t}_{i}")
            for i in range(2)
        )
        history.append(AIMessage(content=f"module {t} is fine", id=f"{prefix}f{t}"))
    return history


def test_a_list_that_extends_the_last_one_costs_its_new_messages() -> None:
    runnable = ContextBudgetRunnable(max_tokens=20_000)
    history = _agent(200)
    runnable.invoke(history)
    cache = runnable._cache
    first = cache.conversions
    assert first == len(history)
    history.extend(_agent(1, prefix="x")[1:])  # one more turn: 5 messages
    out = runnable.invoke(history)
    assert cache.conversions - first == 5
    assert out == fit_messages(history, max_tokens=20_000)
    # An edit far back re-converts that message only (and re-repairs the runs from it on, from cached items).
    history[10] = history[10].model_copy(update={"content": "edited"})
    before = cache.conversions
    assert runnable.invoke(history) == fit_messages(history, max_tokens=20_000)
    assert cache.conversions - before == 1
    # Copies (a checkpoint round trip) are recognised by id and value: nothing is converted again.
    copies = [m.model_copy() for m in history]
    before = cache.conversions
    assert runnable.invoke(copies) == fit_messages(copies, max_tokens=20_000)
    assert cache.conversions == before


def test_prompt_template_rerenders_cost_the_new_turn_only() -> None:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are a coding agent."), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    runnable = ContextBudgetRunnable(max_tokens=12_000)
    history = _agent(100)[1:]
    runnable.invoke(prompt.invoke({"history": history, "question": "next?"}))
    before = runnable._cache.conversions
    history.extend(_agent(1, prefix="y")[1:])
    value = prompt.invoke({"history": history, "question": "and next?"})
    assert runnable.invoke(value) == fit_messages(value.to_messages(), max_tokens=12_000)
    assert runnable._cache.conversions - before <= 5 + 1 + 1  # the turn, the re-rendered question, its predecessor


def test_output_starts_on_a_human_turn_after_the_system_messages() -> None:
    runnable = ContextBudgetRunnable(max_tokens=10_000)
    messages = [
        SystemMessage(content="rules"),
        AIMessage(content="Hello! How can I help?", id="greet"),
        HumanMessage(content="hi", id="h1"),
        AIMessage(content="hello", id="a1"),
    ]
    out = runnable.invoke(messages)
    assert [m.id for m in out[1:]] == ["h1", "a1"]  # as trim_messages(start_on="human"): the greeting goes
    assert out[0].type == "system"


def test_a_cut_that_lands_on_an_ai_turn_moves_on_to_the_next_human_turn() -> None:
    history = _agent(30)
    budget = 4_000
    out = ContextBudgetRunnable(max_tokens=budget).invoke(history)
    assert [m.type for m in out[:2]] == ["system", "human"]
    assert len(out) < len(history)


def test_no_human_message_is_a_typed_error_naming_the_numbers() -> None:
    runnable = ContextBudgetRunnable(max_tokens=10_000)
    calls = [{"id": "c1", "name": "cat", "args": {}}]
    messages = [
        SystemMessage(content="rules"),
        AIMessage(content="", tool_calls=calls, id="a1"),
        ToolMessage(content="out", tool_call_id="c1", id="r1"),
        AIMessage(content="done", id="a2"),
    ]
    with pytest.raises(NoHumanMessageError, match=r"4 message\(s\) given, 1 leading system message\(s\)") as info:
        runnable.invoke(messages)
    assert info.value.roles == {"assistant": 2, "tool": 1}
    assert (info.value.total, info.value.system, info.value.field) == (4, 1, "messages")
    assert isinstance(info.value, ValueError)
    # Nothing after the system messages: nothing is dropped, so they are returned alone (as trim_messages does).
    assert runnable.invoke([]) == []
    assert runnable.invoke(messages[:1]) == messages[:1]


def test_messages_kept_unchanged_come_back_as_the_objects_given() -> None:
    messages = [SystemMessage("rules"), HumanMessage("hi"), AIMessage("hello", id="a1")]
    for out in (ContextBudgetRunnable(max_tokens=1_000).invoke(messages), fit_messages(messages, max_tokens=1_000)):
        assert all(a is b for a, b in zip(out, messages, strict=True))
        assert out[0].id is None  # no id is stamped on what the caller gave


class _Unequal(HumanMessage):
    """A message whose comparison with another object raises (as one holding an array in its kwargs would)."""

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        raise RuntimeError("cannot compare")

    __hash__ = HumanMessage.__hash__


def test_a_call_that_raises_leaves_the_cache_as_good_as_new() -> None:
    runnable = ContextBudgetRunnable(max_tokens=1_000, counter=COUNTER)
    history: list[BaseMessage] = [SystemMessage("rules", id="s"), HumanMessage("hi", id="h1"), AIMessage("yo", id="a1")]
    good = [*history, HumanMessage("q2", id="h2"), AIMessage("ok", id="a2")]
    runnable.invoke(history)
    with pytest.raises(InvalidMessageError, match="cannot map a ChatMessage"):  # fails while converting the new part
        runnable.invoke([*history, HumanMessage("q2", id="h2"), ChatMessage(role="weird", content="x", id="w")])
    assert runnable.invoke(good) == fit_messages(good, max_tokens=1_000, counter=COUNTER)
    longer = [*good, _Unequal("q3", id="h3")]
    runnable.invoke(longer)
    with pytest.raises(RuntimeError, match="cannot compare"):  # fails while comparing with the last call's list
        runnable.invoke([*good, _Unequal("q3", id="h3"), AIMessage("a3", id="a3")])
    for messages in (good, longer, history):
        assert runnable.invoke(list(messages)) == fit_messages(messages, max_tokens=1_000, counter=COUNTER)
