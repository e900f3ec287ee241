"""A turn's work does not grow with the history: what a turn counts is what it added (issue 12).

Not a timing test: a counter that records every message it is asked to count shows how many messages a turn
touches. After 200 or 2,000 messages of history, with an unanswered tool call early on, parallel calls, duplicate
and orphaned results, and an interrupted last reply, adding a turn and building the next request counts the same
handful of messages (the new ones, the synthetic results and notices), never the history.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxbudget import ContextSession, Message, TiktokenCounter, ToolCall, ToolSchema
from ctxbudget.messages.toolpairs import find_tool_pair_problems


class RecordingCounter(TiktokenCounter):
    """Exact counting that remembers which messages it was asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.counted: list[str] = []

    def count_message(self, message: Message) -> int:
        self.counted.append(message.id)
        return super().count_message(message)

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        return super().count_tools(tools)


def agent_turn(n: int, *, answered: bool = True, interrupted: bool = False) -> list[Message]:
    calls = [ToolCall(id=f"c{n}a", name="grep", args={"q": f"x{n}"}), ToolCall(id=f"c{n}b", name="ls", args={})]
    messages = [
        Message(role="user", content=f"step {n}: look at module_{n}.py", id=f"u{n}"),
        Message(role="assistant", content="", tool_calls=calls, id=f"a{n}"),
        Message(role="tool", tool_call_id=f"c{n}a", content=f"module_{n}.py:3: def f{n}(): ...", id=f"t{n}a"),
    ]
    if answered:
        messages.append(Message(role="tool", tool_call_id=f"c{n}b", content=f"module_{n}.py", id=f"t{n}b"))
    state = "interrupted" if interrupted else "complete"
    messages.append(Message(role="assistant", content=f"done with {n}", id=f"r{n}", state=state))
    return messages


def session_of(turns: int) -> tuple[ContextSession, RecordingCounter]:
    counter = RecordingCounter()
    session = ContextSession(max_tokens=5_000_000, counter=counter, system_prompt="Be careful.")
    session.add(*agent_turn(0, answered=False))  # an unanswered call early on: every request repairs it
    session.add(Message(role="tool", tool_call_id="c0a", content="late duplicate", id="dup0"))
    session.add(Message(role="tool", tool_call_id="nowhere", content="orphan", id="orphan0"))
    for n in range(1, turns):
        session.add(*agent_turn(n))
    session.build_request()
    return session, counter


def counted_by_one_turn(history_turns: int, *, interrupted: bool) -> list[str]:
    session, counter = session_of(history_turns)
    counter.counted.clear()
    session.add(*agent_turn(history_turns, interrupted=interrupted))
    request = session.build_request()
    _ = session.state
    assert find_tool_pair_problems(list(request.messages)) == []
    return counter.counted


def test_a_turn_counts_only_what_it_added_whatever_the_history_length() -> None:
    short = counted_by_one_turn(40, interrupted=False)
    long = counted_by_one_turn(400, interrupted=False)
    assert len(short) == len(long)
    assert len(long) <= 12  # the turn's five messages, their synthetic and framing probes; never the history


def test_an_interrupted_last_reply_costs_the_same_at_any_length() -> None:
    short = counted_by_one_turn(40, interrupted=True)
    long = counted_by_one_turn(400, interrupted=True)
    assert len(short) == len(long) <= 12


def test_the_request_still_carries_the_repairs_and_the_notice() -> None:
    session, _ = session_of(30)
    session.add(*agent_turn(30, interrupted=True))
    sent = list(session.build_request().messages)
    ids = [m.id for m in sent]
    assert "ctxbudget-missing-c0b" in ids  # the early unanswered call is answered by a synthetic result
    assert "dup0" not in ids
    assert "orphan0" not in ids
    assert ids[-1] == "ctxbudget-notice-r30"  # the interrupted reply is followed by the notice
