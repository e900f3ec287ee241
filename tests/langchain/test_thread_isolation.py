"""One middleware, many threads: nothing of one thread ever reaches another thread's model requests.

Hostile review 3, finding 06: the middleware kept one message converter for every thread, its cache keyed by message
id, and rebuilt a message compaction changed on top of the cached LangChain message with the same id. Clients that
number messages per conversation (``msg-0``, ``msg-1``, ...) give two threads the same ids, so alice's messages went
to the model with bob's ``name`` and ``additional_kwargs``. Each thread's view now has its own converter, and a
cached message is a template only for a message with its role, name and tool fields.
"""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import ContextBudgetMiddleware, StrictFakeChatModel, ToolLoop
from langchain_ctxbudget.convert import MessageConverter, from_langchain

from .conftest import agent_with

USERS = ("alice", "bob")
TURNS = 14


def _config(user: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": f"t-{user}"}}


def _owners(message: BaseMessage) -> set[str]:
    """The users whose questions ``message`` holds (a summary folded into it included)."""
    return {user for user in USERS if f"{user} question" in message.text}


def _question_id(message: BaseMessage) -> bool:
    """Whether ``message`` has the id of a question (``msg-<n>``; the summary and the model's replies have others)."""
    return message.id is not None and message.id.startswith("msg-")


def _question(user: str, turn: int, *, named: bool) -> HumanMessage:
    """``user``'s question of ``turn``, with an id every thread uses for its own question of that turn."""
    return HumanMessage(
        content=f"{user} question {turn}: what does item {turn} say?",
        id=f"msg-{turn}",
        name=user if named else None,
        additional_kwargs={"account": f"{user}@example.com"},
    )


def _agent(policy: CompactionPolicy) -> tuple[StrictFakeChatModel, Any]:
    """An agent whose small window makes every thread bound, clear and summarize (messages rebuilt by compaction)."""
    model = StrictFakeChatModel(max_input_tokens=3_000, respond=ToolLoop("search"))
    return model, agent_with(model, ContextBudgetMiddleware(policy=policy), checkpointer=InMemorySaver())


def _assert_compacted(agent: Any, user: str) -> None:
    state = agent.get_state(_config(user)).values
    assert state.get("ctxbudget_summary"), f"thread t-{user} was never summarized: the test would prove nothing"
    assert "msg-0" not in [m.id for m in state["messages"]]


@pytest.mark.parametrize("named", [True, False], ids=["named-users", "same-name-other-kwargs"])
def test_each_threads_requests_carry_only_that_threads_message_fields(policy: CompactionPolicy, named: bool) -> None:
    model, agent = _agent(policy)
    for turn in range(TURNS):
        for user in USERS:
            agent.invoke({"messages": [_question(user, turn, named=named)]}, _config(user))
    for user in USERS:
        _assert_compacted(agent, user)
    seen = set()
    for request in model.requests:
        owners = set().union(*(_owners(m) for m in request.messages))
        assert len(owners) == 1, f"one request holds the questions of {sorted(owners)}"
        (owner,) = owners
        seen.add(owner)
        for message in request.messages:
            if _question_id(message):
                assert isinstance(message, HumanMessage), message
                assert _owners(message) == {owner}, message
                assert message.additional_kwargs == {"account": f"{owner}@example.com"}, message
                assert message.name == (owner if named else None), message
    assert seen == set(USERS)
    for user in USERS:  # and what the state keeps for the next turns
        for message in agent.get_state(_config(user)).values["messages"]:
            if _question_id(message):
                assert message.additional_kwargs == {"account": f"{user}@example.com"}, message


def _bobs_turn(turn: int) -> list[BaseMessage]:
    """Bob's history for a turn, whose tool call and tool result use the ids alice's questions have."""
    call = {"id": f"bob-call-{turn}", "name": "lookup", "args": {"key": f"k{turn}"}, "type": "tool_call"}
    return [
        AIMessage(content="", tool_calls=[call], id=f"msg-{2 * turn}", additional_kwargs={"account": "bob"}),
        ToolMessage(content=f"fact {turn}: 42", tool_call_id=f"bob-call-{turn}", id=f"msg-{2 * turn + 1}"),
        HumanMessage(content=f"bob question {turn}: and item {turn}?", id=f"bob-{turn}"),
    ]


def test_a_message_is_never_rebuilt_as_another_threads_tool_call_or_result(policy: CompactionPolicy) -> None:
    model, agent = _agent(policy)
    for turn in range(TURNS):
        for number in (2 * turn, 2 * turn + 1):
            question = HumanMessage(
                content=f"alice question {number}: what does item {number} say?", id=f"msg-{number}"
            )
            agent.invoke({"messages": [question]}, _config("alice"))
        agent.invoke({"messages": _bobs_turn(turn)}, _config("bob"))
    _assert_compacted(agent, "alice")
    for request in model.requests:  # the strict model also refused any orphaned call or result
        if "alice" not in set().union(*(_owners(m) for m in request.messages)):
            continue
        for message in request.messages:
            if _question_id(message):
                assert isinstance(message, HumanMessage), message
                assert message.additional_kwargs == {}, message
                assert _owners(message) == {"alice"}, message


def test_a_cached_message_is_a_template_only_for_a_message_with_its_role_name_and_tool_fields() -> None:
    converter = MessageConverter()
    theirs = ToolMessage(content="their result", tool_call_id="call-1", id="m-1", additional_kwargs={"secret": 1})
    converter.to_message(theirs)
    mine = from_langchain(HumanMessage(content="my question", id="m-1", name="me"))
    back = converter.to_langchain(mine.with_content("my question, shortened"))
    assert isinstance(back, HumanMessage)
    assert (back.content, back.name, back.additional_kwargs) == ("my question, shortened", "me", {})
    own = ToolMessage(content="a long result", tool_call_id="call-2", id="m-2", additional_kwargs={"kept": True})
    bounded = converter.to_message(own).with_content("a long...")
    assert converter.to_langchain(bounded) == own.model_copy(update={"content": "a long..."})  # its own: kept
