"""Issue 14 item 8: the usage reading is never below our own count of the request as it stands, and calibration
(which also sets the compaction target) only ever scales that count up."""

from __future__ import annotations

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.session import ContextSession

COUNTER = TiktokenCounter()


def make(window: int = 8_000) -> ContextSession:
    return ContextSession(
        max_tokens=window, counter=COUNTER, system_prompt="sys", policy=CompactionPolicy(keep_recent_messages=4)
    )


def test_a_provider_reporting_fewer_tokens_never_pulls_usage_below_our_own_count() -> None:
    session = make(window=100_000)
    for n in range(6):
        session.add_user(f"question {n} " + "word " * 40)
        session.add_assistant(f"answer {n} " + "text " * 40)
    counted = session.build_request().tokens
    session.record_usage(counted // 2)
    assert session.state.used_tokens >= session.counted_tokens() == counted
    session.add_user("one more " * 20)
    assert session.state.used_tokens >= session.counted_tokens()


def test_a_low_report_does_not_inflate_the_compaction_target_past_the_window() -> None:
    session = make(window=4_000)
    session.add_user("hello")
    session.record_usage(session.build_request().tokens // 4)
    assert session.tracker.calibration.ratio >= 1.0  # calibration only ever scales our count up
    for n in range(40):
        session.add_user(f"question {n} " + "word " * 40)
        session.add_assistant(f"answer {n} " + "text " * 40)
    request = session.build_request()  # compacts; must land under the target, not past the hard stop
    assert request.compaction is not None
    assert request.state.used_tokens <= session.policy.target * session.max_tokens


def test_a_higher_report_still_calibrates_and_is_trusted() -> None:
    session = make(window=100_000)
    session.add_user("hello " * 100)
    counted = session.build_request().tokens
    session.record_usage(counted * 2)
    assert session.tracker.calibration.ratio == pytest.approx(2.0)
    assert session.state.used_tokens >= counted * 2
