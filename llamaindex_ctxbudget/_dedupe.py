"""Duplicate detection for retrieved texts: exact (same whitespace-normalized text) and near (shingle Jaccard).

The decision is the plain one: walk the texts best-ranked first; a text duplicates the first *kept* text (in that
order) that has the same whitespace-normalized text (exact) or whose shingle Jaccard similarity with it reaches the
threshold (near); otherwise it is kept. :func:`find_duplicates` makes exactly that decision without comparing every
text with every kept text:

* exact duplicates are found by a dict from the normalized text's digest;
* near duplicates by *prefix filtering*: shingles are put in one global order, rarest in the batch first. If
  ``jaccard(a, b) >= t`` the sets share at least ``ceil(t * |a|)`` shingles (since ``|a & b| >= t * |a | b|``), and
  then the first ``|a| - ceil(t * |a|) + 1`` shingles of ``a`` (its *prefix*) and the prefix of ``b`` share a
  shingle: the smallest shared one. So each kept text is indexed under its prefix shingles only, a text is compared
  (:func:`jaccard`, exactly) only with the kept texts found under its own prefix shingles, and no near duplicate is
  missed. The bound is computed with a little slack, so float rounding can only make a prefix longer.

Rare shingles come first, so prefixes hold what is particular to a text, not the boilerplate every text shares, and
unrelated texts meet in no posting list: the work grows with the number of texts, not its square.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Match", "find_duplicates", "jaccard", "normalized_digest", "shingles"]

_WORD = re.compile(r"\w+", re.UNICODE)
_CHAR_MARK = "\x00"
"""Starts every character shingle: word shingles are made of word characters and spaces, so they never equal one."""
_SLACK = 1e-9
"""Relative slack on the shared-shingle bound, far above float rounding: prefixes are never too short."""


def shingles(text: str, size: int = 5) -> frozenset[int]:
    """Hashes of the ``size``-word shingles of ``text`` (lower-cased words; at most ``size`` words give one shingle).

    A text with no word characters (symbols, emoji, punctuation only) is compared on its characters instead: the
    hashes of the ``size``-character shingles of its whitespace-normalized text (one shingle when it is shorter).
    An empty or whitespace-only text has no shingles.
    """
    words = [w.lower() for w in _WORD.findall(text)]
    if words:
        if len(words) <= size:
            return frozenset({hash(" ".join(words))})
        return frozenset(hash(" ".join(words[i : i + size])) for i in range(len(words) - size + 1))
    chars = " ".join(text.split())
    if not chars:
        return frozenset()
    if len(chars) <= size:
        return frozenset({hash(_CHAR_MARK + chars)})
    return frozenset(hash(_CHAR_MARK + chars[i : i + size]) for i in range(len(chars) - size + 1))


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """``|a & b| / |a | b|`` (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def normalized_digest(text: str) -> str:
    """SHA-256 of ``text`` with its whitespace runs collapsed to one space and trimmed: equal for the same text."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()


@dataclass(frozen=True)
class Match:
    """The better-ranked kept text a text duplicates."""

    index: int
    """Its position in the texts given."""
    similarity: float
    """Shingle Jaccard similarity (1.0 for an exact duplicate)."""
    exact: bool
    """The same whitespace-normalized text (else: a near duplicate by shingle Jaccard)."""


def find_duplicates(
    texts: Sequence[str], order: Sequence[int], *, threshold: float | None, size: int
) -> dict[int, Match]:
    """Position of each duplicate text -> what it duplicates (see the module docstring for the decision).

    Args:
        texts: the texts.
        order: their positions, best-ranked first (each once).
        threshold: Jaccard similarity at or above which texts are near duplicates; ``None``: exact only.
        size: words (or characters, for texts without words) per shingle.
    """
    grams = [shingles(text, size) if threshold is not None else frozenset[int]() for text in texts]
    index = _Index(grams, threshold)
    found: dict[int, Match] = {}
    for position in order:
        digest, prefix = normalized_digest(texts[position]), index.prefix(position)
        match = index.match(position, digest, prefix)
        if match is None:
            index.keep(position, digest, prefix)
        else:
            found[position] = match
    return found


class _Index:
    """The kept texts, by digest and by prefix shingle, in the order they were kept."""

    def __init__(self, grams: list[frozenset[int]], threshold: float | None) -> None:
        self._grams = grams
        self._threshold = threshold
        frequency: dict[int, int] = {}
        for gram_set in grams:
            for gram in gram_set:
                frequency[gram] = frequency.get(gram, 0) + 1
        self._rank = {gram: n for n, gram in enumerate(sorted(frequency, key=lambda g: (frequency[g], g)))}
        self._kept: list[int] = []  # text positions, in kept order
        self._by_digest: dict[str, int] = {}  # digest -> kept order of the text holding it
        self._postings: dict[int, list[int]] = {}  # prefix shingle -> kept orders of the texts it starts
        self._empty: int | None = None  # kept order of the first kept text without shingles

    def prefix(self, position: int) -> list[int]:
        """The shingles ``position``'s text is indexed and looked up under (none when only exact is looked for)."""
        gram_set = self._grams[position]
        if self._threshold is None or not gram_set:
            return []
        shared = max(1, math.ceil(self._threshold * len(gram_set) * (1 - _SLACK)))
        return sorted(gram_set, key=self._rank.__getitem__)[: len(gram_set) - shared + 1]

    def match(self, position: int, digest: str, prefix: list[int]) -> Match | None:
        """The first kept text (in kept order) that ``position``'s text duplicates, or ``None``."""
        first = self._by_digest.get(digest)
        best = None if first is None else Match(self._kept[first], 1.0, exact=True)
        if self._threshold is None:
            return best
        grams = self._grams[position]
        candidates: set[int] = set()
        if grams:
            for gram in prefix:
                candidates.update(self._postings.get(gram, ()))
        elif self._empty is not None:
            candidates.add(self._empty)
        for kept in sorted(candidates):
            if first is not None and kept >= first:
                break
            similarity = jaccard(grams, self._grams[self._kept[kept]])
            if similarity >= self._threshold:
                return Match(self._kept[kept], similarity, exact=False)
        return best

    def keep(self, position: int, digest: str, prefix: list[int]) -> None:
        """Add ``position``'s text to the kept texts."""
        order = len(self._kept)
        self._kept.append(position)
        self._by_digest.setdefault(digest, order)
        if self._threshold is None:
            return
        if not self._grams[position]:
            if self._empty is None:
                self._empty = order
            return
        for gram in prefix:
            self._postings.setdefault(gram, []).append(order)
