"""Statements said many times over, with other numbers: each is measured against a bounded few, at any count.

Hostile-input review 2: 4,000 user messages "The count is N." (or "Actually, the budget is now $N.") made one
compaction measure each statement against every earlier one sharing a word: N * (N - 1) / 2 measurements, 36 s at
4,000 (timed in ``benchmarks/bench_hostile.py``). A statement is now measured against the newest few sharing each key;
what it replaces was said shortly before it. These tests count the measurements instead of timing them.
"""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget import ContextSession, Message, TiktokenCounter
from ctxbudget.compaction.supersession import SupersessionIndex

COUNTER = TiktokenCounter()
STATEMENTS = 2_000


@pytest.mark.parametrize(
    "said",
    [
        "The count is {n}.",
        "Actually, the budget is now ${n}.",
        "I prefer answers under {n} words.",
        "Step {n} is done.",
    ],
    ids=["restated", "changed", "preference", "counter"],
)
def test_a_statement_said_two_thousand_times_is_measured_a_bounded_number_of_times(
    said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured = 0
    score = SupersessionIndex._score

    def counted(self: SupersessionIndex, new: Any, old: Any) -> float:
        nonlocal measured
        measured += 1
        return score(self, new, old)

    monkeypatch.setattr(SupersessionIndex, "_score", counted)
    session = ContextSession(max_tokens=16_000, counter=COUNTER)
    for n in range(STATEMENTS):
        session.add(Message(role="user", content=said.format(n=n + 1000)), Message(role="assistant", content="ok"))
    session.compact()
    assert measured <= 200 * STATEMENTS, measured  # all pairs: 1,999,000
    sent = "\n".join(m.text for m in session.build_request().messages)
    assert said.format(n=STATEMENTS + 999) in sent  # the newest is in view
