"""What repeats in an agent's work is worth less after its first: the same failure from many commands, a monologue's
dozen specifics (mini-swe-agent on astropy: five ways round a missing ``erfa``, fifty findings of one trace)."""

from __future__ import annotations

from ctxbudget.compaction._ledger_select import Scored, Selection, _diminished
from ctxbudget.compaction._ledger_text import RESOLVED
from ctxbudget.compaction.salience import Salient
from ctxbudget.compaction.textscan import informative_tokens
from ctxbudget.messages import TiktokenCounter

MISSING = "ModuleNotFoundError: No module named 'erfa' (at line 11, in <module>)"


def _item(kind: str, text: str, order: int, key: str | None = None) -> Salient:
    return Salient(kind, text, key, order, informative_tokens(text))  # type: ignore[arg-type]


def test_errors_that_fail_the_same_way_are_worth_less_after_the_newest() -> None:
    """Five ways round one missing module: the newest keeps its value, the n-th newest 1/n; others keep theirs."""
    runs = [Scored(_item("error", f"bash: python try_{n}.py -> {MISSING}", n), 2.0, 20) for n in range(3)]
    resolved = Scored(_item("error", f"bash: python old.py -> {MISSING}{RESOLVED}", -1), 2.0, 20)
    other = Scored(
        _item("error", "bash: pip install erfa -> ERROR: No matching distribution found for erfa", 9), 2.0, 20
    )
    values = [entry.value for entry in _diminished([resolved, *runs, other])]
    assert values == [2.0 / 4, 2.0 / 3, 2.0 / 2, 2.0, 2.0]


def test_one_messages_findings_are_worth_less_after_its_best() -> None:
    """Ten findings of one message and one error from a call: at a tight budget, the error is not crowded out."""
    counter = TiktokenCounter()
    thinking = [_item("finding", f"So `_cstack_{n}` is called with `left_{n}` and `right_{n}` ndarrays.", 7)
                for n in range(10)]  # fmt: skip
    error = _item("error", f"bash: python setup.py build_ext --inplace -> {MISSING}", 6, key="bash: python setup.py")
    selection = Selection(counter, max_tokens=200, max_items=None, bonus=lambda item: 0.0)
    kept = selection.select([*thinking, error], None, None)
    assert error.text in [entry.item.text for entry in kept]
    assert sum(entry.item.kind == "finding" for entry in kept) < len(thinking)
    # The n-th best finding of a message keeps 1/n of its value; findings of other messages, and errors, keep theirs.
    same = [Scored(item, value, 10) for item, value in zip(thinking[:3], (3.0, 6.0, 2.0), strict=True)]
    apart = [Scored(_item("finding", f"`x_{n}` is set", n), 3.0, 10) for n in range(3)]
    assert [entry.value for entry in _diminished(same)] == [3.0 / 2, 6.0, 2.0 / 3]
    assert [entry.value for entry in _diminished(apart)] == [3.0, 3.0, 3.0]
