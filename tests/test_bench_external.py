"""The third-party suite holds: compaction-conformance-kit 0.8.0 on ctxbudget's default compaction (issue 24).

A regression gate on what survives, not a timing: the kit's budget benchmark (randomized suite for survival, its
semantic and held-out suites for paraphrased updates), seeds 1-12, five rounds, through the adapter of
``benchmarks/bench_external.py``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

pytest.importorskip("compaction_kit")

from compaction_kit.benchmark import run_budget_benchmark
from compaction_kit.canaries import CanaryType
from compaction_kit.cli import COMPACTORS
from compaction_kit.runner import run_conformance
from compaction_kit.session import build_seeded_session

from benchmarks.bench_external import SEEDS, CtxbudgetKitCompactor, stale_unmarked


@cache
def entries(budget: float) -> dict[str, dict[str, Any]]:
    compactors = (
        {"ctxbudget": CtxbudgetKitCompactor, **COMPACTORS} if budget == 0.2 else {"ctxbudget": CtxbudgetKitCompactor}
    )
    payload = run_budget_benchmark(compactors, budgets=(budget,), seeds=SEEDS, rounds=5)
    return {entry["compactor"]: entry for entry in payload["entries"]}


@pytest.mark.slow
def test_at_30_percent_nearly_every_canary_survives_and_every_update_is_resolved() -> None:
    ours = entries(0.3)["ctxbudget"]
    assert ours["budget_compliant"], ours["max_output_to_budget"]
    assert ours["randomized"]["overall_final_survival"] >= 0.95
    assert ours["semantic"]["resolved_rate"] >= 0.90
    assert ours["semantic"]["distinct_pair_rate"] == 1.0  # look-alike items are not merged
    unmarked, conflicts = stale_unmarked(CtxbudgetKitCompactor, 0.3, SEEDS)
    assert conflicts == 192
    assert unmarked == 0


@pytest.mark.slow
def test_at_20_percent_it_fits_and_keeps_at_least_what_the_best_builtin_keeps() -> None:
    found = entries(0.2)
    ours = found.pop("ctxbudget")
    assert ours["budget_compliant"], ours["max_output_to_budget"]
    best = max(entry["randomized"]["overall_final_survival"] for entry in found.values())
    assert ours["randomized"]["overall_final_survival"] >= best


@pytest.mark.slow
def test_at_10_percent_the_request_still_fits_the_budget() -> None:
    assert entries(0.1)["ctxbudget"]["budget_compliant"]


def test_on_the_seeded_session_every_type_survives_the_first_round_at_30_percent() -> None:
    run = run_conformance(build_seeded_session(), CtxbudgetKitCompactor(), rounds=1, budget_fraction=0.3)
    first = run.rounds[0]
    assert first.within_budget
    for ctype in CanaryType:
        assert first.survival_by_type[ctype.value] >= 0.9, (ctype.value, first.survival_by_type)
