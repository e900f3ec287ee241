"""``session.state`` says where its figure comes from: our own count, whether that count is exact, the report."""

from __future__ import annotations

from ctxbudget import CharCounter, ContextSession, TiktokenCounter


def test_an_exact_counter_before_any_report_says_exact_and_reports_nothing() -> None:
    session = ContextSession(max_tokens=10_000, counter=TiktokenCounter(), system_prompt="Be brief.")
    session.add_user("hello there")
    state = session.state
    assert state.exact is True
    assert state.counted_tokens == session.counted_tokens() == state.used_tokens
    assert state.reported_tokens is None
    assert state.calibration_ratio == 1.0


def test_an_estimating_counter_with_a_higher_report_shows_the_report_and_the_learnt_ratio() -> None:
    session = ContextSession(max_tokens=10_000, counter=CharCounter())
    session.add_user("x" * 400)
    counted = session.build_request().tokens
    session.record_usage(counted * 2)
    state = session.state
    assert state.exact is False
    assert state.reported_tokens == counted * 2
    assert state.counted_tokens == counted
    assert state.calibration_ratio == 2.0
    assert state.used_tokens == counted * 2


def test_the_named_model_decides_exactness() -> None:
    assert ContextSession(model="gpt-4o").state.exact is True
    assert ContextSession(model="claude-sonnet-4-5").state.exact is False
