"""A request never holds two messages with one id, whatever ids the caller's messages carry.

The session writes messages of its own: the system prompt (``ctxbudget-system-<session id>``), the summary
(``ctxbudget-summary-...``), the planned context (``ctxbudget-context-...``), the pinned form of a tool message
(``<id>.pinned``), a synthetic result for a call never answered (``ctxbudget-missing-<call id>``) and the notice after
an interrupted reply (``ctxbudget-notice-<message id>``). A caller's message with one of those ids used to be sent
next to the session's message of the same id (``['ctxbudget-system-s1', 'ctxbudget-system-s1', 'a1']``). Such ids
are accepted (a framework passes its ids through, and a transcript ctxbudget wrote can be read back), and the
session's message moves to ``<usual id>~2``, whether the caller's message came before it or after.
"""

from __future__ import annotations

import pytest
from ctxbudget import ContextSession, InvalidMessageError, Message, ToolCall
from ctxbudget.context.items import ContextItem
from ctxbudget.messages.toolpairs import repair_tool_pairs
from ctxbudget.session.request import insert_interrupted_notice

USUAL = [
    "ctxbudget-system-s1",
    "ctxbudget-summary-s1",
    "ctxbudget-context-s1",
    "t0.pinned",
    "ctxbudget-missing-c1",
    "ctxbudget-notice-a2",
]
"""The usual id of every kind of message the session below writes."""


def _caller(message_id: str) -> Message:
    return Message(role="user", content=f"a caller's message named {message_id}", id=message_id)


def _session(early: list[str], late: list[str]) -> ContextSession:
    """A compacted session whose request has one message of each kind the session writes.

    ``early``: caller messages added first (compacted away or kept); ``late``: added last, so they are live.
    """
    session = ContextSession(model="gpt-4o", max_tokens=4_000, session_id="s1", system_prompt="Be brief.")
    session.add(*map(_caller, early))
    session.add(Message(role="user", content="Please add retries to the upload client.", id="u0"))
    session.add(Message(role="assistant", tool_calls=(ToolCall(id="k1", name="grep", args={}),), id="a0"))
    session.add(Message(role="tool", tool_call_id="k1", content="the output", metadata={"pinned": True}, id="t0"))
    for index in range(60):
        session.add(Message(role="assistant", content=f"Reading module {index}: " + "detail " * 40, id=f"r{index}"))
    session.set_context([ContextItem(id="note", source="notes", content="The client lives in upload.py.")])
    session.compact()
    session.add(Message(role="assistant", tool_calls=(ToolCall(id="c1", name="ls", args={}),), id="a1"))
    session.add(Message(role="user", content="never mind", id="u1"))
    session.add(Message(role="assistant", content="I was about to", state="interrupted", id="a2"))
    session.add(*map(_caller, late))
    return session


def _request_ids(session: ContextSession) -> list[str]:
    return [message.id for message in session.build_request().messages]


def test_the_session_writes_each_kind_of_message_under_its_usual_id() -> None:
    ids = _request_ids(_session([], []))
    assert set(USUAL) <= set(ids)
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("when", ["early", "late"])
@pytest.mark.parametrize("taken", USUAL)
def test_a_caller_message_with_a_usual_id_moves_the_sessions_own_message(taken: str, when: str) -> None:
    session = _session([taken] if when == "early" else [], [taken] if when == "late" else [])
    ids = _request_ids(session)
    assert len(ids) == len(set(ids)), ids
    assert f"{taken}~2" in ids  # the session's own message, moved off the caller's id (compacted away or not)
    if when == "late":
        assert any(m.id == taken and m.text.startswith("a caller's") for m in session.build_request().messages)


def test_every_usual_id_taken_at_once_moves_every_own_message() -> None:
    ids = _request_ids(_session(USUAL, [f"{message_id}~2" for message_id in USUAL]))
    assert len(ids) == len(set(ids)), ids
    assert {f"{message_id}~3" for message_id in USUAL} <= set(ids)


def test_the_reported_request_holds_the_system_prompt_and_the_callers_message_apart() -> None:
    session = ContextSession(model="gpt-4o", max_tokens=6_000, session_id="s1", system_prompt="You are helpful.")
    session.add(Message(role="user", content="hello", id="ctxbudget-system-s1"))
    session.add(Message(role="assistant", content="hi", id="a1"))
    request = session.build_request()
    assert [(m.role, m.id) for m in request.messages] == [
        ("system", "ctxbudget-system-s1~2"),
        ("user", "ctxbudget-system-s1"),
        ("assistant", "a1"),
    ]
    assert [m["role"] for m in request.to_openai()["messages"]] == ["system", "user", "assistant"]


def test_a_second_message_with_an_id_already_added_is_still_refused_naming_the_field_and_the_id() -> None:
    session = ContextSession(model="gpt-4o", max_tokens=6_000, session_id="s1", system_prompt="You are helpful.")
    session.add(Message(role="user", content="hello", id="ctxbudget-system-s1"))
    with pytest.raises(InvalidMessageError) as raised:
        session.add(Message(role="user", content="again", id="ctxbudget-system-s1"))
    assert raised.value.field == "id"
    assert "message.id: 'ctxbudget-system-s1' is already in this session" in str(raised.value)


def test_a_call_id_reused_by_two_unanswered_calls_gets_two_synthetic_results() -> None:
    history = [
        Message(role="user", content="go", id="u1"),
        Message(role="assistant", tool_calls=(ToolCall(id="c1", name="ls", args={}),), id="a1"),
        Message(role="user", content="again", id="u2"),
        Message(role="assistant", tool_calls=(ToolCall(id="c1", name="ls", args={}),), id="a2"),
        Message(role="user", content="ctxbudget-missing-c1~3 is mine", id="ctxbudget-missing-c1~3"),
    ]
    repaired = [m.id for m in repair_tool_pairs(history)]
    assert repaired == ["u1", "a1", "ctxbudget-missing-c1", "u2", "a2", "ctxbudget-missing-c1~2", history[-1].id]
    session = ContextSession(model="gpt-4o", max_tokens=6_000)
    session.add(*history)
    assert _request_ids(session) == repaired


def test_the_notice_takes_no_id_of_the_messages_it_is_inserted_among() -> None:
    messages = [
        Message(role="user", content="go", id="ctxbudget-notice-a1"),
        Message(role="assistant", content="cut sh", state="interrupted", id="a1"),
    ]
    assert [m.id for m in insert_interrupted_notice(messages)] == ["ctxbudget-notice-a1", "a1", "ctxbudget-notice-a1~2"]
