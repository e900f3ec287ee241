"""An assistant restates what it found as it works: a later finding holding every informative token of an earlier
one (and little more) is that finding said again, one bullet; a finding about another value is not."""

from __future__ import annotations

from ctxbudget.compaction import _ledger_merge
from ctxbudget.compaction.salience import Salient
from ctxbudget.compaction.supersession import Subject, subject_of
from ctxbudget.compaction.textscan import informative_tokens


def _reader(text: str) -> tuple[Subject, list[str]]:
    subject = subject_of(text)
    return subject, _ledger_merge.posting_keys(subject)


def _kept(*texts: str) -> list[str]:
    items = [Salient("finding", text, None, order, informative_tokens(text)) for order, text in enumerate(texts)]
    return [item.text for item in _ledger_merge.merge(items, (), _reader)]


def test_a_restated_finding_is_one_bullet_in_its_later_wording() -> None:
    assert _kept(
        "So `_cstack` is called directly with Model objects in tests.",
        "So `_cstack` is also called directly from tests with Model objects.",
    ) == ["So `_cstack` is also called directly from tests with Model objects."]


def test_findings_about_different_values_both_stay() -> None:
    kept = _kept(
        "`isinstance(left, Model)` -> False (it's an ndarray)",
        "`isinstance(right, Model)` -> False (it's an ndarray)",
    )
    assert len(kept) == 2


def test_a_later_finding_that_adds_much_more_does_not_replace_a_short_one() -> None:
    short = "The staging db runs on port 5434 today."
    long = (
        "The staging db runs on port 5434 today, and the replica lags by two hours because its vacuum job "
        "never finished after the upgrade to Postgres 16 last week."
    )
    assert _kept(short, long) == [short, long]


def test_a_reworded_restatement_holding_every_value_is_one_bullet() -> None:
    # Claude Code session (entire explain): the same finding twice, reworded, 60 messages apart.
    earlier = (
        "To get the author for a checkpoint, we'd need to traverse the commit history of `entire/sessions` and find "
        "the commit that added/modified that checkpoint's directory."
    )
    later = (
        "To get author, we'd need to traverse `entire/sessions` commit history and find which commit touched each "
        "checkpoint's directory"
    )
    assert _kept(earlier, later) == [later]


def test_a_reworded_finding_with_another_value_is_not_a_restatement() -> None:
    # tau-bench task 46: two flights read alike but for the one value that matters (supersession aside).
    earlier = informative_tokens("Flight HAT082 from SFO to IAH departs at 08:00 with economy seats left.")
    later = informative_tokens("Flight HAT145 from SFO to IAH departs at 08:00 with economy seats still left.")
    assert not _ledger_merge._restates(later, earlier)
    same = informative_tokens("Flight HAT082 from SFO to IAH departs at 08:00 with a few economy seats left.")
    assert _ledger_merge._restates(same, earlier)
