"""A search's phrase scans are bounded whatever the query; a normal code phrase still earns its bonus.

Hostile review 5, finding 03: a 2,000-character query of distinct operator phrases (``xval=yval xval<yval ...``)
compiled one pattern per phrase, and the bonus any unit might still earn summed them all, so the early stop never
fired: every scored unit was scanned once per phrase (39 s on an 11 MB archive). Counts, not timings: every phrase
pattern a search makes (:mod:`ctxbudget.archive._bonus`) is wrapped so that each scan of a text is counted.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from typing import Any

import pytest
from ctxbudget import Archive
from ctxbudget.archive import _bonus
from ctxbudget.archive._bonus import MAX_CODE_PHRASES, MIN_SCANNED, PhraseBonus, scanned
from ctxbudget.archive._phrases import code_spans
from ctxbudget.archive._text import MAX_QUERY_CHARS, tokenize
from ctxbudget.messages import Message

OPERATORS = ["".join(p) for r in (1, 2, 3) for p in itertools.product("=<>!+*%&|^~", repeat=r)]
HOSTILE = " ".join(f"xval{op}yval" for op in OPERATORS)[:MAX_QUERY_CHARS]
"""The review's query: one distinct code phrase per operator spelling, all of the same two words."""
FILLER = " ".join(f"word{i} xval = yval + {i}; call(xval)" for i in range(40))
"""A text every phrase-free unit shares: both words apart and together (``xval = yval``), many times."""


class _Counting:
    """A compiled pattern that counts its scans under its kind (``code`` or ``phrase``)."""

    def __init__(self, pattern: re.Pattern[str], tally: Counter[str], kind: str) -> None:
        self._pattern = pattern
        self._tally = tally
        self._kind = kind
        tally[f"{kind} patterns"] += 1

    def search(self, text: str, *args: Any) -> Any:
        self._tally[self._kind] += 1
        return self._pattern.search(text, *args)

    def finditer(self, text: str, *args: Any) -> Any:
        self._tally[self._kind] += 1
        return self._pattern.finditer(text, *args)

    def findall(self, text: str, *args: Any) -> Any:
        self._tally[self._kind] += 1
        return self._pattern.findall(text, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Texts scanned for code phrases (``code``) and for the query's phrase (``phrase``), and the patterns made."""
    tally: Counter[str] = Counter()
    code_pattern, phrase_pattern = _bonus.code_pattern, _bonus.phrase_pattern

    def counting_code(span: str) -> Any:
        return _Counting(code_pattern(span), tally, "code")

    def counting_phrase(query: str) -> Any:
        phrase = phrase_pattern(query)
        return None if phrase is None else (phrase[0], _Counting(phrase[1], tally, "phrase"))

    monkeypatch.setattr(_bonus, "code_pattern", counting_code)
    monkeypatch.setattr(_bonus, "phrase_pattern", counting_phrase)
    return tally


def _say(archive: Archive, text: str) -> Message:
    message = Message(role="assistant", id=f"m{len(archive)}", content=text)
    archive.put_message(message, "summarized")
    return message


def _archive(units: int) -> Archive:
    archive = Archive()
    for i in range(units):
        _say(archive, f"note {i}: {FILLER}")
    archive.search("warm up")  # index everything before counting
    return archive


def _count(archive: Archive, scans: Counter[str], query: str, k: int) -> Counter[str]:
    scans.clear()
    archive.search(query, k=k)
    return Counter(scans)


def test_the_review_query_holds_far_more_phrases_than_are_scanned_for() -> None:
    assert len(code_spans(HOSTILE)) > 20 * MAX_CODE_PHRASES
    bonus = PhraseBonus(HOSTILE, {"xval": 1.0, "yval": 1.0}, tokenize)
    assert len(bonus.codes) == MAX_CODE_PHRASES
    assert bonus.most(True) == pytest.approx(2.0 * MAX_CODE_PHRASES)
    assert bonus.most(False) == 0.0  # too many words to be read as a phrase: past the best units, no bonus


def test_the_heaviest_code_phrases_are_kept_wherever_they_are_in_the_query() -> None:
    light = " ".join(f"aval{op}bval" for op in OPERATORS[:30])
    bonus = PhraseBonus(f"{light} zval == qval", {"aval": 0.1, "bval": 0.1, "zval": 3.0, "qval": 2.0}, tokenize)
    assert bonus.codes[0].span == "zval == qval"
    assert [code.weight for code in bonus.codes] == pytest.approx([5.0] + [0.2] * (MAX_CODE_PHRASES - 1))


@pytest.mark.parametrize("k", [1, 5, 30])
@pytest.mark.parametrize("query", [HOSTILE, "xval = yval", "why is `xval = yval + 3` set", "xval yval"])
def test_code_phrase_scans_do_not_grow_with_the_query_or_the_archive(scans: Counter[str], query: str, k: int) -> None:
    units = 6 * scanned(k)
    small, large = _count(_archive(units // 2), scans, query, k), _count(_archive(units), scans, query, k)
    assert small["code"] == large["code"]  # every unit scores alike: only the best scanned(k) are scanned
    assert large["code"] <= MAX_CODE_PHRASES * scanned(k)  # one part per unit, one scan per part and code phrase
    assert large["code patterns"] <= MAX_CODE_PHRASES
    assert large["phrase"] <= units  # the query's own phrase (2-8 words): one scan per unit that can still rank
    assert large["phrase patterns"] <= 1


def test_the_review_query_scans_no_more_than_its_heaviest_phrases(scans: Counter[str]) -> None:
    archive = _archive(4 * MIN_SCANNED)
    heaviest = " ".join(code.span for code in PhraseBonus(HOSTILE, {"xval": 1.0, "yval": 1.0}, tokenize).codes)
    hostile, alone = _count(archive, scans, HOSTILE, 5), _count(archive, scans, heaviest, 5)
    assert hostile == alone
    assert 0 < sum(hostile[kind] for kind in ("code", "phrase")) <= MAX_CODE_PHRASES * scanned(5)


def test_a_code_phrase_still_lifts_the_unit_that_holds_it() -> None:
    archive = Archive()
    for i in range(12):
        _say(archive, f"Step {i}: the build ran and the tests passed.")
    apart = _say(archive, "_separable is read here; True is what _separable gives when True; _separable again.")
    together = _say(archive, "That's Fittable1DModel: it has _separable = True, so Linear1D inherits it.")
    assert archive.search("True _separable sets which class", k=1)[0].message_id == apart.id  # the words alone
    assert archive.search("which class sets _separable = True", k=1)[0].message_id == together.id
    assert archive.search("which class sets `_separable = True`", k=1)[0].message_id == together.id


def test_the_query_as_a_phrase_still_lifts_a_unit_below_the_best_scanned() -> None:
    archive = Archive()
    for i in range(3 * MIN_SCANNED):  # both words, apart, in every log line
        _say(archive, f"deploy step {i} region=us-east-1 deploy ok, region ok")
    target = _say(archive, "Decision: the deploy region for billing is eu-west-3, agreed with the team last week.")
    alone = [hit.message_id for hit in archive.search("region deploy", k=len(archive))]  # the words alone
    assert alone.index(target.id) >= scanned(1)
    assert archive.search("deploy region", k=1)[0].message_id == target.id


def test_the_review_query_finds_the_top_hit_its_heaviest_phrases_find() -> None:
    archive = Archive()
    for i in range(30):
        _say(archive, f"Step {i}: the build ran and the tests passed.")
    for i in range(4):  # the words apart, more often than the target holds them
        _say(archive, f"xval and yval, read {i}: yval then xval, and xval beside yval.")
    target = _say(archive, "the loop swaps them when xval<yval holds.")
    heaviest = " ".join(code.span for code in PhraseBonus(HOSTILE, {"xval": 1.0, "yval": 1.0}, tokenize).codes)
    assert "xval<yval" in heaviest.split()
    assert archive.search("yval xval and then", k=1)[0].message_id != target.id  # the words alone rank it lower
    assert archive.search(heaviest, k=1)[0].message_id == target.id
    assert archive.search(HOSTILE, k=1)[0].message_id == target.id
    assert [hit.handle for hit in archive.search(HOSTILE, k=3)] == [hit.handle for hit in archive.search(heaviest, k=3)]
