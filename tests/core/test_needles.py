"""A pattern paired with its needles answers as the pattern does: every match holds one of them.

Each :class:`~ctxbudget.compaction._needles.Needled` of the compaction readers is held to its own pattern on texts
built from its literals (in every case), their neighbours, and the characters a case-insensitive pattern folds that
lower-casing does not (the long s, U+017F; the Kelvin sign, U+212A).
"""

from __future__ import annotations

import re

import ctxbudget.compaction._values as values_module
import ctxbudget.compaction.supersession as supersession_module
import pytest
from ctxbudget.compaction._needles import Needled
from hypothesis import given, settings
from hypothesis import strategies as st

NEEDLED = {
    "cue": supersession_module._CUE,
    "reason": supersession_module._REASON_CLAUSE,
    "time zone": values_module._TIME_ZONE,
    "month day": values_module._MONTH_DAY,
    "money": values_module._MONEY_WORDS,
}

_WORDS = (
    "update", "updated", "changed", "change it to", "changing the port to", "now", "for now", "right now", "know",
    "moved", "switched", "switching to", "rotated", "rotation is done", "rebased", "replaced", "instead", "actually",
    "correction", "corrected", "the correct", "revised", "no longer", "anymore", "retired", "from now on",
    "going forward", "rather", "renamed", "the new budget is", "New cap:", "new value", "not this but", "scratch that",
    "make it", "because", "since", "so that", "as it", "which keeps", "which matches", "UTC", "GMT", "Pacific Time",
    "Eastern Standard time", "PST", "EDT", "CEST", "CET", "BST", "JST", "AEST", "Europe/Berlin", "America/New_York",
    "January 5", "Jan. 12th, 2025", "Sept 3", "May 1", "Dec 31", "five hundred dollars", "twenty-five euros",
    "1,500.00 usd", "3 EUR", "ten pounds", "12 GBP", "The", "port", "5434", "a", "is", ":", ";", ",", ".", "!", "=",
    "-", "/", "'", " ", "  ", "\n", "\t", "\u017f", "\u212a", "İ", "é", "ß", "ﬁ", "UPDATE", "NOW", "SINCE", "Dollars",
    "\u017fince", "ma\u212ae it", "dollar\u017f", "Sc",
)  # fmt: skip
texts = st.lists(st.sampled_from(_WORDS), max_size=24).map(" ".join) | st.text(max_size=60)


@pytest.mark.parametrize("name", sorted(NEEDLED))
@settings(max_examples=400)
@given(text=texts)
def test_a_needled_pattern_finds_what_its_pattern_finds(name: str, text: str) -> None:
    needled = NEEDLED[name]
    expected = needled.pattern.search(text)
    found = needled.search(text)
    assert (found and found.span()) == (expected and expected.span())
    assert [m.span() for m in needled.finditer(text)] == [m.span() for m in needled.pattern.finditer(text)]
    assert needled.search(text, text.lower()) is not None if expected else needled.search(text, text.lower()) is None


def test_a_needle_left_out_is_caught_by_the_same_check() -> None:
    """The check above can fail: a needle set missing "now" misses the matches only "now" holds."""
    short = Needled(supersession_module._CUE.pattern, tuple(n for n in supersession_module._CUE.needles if n != "now"))
    text = "the deadline is now friday"
    assert supersession_module._CUE.pattern.search(text) is not None
    assert short.search(text) is None


def test_a_folding_pattern_searches_any_text_that_is_not_ascii() -> None:
    """The long s (U+017F) matches ``s`` when case is ignored, yet lower-casing keeps it: such a text is searched."""
    text = "\u017fince the move"
    assert supersession_module._REASON_CLAUSE.pattern.search(f"done {text}") is not None
    assert supersession_module._REASON_CLAUSE.search(f"done {text}") is not None


def test_needles_of_a_folding_pattern_are_lower_case() -> None:
    with pytest.raises(ValueError, match="lower-case"):
        Needled(re.compile("Now", re.IGNORECASE), ("Now",))
