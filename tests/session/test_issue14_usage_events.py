"""Issue 14 item 9: every change of usage emits a ``context_update`` (pins, system prompt, tools, goal, reserve)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.messages import ToolSchema
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.session import ContextSession
from ctxbudget.session.events import Event, EventType

COUNTER = TiktokenCounter()


def make(window: int = 8_000) -> ContextSession:
    return ContextSession(
        max_tokens=window, counter=COUNTER, system_prompt="sys", policy=CompactionPolicy(keep_recent_messages=4)
    )


def recorded(session: ContextSession, kind: EventType) -> list[Event]:
    events: list[Event] = []
    session.subscribe(events.append, kind)
    return events


TOOL = ToolSchema(name="grep", description="Search files.", parameters={"type": "object", "properties": {}})


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda s: s.pin("never push to main"), id="pin"),
        pytest.param(lambda s: setattr(s, "system_prompt", "a much longer system prompt than before"), id="system"),
        pytest.param(lambda s: setattr(s, "tools", [TOOL]), id="tools"),
        pytest.param(lambda s: s.pin_goal("ship the release"), id="pin_goal"),
        pytest.param(lambda s: s.build_request(reserve_tokens=500), id="reserve_tokens"),
    ],
)
def test_a_change_of_usage_emits_a_context_update(change: Callable[[ContextSession], object]) -> None:
    session = make()
    updates = recorded(session, "context_update")
    before = session.state.used_tokens
    change(session)
    assert session.state.used_tokens != before
    assert updates, "usage changed but no context_update was emitted"
    assert updates[-1].state == session.state  # type: ignore[attr-defined]
