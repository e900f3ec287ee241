"""The archive index as it was before the question-aware ranking (main at 43099e1), kept to measure against.

A frozen copy of ``shared/ctxbudget/archive/search.py`` at that commit (rendering left out): BM25 over
identifier-aware tokens, every token scored (function words included), one hit per archived message (a call and its
result are separate hits), the whole query as a phrase.
"""

from __future__ import annotations

import heapq
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxbudget.errors import InvalidPolicyError
from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:  # archive.py imports this module; entries are only read here
    from ctxbudget.archive import ArchiveEntry

__all__ = ["ArchiveHit", "ArchiveIndex", "tokenize"]

Tokenizer = Callable[[str], list[str]]
"""Text -> tokens; :func:`tokenize` is the default."""

K1 = 1.2
"""BM25 term-frequency saturation."""
B = 0.75
"""BM25 length normalization."""
EXCERPT_CHARS = 300
"""Most characters in a hit's excerpt, ellipses included."""
MAX_K = 100
"""Most hits one search returns."""
_MAX_MATCHES = 1000
"""Occurrences of one term scanned when placing an excerpt (a huge log is not scanned to its end for a common word)."""

_WORD = re.compile(r"\w+")
_RUN = re.compile(r"\w+(?:[./@\-]+\w+)*")
"""A word, or an identifier-like compound of words joined by ``. / @ -`` (a path, a dotted name, ``eu-west-3``)."""
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_EDGE_AFTER = r"(?![^\W_])"


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens, identifier-like compounds kept whole, path suffixes, snake/camel parts.

    ``"See src/pkg_3/module_8.py in eu-west-3"`` gives the words (``see``, ``src``, ``pkg_3``, ...), the compounds
    ``src/pkg_3/module_8.py`` and ``eu-west-3``, the suffixes ``pkg_3/module_8.py`` and ``module_8.py``, and the
    parts ``pkg``, ``3``, ``module``, ``8``. Queries are tokenized the same way.
    """
    runs = _RUN.findall(text)
    tokens = "\n".join(runs).lower().split("\n") if runs else []  # one C-level lower() for every run
    for run, count in Counter(runs).items():  # each distinct run is expanded once, its tokens repeated
        if not run.isalnum() or not (run.islower() or run.isupper() or run.isdigit()):  # plain words: nothing more
            tokens.extend(_expand(run) * count)
    return tokens


def _expand(run: str) -> list[str]:
    """The extra tokens of one run: a compound's words and path suffixes, and every word's snake/camel parts."""
    words = _WORD.findall(run)
    if len(words) == 1:
        return _parts(run)
    tokens = [word.lower() for word in words]
    if "/" in run:
        tokens.extend(_suffixes(run.lower()))
    for word in words:
        tokens.extend(_parts(word))
    return tokens


def _suffixes(compound: str) -> list[str]:
    """``a/b/c.py`` -> ``b/c.py``, ``c.py``: a path's tails, so a file is found by its name or partial path."""
    parts = compound.split("/")
    return [suffix for i in range(1, len(parts)) if _WORD.match(suffix := "/".join(parts[i:]))]


def _parts(word: str) -> list[str]:
    """The lower-cased parts of a snake_case or camelCase word (``pkg_3`` -> ``pkg``, ``3``); ``[]`` for others."""
    pieces = [piece for piece in word.split("_") if piece]
    parts: list[str] = []
    for piece in pieces:
        camel = piece.isascii() and not piece.isupper() and piece[1:] != piece[1:].lower()
        if camel:
            parts.extend(part.lower() for part in _CAMEL_PART.findall(piece))
        elif len(pieces) > 1 or piece != word:
            parts.append(piece.lower())
    return parts


def check_search_args(query: object, k: object) -> None:
    """Raise :class:`InvalidPolicyError` naming ``query`` or ``k`` unless they are a non-empty str and 1..100."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidPolicyError(f"query: must be a non-empty str, got {query!r}", field="query")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidPolicyError(f"k: must be an int in 1..{MAX_K}, got {k!r}", field="k")


class ArchiveHit(BaseModel):
    """One archived original that matches a query; read it back whole with its ``handle``."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    handle: str
    """Archive handle of the fullest archived version (``ctx://archive/...``); reading it returns the original."""
    message_id: str | None
    """Id of the archived message; ``None`` for an archived text (a bounded tool output, evidence)."""
    role: str | None
    """Role of the archived message (``user``, ``assistant``, ``tool``, ``system``); ``None`` for a text."""
    reason: str
    """Why it was archived (``bounded``, ``cleared``, ``summarized``, ...)."""
    source: str | None
    """Where the text came from: the tool name of a tool output, when known."""
    text: str
    """An excerpt (at most 300 chars) centred on the best-matching region, with ``…`` where it was cut."""
    score: float
    """BM25 relevance (plus the phrase bonus); higher is better, comparable only within one search."""


def _searchable(entry: ArchiveEntry) -> str:
    """The text indexed for an entry: its text, plus the calls of an assistant message (name and JSON args)."""
    message = entry.message
    if message is None or not message.tool_calls:
        return entry.full_text
    calls = "\n".join(f"{call.name} {call.args_json()}" for call in message.tool_calls)
    return f"{entry.full_text}\n{calls}" if entry.full_text else calls


def _labels(entry: ArchiveEntry) -> str:
    """Names indexed beside the text: the entry's source and the message's author or tool name."""
    names = [entry.source, entry.message.name if entry.message is not None else None]
    return " ".join(name for name in names if name)


def _source(entry: ArchiveEntry) -> str | None:
    message = entry.message
    if entry.source is None and message is not None and message.role == "tool":
        return message.name
    return entry.source


@dataclass(frozen=True)
class _Doc:
    """One indexed entry: the entry itself (not a copy), its dedupe group and its length in tokens."""

    entry: ArchiveEntry
    group: str
    length: int


class ArchiveIndex:
    """An incremental BM25 index over archive entries, one hit per archived message.

    :meth:`add` tokenizes one entry, once (O(its text)), and touches no other entry; :meth:`search` costs the
    postings of the query's terms plus an excerpt per returned hit. Entries of the same message archived for several
    reasons (``.bounded`` then ``.summarized``) are one hit: the best score of any of them, reported with the handle
    of the fullest text. Not thread-safe on its own; :class:`~ctxbudget.archive.store.Archive` serializes access.

    Args:
        tokenizer: text -> tokens for entries and queries (default :func:`tokenize`).
    """

    def __init__(self, *, tokenizer: Tokenizer = tokenize) -> None:
        self._tokenizer = tokenizer
        self._docs: list[_Doc] = []
        self._postings: dict[str, dict[int, int]] = {}
        self._groups: dict[str, list[int]] = {}
        self._total_length = 0

    def __len__(self) -> int:
        """Entries indexed so far."""
        return len(self._docs)

    def add(self, entry: ArchiveEntry) -> None:
        """Index one entry (appended after every entry already indexed)."""
        doc_id = len(self._docs)
        labels = _labels(entry)
        tokens = [*self._tokenizer(_searchable(entry)), *(self._tokenizer(labels) if labels else ())]
        for term, count in Counter(tokens).items():
            self._postings.setdefault(term, {})[doc_id] = count
        group = entry.message.id if entry.message is not None else entry.handle
        self._docs.append(_Doc(entry=entry, group=group, length=len(tokens)))
        self._groups.setdefault(group, []).append(doc_id)
        self._total_length += len(tokens)

    def search(self, query: str, k: int = 5) -> list[ArchiveHit]:
        """The ``k`` best hits for ``query``, best first (ties: archive order); ``[]`` when nothing matches.

        Raises:
            InvalidPolicyError: ``query`` is not a non-empty str, or ``k`` is not an int in 1..100.
        """
        check_search_args(query, k)
        terms = list(dict.fromkeys(self._tokenizer(query)))
        weights = {term: self._idf(term) for term in terms if term in self._postings}
        groups = self._group_scores(self._scores(weights))
        ranked = self._rank(groups, _phrase_pattern(query), weights, k)
        return [self._hit(group, score, weights) for score, group in ranked]

    def _idf(self, term: str) -> float:
        df = len(self._postings[term])
        return math.log(1.0 + (len(self._docs) - df + 0.5) / (df + 0.5))

    def _scores(self, weights: dict[str, float]) -> dict[int, float]:
        average = self._total_length / len(self._docs) if self._docs else 1.0
        scores: dict[int, float] = {}
        for term, idf in weights.items():
            for doc_id, tf in self._postings[term].items():
                norm = K1 * (1.0 - B + B * self._docs[doc_id].length / (average or 1.0))
                scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf * (K1 + 1.0) / (tf + norm)
        return scores

    def _group_scores(self, scores: dict[int, float]) -> dict[str, float]:
        groups: dict[str, float] = {}
        for doc_id, score in scores.items():
            group = self._docs[doc_id].group
            groups[group] = max(score, groups.get(group, 0.0))
        return groups

    def _first(self, group: str) -> int:
        return self._groups[group][0]

    def _fullest(self, group: str) -> int:
        """The group's entry with the longest text (the first of equals)."""
        return max(self._groups[group], key=lambda doc_id: len(self._docs[doc_id].entry.full_text))

    def _rank(
        self, groups: dict[str, float], phrase: _Phrase | None, weights: dict[str, float], k: int
    ) -> list[tuple[float, str]]:
        """The ``k`` best groups after the phrase bonus (the summed weight of the phrase's words, added once).

        Groups are visited best-first; the visit stops once even the bonus could not lift a group into the top
        ``k``, so only texts that can still rank are scanned for the phrase.
        """
        bonus = sum(weights.get(word, 0.0) for word in phrase.words) if phrase is not None else 0.0
        ordered = sorted(groups.items(), key=lambda item: (-item[1], self._first(item[0])))
        ranked: list[tuple[float, str]] = []
        floor: list[float] = []  # min-heap of the k best final scores so far
        for group, score in ordered:
            if len(floor) == k and score + bonus < floor[0]:
                break
            fullest = self._docs[self._fullest(group)].entry
            final = score + bonus if phrase is not None and phrase.found_in(fullest) else score
            ranked.append((final, group))
            (heapq.heappushpop if len(floor) == k else heapq.heappush)(floor, final)
        ranked.sort(key=lambda pair: (-pair[0], self._first(pair[1])))
        return ranked[:k]

    def _hit(self, group: str, score: float, weights: dict[str, float]) -> ArchiveHit:
        doc_id = self._fullest(group)
        entry = self._docs[doc_id].entry
        message = entry.message
        # To place the excerpt, a term repeated all over this text says less than one it holds once.
        local = {term: idf / (1.0 + math.log(self._postings[term].get(doc_id, 1))) for term, idf in weights.items()}
        return ArchiveHit(
            handle=entry.handle,
            message_id=message.id if message is not None else None,
            role=message.role if message is not None else None,
            reason=entry.reason,
            source=_source(entry),
            text=_excerpt(_searchable(entry), local),
            score=score,
        )


@dataclass(frozen=True)
class _Phrase:
    """A multi-word query's words (lower-cased) and a pattern matching them in order, apart only by punctuation."""

    words: tuple[str, ...]
    pattern: re.Pattern[str]

    def found_in(self, entry: ArchiveEntry) -> bool:
        return self.pattern.search(_searchable(entry).lower()) is not None


def _literal(term: str) -> str:
    """A pattern for ``term`` not preceded by a letter or digit; it starts with the literal, so ``re`` scans fast."""
    escaped = re.escape(term)
    return f"{escaped}(?<![^\\W_]{escaped})"


def _phrase_pattern(query: str) -> _Phrase | None:
    """The query as a phrase (matched in lower-cased text); ``None`` for fewer than two words."""
    words = _WORD.findall(query.lower())
    if len(words) < 2:  # a phrase is two words or more
        return None
    pattern = re.compile(_literal(words[0]) + "".join(r"[\W_]+" + re.escape(word) for word in words[1:]) + _EDGE_AFTER)
    return _Phrase(words=tuple(dict.fromkeys(words)), pattern=pattern)


def _best_span(text: str, weights: dict[str, float], width: int) -> tuple[int, int] | None:
    """The span (at most ``width`` chars) holding the most query weight (distinct terms); ``None`` if no term occurs."""
    if not weights:
        return None
    lower = text.lower()
    same = len(lower) == len(text)  # lower-casing kept every offset (it nearly always does)
    matches: list[tuple[int, int, str]] = []
    for term in weights:  # per term, so a rare term is found even after thousands of a common one
        pattern = re.compile(_literal(term) + _EDGE_AFTER, 0 if same else re.IGNORECASE)
        found = itertools.islice(pattern.finditer(lower if same else text), _MAX_MATCHES)
        matches.extend((m.start(), m.end(), term) for m in found)
    matches.sort()
    best: tuple[float, int, int] | None = None
    inside: Counter[str] = Counter()
    weight, left = 0.0, 0
    for right, (_, end, term) in enumerate(matches):
        weight += weights.get(term, 0.0) if inside[term] == 0 else 0.0
        inside[term] += 1
        while left < right and end - matches[left][0] > width:
            gone = matches[left][2]
            inside[gone] -= 1
            weight -= weights.get(gone, 0.0) if inside[gone] == 0 else 0.0
            left += 1
        if best is None or weight > best[0] + 1e-12:
            best = (weight, matches[left][0], end)
    return None if best is None else (best[1], best[2])


def _excerpt(text: str, weights: dict[str, float]) -> str:
    """At most :data:`EXCERPT_CHARS` of ``text`` centred on its best-matching span, ``…`` marking each cut."""
    if len(text) <= EXCERPT_CHARS:
        return text
    width = EXCERPT_CHARS - 2  # room for an ellipsis at each end
    span = _best_span(text, weights, width) or (0, 0)
    start = max(0, (span[0] + span[1] - width) // 2)
    end = min(len(text), start + width)
    start = max(0, end - width)
    return ("…" if start > 0 else "") + text[start:end] + ("…" if end < len(text) else "")
