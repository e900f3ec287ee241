"""A model is asked for a summary a quarter smaller than the limit: the check that re-inserts what it dropped always
has room, even when the model fills all it was given with prose."""

from __future__ import annotations

import re

import pytest
from ctxbudget import ContextSession
from ctxbudget.compaction import _summary_runs
from ctxbudget.compaction._summary_runs import VERIFY_RESERVE
from ctxbudget.compaction.summarize import ExtractiveSummarizer, SummaryRequest
from ctxbudget.messages.tokens import TiktokenCounter

COUNTER = TiktokenCounter()


class VerboseModel:
    """Fills exactly the size it is asked for with prose that keeps none of the specifics."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def summarize(self, request: SummaryRequest) -> str:
        self.asked.append(request.max_tokens)
        words = ["The", "user", "and", "the", "assistant", "discussed", "several", "regions", "at", "length."]
        text = ""
        for i in range(10 * request.max_tokens):
            longer = f"{text} {words[i % len(words)]}".strip()
            if COUNTER.count_text(longer) > request.max_tokens:
                break
            text = longer
        return text


class RecordingLedger(ExtractiveSummarizer):
    def __init__(self) -> None:
        super().__init__(COUNTER)
        self.asked: list[int] = []

    def summarize(self, request: SummaryRequest) -> str:
        self.asked.append(request.max_tokens)
        return super().summarize(request)


def _session(summarizer: object) -> tuple[ContextSession, list[str]]:
    session = ContextSession(max_tokens=6_000, counter=COUNTER, system_prompt="You help.", summarizer=summarizer)
    planted: list[str] = []
    for t in range(40):
        planted.append(f"k{t * 37 % 1000}")
        session.add_user(f"FACT-{t}: the deploy key for region r{t} is {planted[-1]}. " + "filler words here " * 20)
        session.add_assistant(f"Noted region r{t}. " + "acknowledged " * 30)
        session.build_request()
    return session, planted


def test_a_model_is_asked_for_the_limit_less_the_reserve_and_the_ledger_for_at_least_the_whole_limit() -> None:
    model, ledger = VerboseModel(), RecordingLedger()
    limit = _session(model)[0].policy.summary_limit(6_000)
    _session(ledger)
    assert model.asked
    assert set(model.asked) == {limit - int(limit * VERIFY_RESERVE + 0.999)}
    assert ledger.asked
    assert all(asked >= limit for asked in ledger.asked)  # the whole limit, or the room the kept tail leaves


def _restored(session: ContextSession, planted: list[str]) -> int:
    summary = session.summary or ""
    live = " ".join(m.text for m in session.history)
    return sum(bool(re.search(rf"\b{key}\b", summary) and not re.search(rf"\b{key}\b", live)) for key in planted)


def test_facts_a_verbose_model_drops_are_put_back_in_the_room_it_was_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    session, planted = _session(VerboseModel())
    assert COUNTER.count_text(session.summary or "") <= session.policy.summary_limit(6_000)
    with_reserve = _restored(session, planted)
    monkeypatch.setattr(_summary_runs, "VERIFY_RESERVE", 0.0)  # the model may fill the whole limit
    without = _restored(*_session(VerboseModel()))
    assert with_reserve >= without + 4, (with_reserve, without)
