"""A model's summary is checked against the cumulative offline ledger: what it forgot from earlier summaries is
re-inserted, not only what it dropped from the span it was given.

A model rewrites the whole summary at every compaction, so a fact kept by the first summary can vanish from the third
one: the check covers the previous summary's items too.
"""

from __future__ import annotations

import re

from ctxbudget import ContextSession, Message
from ctxbudget.summarize import ExtractiveSummarizer, SummaryRequest, verify_summary
from ctxbudget.tokens import TiktokenCounter

COUNTER = TiktokenCounter()


class ForgetfulModel:
    """Summarizes only the span it is given, as if it had never seen the previous summary."""

    def __init__(self) -> None:
        self.calls = 0

    def summarize(self, request: SummaryRequest) -> str:
        self.calls += 1
        return ExtractiveSummarizer(COUNTER).summarize(request.model_copy(update={"previous_summary": None}))


def test_facts_an_earlier_summary_kept_survive_a_model_that_forgets_them() -> None:
    model = ForgetfulModel()
    session = ContextSession(max_tokens=6_000, counter=COUNTER, system_prompt="You help.", summarizer=model)
    planted: list[str] = []
    for t in range(60):
        fact = f"FACT-{t}: the deploy key for region r{t} is k{t * 37 % 1000}"
        planted.append(f"k{t * 37 % 1000}")
        session.add_user(f"{fact}. Also, " + "some filler context words " * 20)
        session.add_assistant(f"Noted region r{t}. " + "acknowledged " * 30)
        session.build_request()
    assert model.calls >= 3
    summary = session.summary or ""
    live = " ".join(m.text for m in session.history)
    kept = [key for key in planted if re.search(rf"\b{key}\b", summary) or re.search(rf"\b{key}\b", live)]
    assert len(kept) == len(planted)


def test_a_superseded_fact_counts_as_kept_when_the_summary_has_its_current_value() -> None:
    """The check looks for the value now, not the one it replaced: a model that wrote only the update is not
    padded with the ledger's line (whose ``(was: ...)`` note names the old value)."""
    messages = (
        Message(role="user", content="FACT-3: the deploy region is us-east-1."),
        Message(role="assistant", content="ok"),
        Message(role="user", content="FACT-3: the deploy region is eu-west-2."),
        Message(role="assistant", content="ok"),
    )
    request = SummaryRequest(messages=messages, max_tokens=2_000)
    summary = "The user moved the deploy region (FACT-3) to eu-west-2."
    assert verify_summary(summary, request, counter=COUNTER, max_tokens=2_000) == summary
    stale = "The deploy region (FACT-3) is us-east-1."  # the old value only: the current one is put back
    assert "eu-west-2" in verify_summary(stale, request, counter=COUNTER, max_tokens=2_000)
