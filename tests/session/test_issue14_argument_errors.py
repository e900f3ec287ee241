"""Issue 14 item 16 (session part): a wrong argument to a public session method is a typed error naming the argument
(and the index, for a list), raised before anything changes; never a raw TypeError/AttributeError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import InvalidMessageError, InvalidPolicyError, UsageError
from ctxbudget.messages import Message, ToolCall
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.session import ContextSession

COUNTER = TiktokenCounter()


def make(window: int = 8_000) -> ContextSession:
    return ContextSession(
        max_tokens=window, counter=COUNTER, system_prompt="sys", policy=CompactionPolicy(keep_recent_messages=4)
    )


def with_history(session: ContextSession) -> ContextSession:
    for n in range(6):
        session.add_user(f"question {n} " + "word " * 40)
        session.add_assistant(f"answer {n} " + "text " * 40)
    return session


# The session is typed Any in these calls: each passes a value of the wrong type on purpose.
CASES: list[tuple[str, Callable[[Any], Any], type[UsageError], str]] = [
    ("sync-none", lambda s: s.sync(None), InvalidMessageError, "messages"),
    ("sync-int", lambda s: s.sync(5), InvalidMessageError, "messages"),
    ("sync-str", lambda s: s.sync("text"), InvalidMessageError, "messages"),
    ("sync-a-message", lambda s: s.sync(Message(role="user", content="x")), InvalidMessageError, "messages"),
    ("sync-none-item", lambda s: s.sync([None]), InvalidMessageError, "messages[0]"),
    ("sync-str-item", lambda s: s.sync(["text"]), InvalidMessageError, "messages[0]"),
    (
        "sync-second-item",
        lambda s: s.sync([Message(role="user", content="x"), {"role": "user"}]),
        InvalidMessageError,
        "messages[1]",
    ),
    (
        "sync-system-then-bad",  # the system message must not be taken before the bad item is found
        lambda s: s.sync([Message(role="system", content="note"), None]),
        InvalidMessageError,
        "messages[1]",
    ),
    ("tool-calls-int", lambda s: s.add_assistant(tool_calls=5), InvalidMessageError, "tool_calls"),
    ("tool-calls-none", lambda s: s.add_assistant(tool_calls=None), InvalidMessageError, "tool_calls"),
    ("tool-calls-str", lambda s: s.add_assistant(tool_calls="c1"), InvalidMessageError, "tool_calls"),
    ("interrupted-str", lambda s: s.add_assistant("x", interrupted="yes"), InvalidMessageError, "interrupted"),
    ("pin-id-int", lambda s: s.pin("fact", pin_id=5), InvalidMessageError, "pin_id"),
    ("tool-result-bytes-id", lambda s: s.add_tool_result(bytearray(b"zz"), "x"), InvalidMessageError, "tool_call_id"),
    ("goal-lone-surrogate", lambda s: s.pin_goal("ship \ud800"), InvalidMessageError, "goal"),
    (
        "system-prompt-lone-surrogate",
        lambda s: setattr(s, "system_prompt", "\udc00"),
        InvalidMessageError,
        "system_prompt",
    ),
    ("read-archived-int", lambda s: s.read_archived(5), UsageError, "handle"),
    ("read-archived-none", lambda s: s.read_archived(None), UsageError, "handle"),
    ("set-context-none", lambda s: s.set_context(None), InvalidPolicyError, "items"),
    ("set-context-config", lambda s: s.set_context([], config=5), InvalidPolicyError, "config"),
    ("subscribe-not-callable", lambda s: s.subscribe(5), UsageError, "listener"),
    ("subscribe-unknown-type", lambda s: s.subscribe(print, "context_updated"), UsageError, "event_type"),
]


@pytest.mark.parametrize(("name", "call", "error", "field"), CASES, ids=[case[0] for case in CASES])
def test_public_session_methods_raise_typed_errors_naming_the_argument(
    name: str, call: Callable[[Any], Any], error: type[UsageError], field: str
) -> None:
    session = with_history(make())
    history, originals, state = session.history, session.originals(), session.state
    with pytest.raises(error) as info:
        call(session)
    assert info.value.field == field, name
    assert str(info.value).startswith(f"{field}: ")
    assert session.history == history  # refused before anything changed
    assert session.originals() == originals
    assert session.state == state


def test_sync_names_the_type_it_expected_and_got() -> None:
    with pytest.raises(InvalidMessageError, match=r"^messages\[0\]: expected ctxbudget\.Message, got str$"):
        make().sync(["text"])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("argument", "value", "error"),
    [
        ("summarizer", 5, InvalidPolicyError),
        ("summarizer", "extractive", InvalidPolicyError),
        ("registry", 5, InvalidPolicyError),
        ("compact_instructions", 5, InvalidMessageError),
        ("providers", 5, InvalidPolicyError),
        ("providers", None, InvalidPolicyError),
        ("system_prompt", "be \ud800 terse", InvalidMessageError),
        ("session_id", "ses-\ud800", InvalidPolicyError),
        ("compact_instructions", "\ud800", InvalidMessageError),
    ],
)
def test_constructor_parts_of_the_wrong_type_are_refused_up_front(
    argument: str, value: object, error: type[UsageError]
) -> None:
    with pytest.raises(error) as info:
        ContextSession(max_tokens=8_000, **{argument: value})  # type: ignore[arg-type]
    assert info.value.field == argument
    assert str(info.value).startswith(f"{argument}: ")


def test_tuples_are_sequences_too() -> None:
    session = make()
    session.sync((Message(role="user", content="from a tuple"),))
    session.add_assistant(tool_calls=(ToolCall(id="c1", name="t", args={}),))
    session.add_tool_result("c1", "done")
    assert [m.role for m in session.history] == ["user", "assistant", "tool"]


@pytest.mark.parametrize("figure", [10**400])
def test_an_astronomic_usage_figure_reads_as_a_full_window_never_a_raw_overflow(figure: int) -> None:
    session = with_history(make())
    session.build_request()
    session.record_usage(figure)
    assert session.state.used_percentage == 100.0
    assert session.tracker.calibration.ratio == 4.0  # clamped, as any ratio past 4 is
    session.set_usage_floor(figure)
    assert session.state.used_percentage == 100.0
    restored = ContextSession.restore(session.snapshot().to_json(), counter=COUNTER)
    assert restored.state == session.state
