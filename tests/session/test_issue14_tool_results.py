"""Issue 14 item 6: a tool result that answers no open call is refused by add_tool_result, and kept and reported
as unsent when a framework hands it over through add/sync; nothing the user gave vanishes silently."""

from __future__ import annotations

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import InvalidMessageError
from ctxbudget.messages import Message, ToolCall
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.session import ContextSession
from ctxbudget.session.events import Event, EventType, ToolResultUnsent

COUNTER = TiktokenCounter()


def make(window: int = 8_000) -> ContextSession:
    return ContextSession(
        max_tokens=window, counter=COUNTER, system_prompt="sys", policy=CompactionPolicy(keep_recent_messages=4)
    )


def recorded(session: ContextSession, kind: EventType) -> list[Event]:
    events: list[Event] = []
    session.subscribe(events.append, kind)
    return events


def with_open_calls(*ids: str) -> ContextSession:
    session = make()
    session.add_user("look things up")
    session.add_assistant(tool_calls=[ToolCall(id=call_id, name="t", args={}) for call_id in ids])
    return session


def test_add_tool_result_for_an_unknown_call_is_refused_naming_the_id_and_the_open_calls() -> None:
    session = with_open_calls("c1", "c2")
    before = session.history
    with pytest.raises(InvalidMessageError) as info:
        session.add_tool_result("c9", "result")
    assert info.value.field == "tool_call_id"
    assert "'c9'" in str(info.value)
    assert "'c1'" in str(info.value)
    assert "'c2'" in str(info.value)
    assert session.history == before
    assert len(session.originals()) == len(before)


def test_add_tool_result_when_no_call_is_open_says_so() -> None:
    session = make()
    session.add_user("hello")
    with pytest.raises(InvalidMessageError, match="no tool call is open") as info:
        session.add_tool_result("c1", "result")
    assert info.value.field == "tool_call_id"


def test_add_tool_result_answering_a_call_twice_is_refused() -> None:
    session = with_open_calls("c1", "c2")
    session.add_tool_result("c1", "first")
    with pytest.raises(InvalidMessageError, match="'c1' was already answered") as info:
        session.add_tool_result("c1", "again")
    assert "'c2'" in str(info.value)  # still open
    session.add_tool_result("c2", "second")  # the valid one still goes in


@pytest.mark.parametrize("via", ["add", "sync"])
def test_an_orphan_tool_result_from_a_framework_is_kept_and_reported_as_unsent(via: str) -> None:
    session = make()
    unsent = recorded(session, "tool_result_unsent")
    user = Message(role="user", content="hello")
    orphan = Message(role="tool", tool_call_id="ghost", content="a result nobody asked for")
    if via == "add":
        session.add(user, orphan)
    else:
        session.sync([user, orphan])
    assert orphan in session.history
    assert orphan in session.originals()
    assert orphan.id not in {m.id for m in session.build_request().messages}
    assert len(unsent) == 1
    event = unsent[0]
    assert isinstance(event, ToolResultUnsent)
    assert (event.message_id, event.tool_call_id, event.reason) == (orphan.id, "ghost", "orphaned_result")
    session.add_user("next")  # reported once, not again on every change
    assert len(unsent) == 1
    traced = [e for e in session.trace_events() if e["type"] == "tool_result_unsent"]
    assert traced == [{**traced[0], "message": orphan.id, "call": "ghost", "reason": "orphaned_result"}]


def test_a_duplicate_tool_result_from_a_framework_is_reported_as_a_duplicate() -> None:
    session = with_open_calls("c1")
    unsent = recorded(session, "tool_result_unsent")
    session.add(Message(role="tool", tool_call_id="c1", content="first"))
    session.add(Message(role="tool", tool_call_id="c1", content="again"))
    assert [e.reason for e in unsent] == ["duplicate_result"]  # type: ignore[attr-defined]


def test_a_result_orphaned_by_sync_dropping_its_call_is_reported() -> None:
    session = with_open_calls("c1")
    result = session.add_tool_result("c1", "found it")
    unsent = recorded(session, "tool_result_unsent")
    session.sync([session.history[0], result])  # the framework dropped the assistant message
    assert [(e.message_id, e.reason) for e in unsent] == [(result.id, "orphaned_result")]  # type: ignore[attr-defined]


def test_well_paired_tool_results_emit_no_unsent_event() -> None:
    session = with_open_calls("c1", "c2")
    unsent = recorded(session, "tool_result_unsent")
    session.add_tool_result("c2", "b")
    session.add_tool_result("c1", "a")
    session.add_assistant("done")
    assert unsent == []
