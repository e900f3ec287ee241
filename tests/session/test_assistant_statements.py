"""What an assistant message contributes to a summary: decisions with what was decided, findings with something
specific, and nothing for narration or a status ("The fix is complete.")."""

from __future__ import annotations

import pytest
from ctxbudget.compaction.statements import assistant_statements


@pytest.mark.parametrize(
    "text",
    [
        "The fix is confirmed.",
        "The fix is complete.",
        "The fix is correct and minimal.",
        "The bug is confirmed.",
        "The fix is in place.",
        "Let me now read the key files I'll be modifying.",
    ],
)
def test_a_status_or_narration_is_no_statement(text: str) -> None:
    assert assistant_statements(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "The fix is to rebuild the worktree index.",
        "The fix is simple: change `= 1` to `= right`.",
        "The root cause was a stale cache entry.",
        "Going with option 2.",
        "We decided to use Postgres for the ledger.",
    ],
)
def test_a_decision_says_what_was_decided(text: str) -> None:
    assert [(s.kind, s.text) for s in assistant_statements(text)] == [("decision", text)]


def test_a_summary_of_a_run_that_keeps_confirming_its_fix_has_one_decision() -> None:
    text = (
        "The fix is simple: change `cright[...] = 1` to `cright[...] = right`. The fix is confirmed. "
        "The fix is correct and minimal. The fix is in place. The fix is complete."
    )
    assert [s.kind for s in assistant_statements(text)] == ["decision"]


def test_a_question_ending_on_the_answers_it_offers_is_no_finding() -> None:
    # tau-bench retail (third held-out round): "Do you confirm? (yes/no)" stood among the findings.
    said = "Do you confirm to proceed with this modification? (yes/no)"
    assert assistant_statements(said) == []
    assert assistant_statements("The refund went to gift card 3491931 (yes: the default).") != []  # a finding
