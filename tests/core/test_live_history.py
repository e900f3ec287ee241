"""The incremental live history equals the from-scratch repair, message for message, after every append.

:class:`~ctxbudget.session.live_history.LiveHistory` keeps the sent view (what a strict provider accepts) up to date in
O(new message). Whatever arrives (parallel calls, duplicate and orphaned results, unanswered calls, interrupted
replies, results after a user message), its view must equal ``repair_tool_pairs`` plus the interrupted-reply notice
computed over the whole history, and its token totals must equal counting that view from scratch.
"""

from __future__ import annotations

from ctxbudget.messages import Message, MessageSequence, ToolCall
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.messages.toolpairs import find_tool_pair_problems, repair_tool_pairs, safe_cut_points
from ctxbudget.session.live_history import LiveHistory
from ctxbudget.session.request import insert_interrupted_notice
from hypothesis import given, settings
from hypothesis import strategies as st

COUNTER = TiktokenCounter()
PREFIX = (Message(role="system", content="You are terse.", id="sys"),)

# One step: ("user",), ("assistant", n_calls, interrupted), ("tool", which call) where which picks an open call,
# an answered one (a duplicate), or an unknown id (an orphan).
steps = st.lists(
    st.one_of(
        st.tuples(st.just("user")),
        st.tuples(st.just("assistant"), st.integers(0, 3), st.booleans()),
        st.tuples(st.just("tool"), st.integers(0, 5)),
    ),
    max_size=40,
)


def build(script: list[tuple[object, ...]]) -> list[Message]:
    messages: list[Message] = []
    made: list[str] = []
    for number, step in enumerate(script):
        if step[0] == "user":
            messages.append(Message(role="user", content=f"request {number}", id=f"u{number}"))
        elif step[0] == "assistant":
            calls = [ToolCall(id=f"c{number}_{k}", name="grep", args={"k": k}) for k in range(int(step[1]))]  # type: ignore[call-overload]
            made.extend(call.id for call in calls)
            state = "interrupted" if step[2] else "complete"
            messages.append(
                Message(role="assistant", content=f"reply {number}", tool_calls=calls, state=state, id=f"a{number}")
            )
        else:
            which = int(step[1])  # type: ignore[call-overload]
            call_id = made[-1 - which] if which < len(made) else f"unknown{number}"
            messages.append(Message(role="tool", tool_call_id=call_id, content=f"out {number}", id=f"t{number}"))
    return messages


def expected_view(history: list[Message]) -> list[Message]:
    repaired = [*PREFIX, *repair_tool_pairs(history)]
    assistants = [m for m in history if m.role == "assistant"]
    if assistants and assistants[-1].state == "interrupted":
        return insert_interrupted_notice(repaired)
    return repaired


@settings(max_examples=300, deadline=None)
@given(steps)
def test_the_view_and_its_tokens_equal_the_from_scratch_repair_after_every_append(
    script: list[tuple[object, ...]],
) -> None:
    live = LiveHistory(COUNTER.count_message)
    notice_tokens = COUNTER.count_message(Message(role="user", content="x", id="n"))  # any fixed figure works
    history: list[Message] = []
    for message in build(script):
        live.append(message)
        history.append(message)
        view = live.view(PREFIX)
        expected = expected_view(history)
        assert list(view) == expected
        assert len(view) == len(expected)
        assert [view[i] for i in range(len(view))] == expected
        assert find_tool_pair_problems(list(view)) == []
        notices = [m for m in expected if m.metadata.get("ctxbudget") == "interrupted_notice"]
        counted = sum(COUNTER.count_message(m) for m in expected[len(PREFIX) :] if m not in notices)
        assert live.sent_tokens(notice_tokens) == counted + notice_tokens * len(notices)
        assert live.tokens == sum(COUNTER.count_message(m) for m in history)
        assert live.needs_repair == (expected[len(PREFIX) :] != history)


@settings(max_examples=100, deadline=None)
@given(steps, st.integers(0, 40))
def test_replacing_the_history_gives_the_same_state_as_appending_it(script: list[tuple[object, ...]], cut: int) -> None:
    messages = build(script)
    live = LiveHistory(COUNTER.count_message)
    for message in messages:
        live.append(message)
    before = live.view(PREFIX)
    snapshot = list(before)
    live.replace(messages[cut:])
    fresh = LiveHistory(COUNTER.count_message)
    for message in messages[cut:]:
        fresh.append(message)
    assert list(live.view(PREFIX)) == list(fresh.view(PREFIX))
    assert (live.open_calls, live.run_calls, live.interrupted) == (fresh.open_calls, fresh.run_calls, fresh.interrupted)
    assert list(before) == snapshot  # a view taken earlier still reads what it read


def test_a_view_taken_before_later_appends_does_not_change() -> None:
    live = LiveHistory(COUNTER.count_message)
    live.append(Message(role="user", content="hi", id="u1"))
    view = live.view(PREFIX)
    live.append(Message(role="assistant", content="hello", id="a1"))
    assert isinstance(view, MessageSequence)
    assert [m.id for m in view] == ["sys", "u1"]


def test_an_orphaned_and_a_duplicate_result_are_reported_with_their_reason() -> None:
    live = LiveHistory(COUNTER.count_message)
    live.append(Message(role="assistant", content="", tool_calls=[ToolCall(id="c1", name="ls")], id="a1"))
    assert live.append(Message(role="tool", tool_call_id="c1", content="ok", id="t1")) is None
    duplicate = live.append(Message(role="tool", tool_call_id="c1", content="again", id="t2"))
    orphan = live.append(Message(role="tool", tool_call_id="zz", content="?", id="t3"))
    assert duplicate is not None
    assert duplicate.reason == "duplicate_result"
    assert orphan is not None
    assert orphan.reason == "orphaned_result"
    assert [m.id for m in live.view(())] == ["a1", "t1"]


@settings(max_examples=200, deadline=None)
@given(steps)
def test_per_message_sent_sizes_sum_to_the_sent_cost_of_every_safe_tail(script: list[tuple[object, ...]]) -> None:
    """A compaction measures a kept tail by these sizes: they must be what that tail costs when sent on its own.

    A synthetic result counts with the call that made it and the notice with the interrupted reply, so archiving a
    prefix takes its additions with it; a result left out of the view counts zero.
    """
    notice_tokens = COUNTER.count_message(Message(role="user", content="x", id="n"))
    messages = build(script)
    live = LiveHistory(COUNTER.count_message)
    for message in messages:
        live.append(message)
    sizes = live.sent_sizes(notice_tokens)
    assert sum(sizes) == live.sent_tokens(notice_tokens)
    for cut, safe in enumerate(safe_cut_points(messages)[: len(messages)]):
        if safe:
            tail = LiveHistory(COUNTER.count_message)
            for message in messages[cut:]:
                tail.append(message)
            assert sum(sizes[cut:]) == tail.sent_tokens(notice_tokens), cut
