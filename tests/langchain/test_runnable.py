"""ContextBudgetRunnable in LCEL chains: prompt | budget | model, stateless and bound to a session."""

from __future__ import annotations

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.messages.toolpairs import find_tool_pair_problems
from ctxbudget.session import ContextSession
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

from langchain_ctxbudget import (
    ContextBudgetRunnable,
    LangChainContextOverflowError,
    StrictFakeChatModel,
    from_langchain,
)

from .conftest import big_text, search

PROMPT = ChatPromptTemplate.from_messages(
    [("system", "You answer from the tool results."), MessagesPlaceholder("history"), ("human", "{question}")]
)


def _history(turns: int, *, parallel: int = 2) -> list:
    history: list = []
    for t in range(turns):
        history.append(HumanMessage(content=f"question {t}", id=f"h{t}"))
        calls = [{"id": f"c{t}_{i}", "name": "search", "args": {"query": f"q{t}"}} for i in range(parallel)]
        history.append(AIMessage(content="", tool_calls=calls, id=f"a{t}"))
        history.extend(
            ToolMessage(content=big_text(f"t{t}.{i}", lines=300), tool_call_id=f"c{t}_{i}", id=f"r{t}_{i}")
            for i in range(parallel)
        )
        history.append(AIMessage(content=f"answer {t}", id=f"f{t}"))
    return history


def _valid(messages: list) -> None:
    assert find_tool_pair_problems([from_langchain(m.model_copy()) for m in messages]) == []


def test_stateless_chain_fits_and_never_orphans() -> None:
    model = StrictFakeChatModel(max_input_tokens=5_000, responses=["fine"])
    budget = ContextBudgetRunnable(model=model, tools=[search])
    chain = PROMPT | budget | model.bind_tools([search])
    reply = chain.invoke({"history": _history(20), "question": "and now?"})
    assert reply.text == "fine"
    sent = model.requests[0].messages
    _valid(list(sent))
    assert sent[0].type == "system"
    assert sent[-1].text == "and now?"
    assert model.requests[0].tokens <= 5_000


def test_stateless_output_is_within_budget_by_our_counter() -> None:
    counter = TiktokenCounter()
    budget = ContextBudgetRunnable(max_tokens=3_000, counter=counter)
    out = budget.invoke(PROMPT.invoke({"history": _history(30), "question": "q?"}))
    _valid(out)
    total = sum(counter.count_message(from_langchain(m.model_copy())) for m in out) + counter.request_overhead
    assert total <= 3_000
    assert out[0].type == "system"
    # Unchanged messages come back as the very objects given (no copies), ids preserved.
    kept_ids = [m.id for m in out if m.id and m.id.startswith("f")]
    assert kept_ids == sorted(kept_ids, key=lambda i: int(i[1:]))


def test_stateless_overflow_raises_with_numbers() -> None:
    budget = ContextBudgetRunnable(max_tokens=200)
    with pytest.raises(LangChainContextOverflowError, match="do not fit the budget of 200"):
        budget.invoke([SystemMessage(content="rules " * 300), HumanMessage(content="hi")])


def test_batch_async_and_stream() -> None:
    budget = ContextBudgetRunnable(max_tokens=4_000)
    inputs = [PROMPT.invoke({"history": _history(n), "question": "x"}) for n in (1, 10, 25)]
    outs = budget.batch(inputs)
    assert len(outs) == 3
    for out in outs:
        _valid(out)
    streamed = list(budget.stream(inputs[2]))
    assert streamed == [outs[2]]


async def test_async_invoke_and_astream_through_a_model() -> None:
    model = StrictFakeChatModel(max_input_tokens=5_000, responses=["one", "two"])
    chain = PROMPT | ContextBudgetRunnable(model=model) | model
    reply = await chain.ainvoke({"history": _history(20), "question": "async?"})
    assert reply.text == "one"
    chunks = [chunk async for chunk in chain.astream({"history": _history(20), "question": "again?"})]
    assert "".join(c.text for c in chunks) == "two"


def test_bound_session_compacts_and_keeps_originals() -> None:
    session = ContextSession(max_tokens=6_000, policy=CompactionPolicy(keep_recent_messages=4))
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=lambda m: f"seen {len(m)}")
    chain = PROMPT | ContextBudgetRunnable(session=session) | model
    history: list = []
    for t in range(40):  # enough turns that clearing old outputs alone no longer reaches the target
        question = f"question {t}"
        chain.invoke({"history": history, "question": question})
        history.extend(_history(1))
        history[-5:] = [m.model_copy(update={"id": f"{m.id}-{t}"}) for m in history[-5:]]
    assert session.summary is not None
    for request in model.requests:
        _valid(list(request.messages))
        assert request.tokens <= 6_000
    originals = {m.text for m in session.originals()}
    assert {f"question {t}" for t in range(40)} <= originals  # every prompt question, archived or live
    assert model.requests[-1].messages[1].text.startswith("[Context Summary]")


async def test_bound_session_async() -> None:
    session = ContextSession(max_tokens=6_000, policy=CompactionPolicy(keep_recent_messages=4))
    budget = ContextBudgetRunnable(session=session)
    out: list = []
    for t in range(40):  # enough turns that clearing old outputs alone no longer reaches the target
        out = await budget.ainvoke(PROMPT.invoke({"history": _history(t), "question": f"q{t}"}))
    _valid(out)
    assert session.summary is not None
