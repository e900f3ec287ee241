"""The phrase bonus a search adds to the units that can still rank: the query read as a phrase, and its code phrases.

A query of 2-8 words found as a phrase earns the summed weight of its words (one pattern, scanned in every unit that
can still rank: as costly as one more query term). Each code phrase the query names
(:func:`~ctxbudget.archive._phrases.code_spans`: ``_separable = True``) found as written earns the summed weight of its
terms; a query can name a great many, so their cost is bounded twice over, whatever the query:

* **Patterns.** At most :data:`MAX_CODE_PHRASES` code phrases are scanned for, the heaviest (ties: the first), and
  none is compiled before it is picked: a query of 178 operator spellings (``x=y x<y x<=y x!=y ...``) scans for 8.
* **Units.** Only the best :func:`scanned` units by score are scanned for code phrases (:data:`SCANNED_PER_HIT` per
  hit asked, at least :data:`MIN_SCANNED`); further down, a unit can earn the query's phrase only, so the search stops
  early where many units score alike. On the search benchmarks (``benchmarks/bench_search.py``,
  ``benchmarks/bench_real.py``) the deepest unit a bonus lifted into the top 3 was the 6th best by score.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from ._phrases import code_pattern, code_spans
from ._text import STOPWORDS, Tokenizer, analyze, cap_query, phrase_pattern, stem

__all__ = ["MAX_CODE_PHRASES", "MIN_SCANNED", "SCANNED_PER_HIT", "CodePhrase", "PhraseBonus", "scanned"]

MAX_CODE_PHRASES = 8
"""Code phrases of a query that are scanned for: the heaviest (ties: the first in the query). Like
:data:`~ctxbudget.archive._text.MAX_QUERY_TERMS` for terms, it bounds a search's scans per text whatever the query."""
SCANNED_PER_HIT = 4
"""Units scanned for code phrases per hit asked: the best ``SCANNED_PER_HIT * k`` by score (at least
:data:`MIN_SCANNED`)."""
MIN_SCANNED = 20
"""Fewest units scanned for code phrases, whatever ``k``: a bonus can lift a unit past several that outscore it."""


def scanned(k: int) -> int:
    """How many of the best-scoring units a search for ``k`` hits scans for code phrases."""
    return max(MIN_SCANNED, SCANNED_PER_HIT * k)


class CodePhrase(NamedTuple):
    """A code phrase scanned for: its span (lower-cased), its bonus and the pattern that finds it."""

    span: str
    weight: float
    pattern: re.Pattern[str]


class PhraseBonus:
    """The bonuses one query offers: the :meth:`most` a unit can earn, and what one unit's texts earn (:meth:`lift`).

    Args:
        query: the query as asked (read up to :data:`~ctxbudget.archive._text.MAX_QUERY_CHARS`).
        weights: each query term's weight; a phrase's bonus is the summed weight of its terms.
        tokenizer: the index's (a code phrase's terms are analyzed as the index analyzes them).
    """

    def __init__(self, query: str, weights: dict[str, float], tokenizer: Tokenizer) -> None:
        phrase = phrase_pattern(query)
        self._phrase: re.Pattern[str] | None = None
        self._phrase_weight = 0.0
        if phrase is not None:
            self._phrase_weight = sum(weights.get(stem(word), 0.0) for word in phrase[0] if word not in STOPWORDS)
            self._phrase = phrase[1] if self._phrase_weight else None
        weighed = [(span, _weight(span, weights, tokenizer)) for span in code_spans(cap_query(query))]
        heaviest = sorted((pair for pair in weighed if pair[1] > 0), key=lambda pair: -pair[1])[:MAX_CODE_PHRASES]
        self.codes = [CodePhrase(span, weight, code_pattern(span)) for span, weight in heaviest]
        """The code phrases scanned for, heaviest first."""
        self._codes_weight = sum(code.weight for code in self.codes)

    def most(self, codes: bool) -> float:
        """The largest bonus a unit can earn: from the query's phrase, and from its code phrases when ``codes``."""
        return self._phrase_weight + (self._codes_weight if codes else 0.0)

    def lift(self, score: float, texts: Iterable[str], codes: bool) -> float:
        """``score`` plus the bonus a unit whose texts are ``texts`` earns: each pattern found in any, counted once.

        The query's phrase is looked for, and its code phrases when ``codes``: one scan per text and pattern.
        """
        if not self.most(codes):
            return score
        lowered = [text.lower() for text in texts]
        if self._phrase is not None and any(self._phrase.search(text) for text in lowered):
            score += self._phrase_weight
        if codes:
            score += sum(code.weight for code in self.codes if any(code.pattern.search(text) for text in lowered))
        return score


def _weight(span: str, weights: dict[str, float], tokenizer: Tokenizer) -> float:
    """A code phrase's bonus: the summed weight of its distinct terms (``_separable = True``: both words')."""
    return sum(weights.get(term, 0.0) for term in dict.fromkeys(analyze(tokenizer(span))))
