"""A search's cost is linear in the archived text and does not grow with the query past its term cap.

Operation counts, not timings: every pattern the search compiles is wrapped so that each scan records the length
of the text it scans times the words the pattern matches in sequence (a phrase of n words can cost n steps per
character); the tokenizer records the characters of the query it is given.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from ctxbudget import Archive
from ctxbudget.archive import ArchiveIndex, render_hits
from ctxbudget.archive._text import MAX_PHRASE_WORDS, MAX_QUERY_CHARS, MAX_QUERY_TERMS, tokenize
from ctxbudget.messages import Message
from ctxbudget.messages.tokens import TiktokenCounter

WORDS = [f"w{i:04d}x" for i in range(4_000)]
OUTPUT = "\n".join(" ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(12)) for i in range(5_500))  # ~400 KB


class _Counting:
    """A compiled pattern whose scans add ``len(text) * words`` to a shared tally."""

    def __init__(self, pattern: re.Pattern[str], tally: list[int]) -> None:
        self._pattern = pattern
        self._tally = tally
        self._words = 1 + pattern.pattern.count(r"[\W_]+")

    def _scan(self, text: str) -> None:
        self._tally[0] += len(text) * self._words

    def search(self, text: str, *args: Any) -> Any:
        self._scan(text)
        return self._pattern.search(text, *args)

    def finditer(self, text: str, *args: Any) -> Any:
        self._scan(text)
        return self._pattern.finditer(text, *args)

    def findall(self, text: str, *args: Any) -> Any:
        self._scan(text)
        return self._pattern.findall(text, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    tally = [0]
    compile_ = re.compile

    def counting_compile(pattern: Any, flags: int = 0) -> Any:
        return _Counting(compile_(pattern, flags), tally)

    monkeypatch.setattr(re, "compile", counting_compile)
    return tally


def _archive() -> Archive:
    archive = Archive()
    archive.put_text("big-output", OUTPUT, source="dump_logs", reason="bounded")
    for i in range(20):
        archive.put_message(Message(role="user", content=f"note {i}: {WORDS[i]} and {WORDS[i + 1]}"), "summarized")
    archive.search("warm up")  # index everything before counting
    return archive


def _cost(archive: Archive, scans: list[int], query: str) -> int:
    scans[0] = 0
    archive.search(query, k=5)
    return scans[0]


def test_a_3000_word_query_costs_what_a_capped_query_costs(scans: list[int]) -> None:
    archive = _archive()
    assert len(OUTPUT) > 400_000
    huge = " ".join(WORDS[:3_000])
    capped = " ".join(WORDS[:MAX_QUERY_TERMS])
    cost_huge, cost_capped = _cost(archive, scans, huge), _cost(archive, scans, capped)
    assert cost_capped > 0
    assert cost_huge <= cost_capped * 1.05
    text = len(OUTPUT) + sum(len(e.full_text) for e in archive.entries()[1:])
    assert cost_huge <= (MAX_QUERY_TERMS + MAX_PHRASE_WORDS) * text  # linear in the archived text


@pytest.mark.parametrize("words", [2, MAX_PHRASE_WORDS, MAX_PHRASE_WORDS + 1, 300, 3_000])
def test_no_scan_of_the_archive_grows_with_the_query_past_the_caps(scans: list[int], words: int) -> None:
    archive = _archive()
    query = " ".join(WORDS[:words])
    cost = _cost(archive, scans, query)
    text = sum(len(e.full_text) for e in archive.entries())
    assert cost <= (min(words, MAX_QUERY_TERMS) + min(words, MAX_PHRASE_WORDS)) * text


def test_the_tokenizer_reads_at_most_the_query_cap() -> None:
    seen: list[int] = []

    def counting(text: str) -> list[str]:
        seen.append(len(text))
        return tokenize(text)

    index = ArchiveIndex(tokenizer=counting)
    for entry in _archive().entries():
        index.add(entry)
    seen.clear()
    index.search("x " * 100_000 + WORDS[5], k=3)
    assert seen
    assert max(seen) <= MAX_QUERY_CHARS


def test_a_huge_query_is_not_echoed_by_render_hits() -> None:
    archive = _archive()
    query = " ".join(WORDS[:3_000])
    hits = archive.search(query, k=3)
    text = render_hits(hits, query)
    assert len(text.splitlines()[0]) < 400
    assert f"({len(query):,} chars)" in text.splitlines()[0]
    counter = TiktokenCounter()
    assert counter.count_text(render_hits(hits, query, max_tokens=60, counter=counter)) <= 60


@pytest.mark.parametrize("unit", ["a/", "src/pkg_3/"])
def test_a_deep_paths_index_tokens_grow_with_its_length_not_its_square(unit: str) -> None:
    # A tool output of one run "a/a/a/..." (50,000 characters) once made 25,000 path tails, each a token: 2.6 GB and
    # 13 s at 100,000 characters. Only the tails of the last few components are indexed.
    small, large = "".join(unit * 2_500), "".join(unit * 25_000)
    assert sum(map(len, tokenize(large))) <= 12 * sum(map(len, tokenize(small)))
    assert "src/pkg_3/y.py" in tokenize("x/src/pkg_3/y.py")
