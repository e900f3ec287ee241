"""On real public transcripts, what a model needs to continue is still in the compacted request (issue 24).

A regression gate on the probe set of ``benchmarks/quality/real/`` (written from the transcripts, not from the
code): ctxbudget's default compaction to 30% and 10% of each transcript keeps at least 85% and 60% of the probes in
the request, pooled, more than ``trim_messages`` at the same budget, and not less than Claude Code's own summary on
the transcript that holds one; with ``search_archive`` and each probe's natural question (top 3), all of them at
both budgets.
"""

from __future__ import annotations

from functools import cache

import pytest

from benchmarks.bench_real import Outcome, budget_for, run_claude_code, run_ours, run_trim
from benchmarks.quality.real import RealTranscript, load_set

FLOORS = {0.3: 0.85, 0.1: 0.60}
SEARCH_FLOORS = {0.3: 1.0, 0.1: 1.0}
"""Probes in the request or in a top-3 hit of ``search_archive`` with the probe's own question (pooled)."""


@cache
def outcomes(fraction: float) -> tuple[tuple[Outcome, Outcome], ...]:
    return tuple((run_ours(t, budget_for(t, fraction)), run_trim(t, budget_for(t, fraction))) for t in load_set())


def _share(found: list[bool]) -> float:
    return sum(found) / len(found)


@pytest.mark.slow
@pytest.mark.parametrize("fraction", sorted(FLOORS))
def test_most_probes_stay_in_the_request_and_more_than_trim_keeps(fraction: float) -> None:
    pairs = outcomes(fraction)
    assert all(ours.error is None and ours.tokens <= ours.budget for ours, _ in pairs), [
        (ours.name, ours.error, ours.tokens, ours.budget) for ours, _ in pairs
    ]
    ours = _share([flag for outcome, _ in pairs for flag in outcome.found])
    trimmed = _share([flag for _, outcome in pairs for flag in outcome.found])
    assert ours >= FLOORS[fraction], f"{ours:.1%} of the probes in the request at {fraction:.0%}"
    assert ours > trimmed


@pytest.mark.slow
@pytest.mark.parametrize("fraction", sorted(SEARCH_FLOORS))
def test_what_compaction_took_out_a_models_own_question_finds_in_the_top_3(fraction: float) -> None:
    flags = [flag for ours, _ in outcomes(fraction) for flag in ours.recovered or ()]
    missed = [
        (ours.name, probe.question)
        for ours, _ in outcomes(fraction)
        for probe, flag in zip(load_set_by_name()[ours.name].probes, ours.recovered or (), strict=True)
        if not flag
    ]
    assert _share(flags) >= SEARCH_FLOORS[fraction], missed


@cache
def load_set_by_name() -> dict[str, RealTranscript]:
    return {transcript.name: transcript for transcript in load_set()}


@pytest.mark.slow
def test_not_below_claude_codes_own_summary_of_the_same_span() -> None:
    for transcript in load_set():
        theirs = run_claude_code(transcript)
        if theirs is None:
            continue
        ours = next(outcome for outcome, _ in outcomes(0.3) if outcome.name == transcript.name)
        assert sum(ours.found) >= sum(theirs.found), (transcript.name, sum(ours.found), sum(theirs.found))
