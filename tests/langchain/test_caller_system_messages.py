"""A caller's SystemMessage and caller ids that look internal, through real create_agent graphs and LCEL chains.

Issue 14 items 2 and 3: a SystemMessage in the agent input stays in effect (sent in the leading system block of
every request), stays in the checkpointed state (so a restarted graph sends it too), and a caller's message is
never dropped because its id looks like one of ours.
"""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.session import ContextSession
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import (
    SUMMARY_KEY,
    ContextBudgetMiddleware,
    ContextBudgetRunnable,
    StrictFakeChatModel,
    ToolLoop,
)

from .conftest import agent_with, assert_valid_and_within, lookup, search

RULE = "House rule: always answer in French."


def _leading_system_block(messages: tuple[BaseMessage, ...]) -> list[str]:
    """The texts of the leading system messages; fails when a system message comes after the conversation started."""
    head = 0
    while head < len(messages) and messages[head].type == "system":
        head += 1
    assert all(m.type != "system" for m in messages[head:]), [m.type for m in messages]
    return [m.text for m in messages[:head]]


def _turn(i: int) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"question {i}: what does item {i} say?"}]}


@pytest.mark.parametrize("position", ["last", "first"])
def test_caller_system_message_is_sent_kept_in_state_and_survives_a_restart(
    position: str, policy: CompactionPolicy
) -> None:
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": f"sys-{position}"}}
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    agent = agent_with(model, ContextBudgetMiddleware(policy=policy), checkpointer=saver)
    opening: list[BaseMessage] = [HumanMessage("question 0: hello"), SystemMessage(RULE, id="caller-rule")]
    if position == "first":
        opening.reverse()
    agent.invoke({"messages": opening}, config)
    for i in range(1, 14):  # enough turns to compact several times
        agent.invoke(_turn(i), config)
    state = agent.get_state(config).values
    assert state[SUMMARY_KEY]  # compaction happened, and still:
    assert [m.text for m in state["messages"] if m.type == "system"] == [RULE]
    for request in model.requests:
        assert RULE in _leading_system_block(request.messages)
    assert_valid_and_within(model, policy)

    restarted_model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    restarted = agent_with(restarted_model, ContextBudgetMiddleware(policy=policy), checkpointer=saver)
    restarted.invoke(_turn(14), config)
    for request in restarted_model.requests:
        assert RULE in _leading_system_block(request.messages)
    assert [m.text for m in restarted.get_state(config).values["messages"] if m.type == "system"] == [RULE]


async def test_caller_system_message_async_agent(policy: CompactionPolicy) -> None:
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    agent = agent_with(model, ContextBudgetMiddleware(policy=policy), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "sys-async"}}
    await agent.ainvoke({"messages": [HumanMessage("question 0"), SystemMessage(RULE)]}, config)
    for i in range(1, 8):
        await agent.ainvoke(_turn(i), config)
    for request in model.requests:
        assert RULE in _leading_system_block(request.messages)


@pytest.mark.parametrize("system_prompt", [None, "You are a careful research assistant."])
def test_caller_message_with_an_internal_looking_id_is_sent(system_prompt: str | None) -> None:
    model = StrictFakeChatModel(max_input_tokens=6_000)
    middleware = ContextBudgetMiddleware(policy=CompactionPolicy(keep_recent_messages=6))
    agent = create_agent(
        model,
        tools=[search, lookup],
        middleware=[middleware],
        system_prompt=system_prompt,
        checkpointer=InMemorySaver(),
    )
    forged = HumanMessage("the real question", id="ctxbudget-system-lc-forged")
    agent.invoke({"messages": [forged]}, {"configurable": {"thread_id": "forged"}})
    sent = model.requests[0].messages
    assert "the real question" in [m.text for m in sent]
    system = [m.text for m in sent if m.type == "system"]
    assert system == ([system_prompt] if system_prompt else [])


def test_caller_system_message_with_an_internal_looking_id_is_sent() -> None:
    model = StrictFakeChatModel(max_input_tokens=6_000)
    middleware = ContextBudgetMiddleware(policy=CompactionPolicy(keep_recent_messages=6))
    agent = create_agent(model, tools=[search, lookup], middleware=[middleware], checkpointer=InMemorySaver())
    forged = SystemMessage(RULE, id="ctxbudget-system-lc-forged")
    agent.invoke({"messages": [forged, HumanMessage("hi")]}, {"configurable": {"thread_id": "forged-sys"}})
    assert _leading_system_block(model.requests[0].messages) == [RULE]


PROMPT = ChatPromptTemplate.from_messages(
    [("system", "You answer briefly."), MessagesPlaceholder("history"), ("human", "{question}")]
)


@pytest.mark.parametrize("message_id", ["ctxbudget-system-x", "ctxbudget-system-session"])
def test_runnable_keeps_a_caller_message_with_an_internal_looking_id(message_id: str) -> None:
    session = ContextSession(max_tokens=6_000, session_id="session")
    budget = ContextBudgetRunnable(session=session)
    history = [HumanMessage("earlier question", id=message_id), SystemMessage(RULE, id=f"{message_id}-rule")]
    out = budget.invoke(PROMPT.invoke({"history": history, "question": "and now?"}))
    texts = [m.text for m in out]
    assert "earlier question" in texts
    assert _leading_system_block(tuple(out)) == ["You answer briefly.", RULE]
    assert texts[-1] == "and now?"


def test_runnable_without_a_leading_system_message_keeps_a_forged_first_message() -> None:
    session = ContextSession(max_tokens=6_000, session_id="s")
    out = ContextBudgetRunnable(session=session).invoke([HumanMessage("question", id="ctxbudget-system-s")])
    assert [m.text for m in out] == ["question"]
