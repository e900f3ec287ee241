"""Ranking archived originals for a query: an incremental BM25 index that reads a model's questions.

Compaction archives every original that leaves the prompt (:mod:`ctxbudget.archive.store`); a model can read one back by
handle, and this module lets it find the handle first, with the question it would ask ("why did the refund fail",
"which port does the staging db use") as well as with keywords, paths and ids.

How it ranks:

* **Units, not messages.** A tool call and its result are one unit (one hit): the call's name and arguments and the
  result's text are scored together, the hit shows the result's text and handle and names the call
  (:attr:`ArchiveHit.call`). A call whose result was not archived is a unit of its own; so is an assistant
  message's own text, any other message and any archived text. Versions of one message archived for several
  reasons (``.bounded`` then ``.summarized``) count once, by the fullest.
* **Terms.** :func:`tokenize` keeps identifiers whole (``src/pkg_3/module_8.py``, ``eu-west-3``, ``v1.2.3``) and
  adds their parts; function and question words are dropped from texts and queries alike, so they neither match
  nor score; plain words are lightly stemmed (``failed`` -> ``fail``, ``pointer`` -> ``point``). A query also asks,
  at half weight at most, for each word's ``un-`` form or the word an ``un-`` form negates (``installed`` finds
  ``uninstalled``). See :mod:`ctxbudget.archive._text`.
* **Score.** Okapi BM25 (k1=1.2, b=0.35: see :data:`B`) over a unit's terms, where the lines that report an outcome
  (errors, exceptions, exit codes, HTTP status lines, ``"status"`` fields) count twice; a 2-8 word query found as a
  phrase earns a bonus (the summed weight of its words).
* **Cost.** :meth:`ArchiveIndex.add` tokenizes one entry once (O(its text)) and touches no other entry.
  :meth:`ArchiveIndex.search` reads at most :data:`~ctxbudget.archive._text.MAX_QUERY_CHARS` of the query and
  scores at most :data:`~ctxbudget.archive._text.MAX_QUERY_TERMS` distinct terms; phrase matching and excerpts scan
  a text once per term or phrase, so a search costs the same for a 3,000-word query as for a capped one.

Why this is written out here rather than taken from a library: measured by ``benchmarks/bench_search.py``
(``benchmarks/results/search.md``), 134 natural questions about something compacted out of view in 12 sessions
(46 written for the benchmark over a natural coding session, Claude Code, tau-bench and SWE-agent transcripts;
88 written by others for the real-transcript probe set), each answer an exact string, one run::

    ranker                                 hit@3 own  hit@3 probes  MRR   add + query  query    install
    the index before (main at 43099e1)     52%        31%           0.33  0.9 ms       0.6 ms   0
    this index                             91%        55%           0.58  0.35 ms      0.25 ms  0
    bm25s, its stopwords + Snowball stems  74%        49%           0.47  24 ms        0.12 ms  58 MiB
    bm25s over these terms                 83%        51%           0.54  38 ms        0.09 ms  55 MiB
    tantivy, en_stem                       72%        44%           0.46  5 ms         0.05 ms  17 MiB
    wordllama embeddings alone             76%        44%           0.45  1 ms         0.14 ms  120 MiB
    this index + wordllama (RRF)           93%        53%           0.56  6 ms         8 ms     120 MiB

(medians; "add + query" is one new entry then a query: the archive grows while the model searches it.) bm25s and
tantivy rank no better than this index on either set and neither indexes incrementally here: bm25s rebuilds its
whole matrix for each new entry, tantivy commits and reloads a segment; neither knows that a call and its result
are one unit or keeps identifiers whole by default. wordllama (its 16 MB of weights ship inside the wheel; it
loads offline with downloads disabled) ranks worse alone, and fused with this index by reciprocal rank it gains
one of the 46 own questions and loses one of the 88 probes, for 120 MiB of packages and 30x the query time. So no
optional backend ships: the plain index is the only path, and the ``search-bench`` extra installs the others only
to rerun the comparison. The core keeps its two dependencies (pydantic and tiktoken).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._hits import EXCERPT_CHARS, MAX_K, QUERY_ECHO_CHARS, ArchiveHit, check_search_args, excerpt, fit_text, render_hits
from ._text import (
    FAILURE_TERM,
    MAX_QUERY_TERMS,
    ROLE_TERMS,
    STOPWORDS,
    Tokenizer,
    failed,
    negation,
    phrase_pattern,
    query_terms,
    split_status,
    stem,
    term_counts,
    tokenize,
)

if TYPE_CHECKING:  # archive.py imports this module; entries are only read here
    from ..messages.message import ToolCall
    from .entry import ArchiveEntry

__all__ = [
    "EXCERPT_CHARS",
    "MAX_K",
    "QUERY_ECHO_CHARS",
    "ArchiveHit",
    "ArchiveIndex",
    "Tokenizer",
    "check_search_args",
    "fit_text",
    "render_hits",
    "tokenize",
]

K1 = 1.2
"""BM25 term-frequency saturation."""
B = 0.35
"""BM25 length normalization: lower than the usual 0.75 because archived units range from a one-line remark to a
multi-KB tool output or JSON record. At 0.75 a record that states the answer once (``"cabin": "basic_economy"``
among thirty fields) loses to every short remark that repeats the question's words; talk about a thing outranks the
record of it. Measured against 0.75 (``benchmarks/bench_search.py``; ``benchmarks/bench_real.py`` probes neither in
the request nor in a top-3 hit): 0.25 to 0.4 is one plateau; at 0.35 own questions hit@1 58% -> 70%, hit@3 91% ->
93%, the real-probe questions hit@3 62% either way but hit@1 45% -> 41%, bench_real misses 5 -> 2 at 30% and 19 ->
15 at 10%. 0.2 (more misses) and 0.5 (own hit@3 88%) are worse."""
STATUS_WEIGHT = 2
"""How many times a term on an outcome line counts."""
NEGATION_WEIGHT = 0.5
"""The weight of a query term's ``un-`` form (or of the word an ``un-`` term negates) relative to the term's own,
at most: a related form counts half."""
CALL_CHARS = 300
"""Most characters of a call shown in :attr:`ArchiveHit.call`."""
NARRATION_CHARS = 240
"""An assistant text of at most this many characters beside tool calls is part of its first call's hit."""


@dataclass
class _Part:
    """The fullest archived version of one part of a unit: a message's text, one call, or an archived text."""

    entry: ArchiveEntry
    text: str
    counts: Counter[str]
    size: int
    digest: int


@dataclass
class _Unit:
    """What one hit stands for: its parts, their summed term counts, and the call that links them."""

    order: int
    parts: dict[str, _Part] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    length: int = 0
    call: ToolCall | None = None
    result: str | None = None
    """Part key of the tool result, once archived."""


class ArchiveIndex:
    """An incremental BM25 index over archive entries, one hit per unit (a message, or a tool call with its result).

    :meth:`add` tokenizes one entry, once (O(its text)), and touches no other entry; :meth:`search` costs the
    postings of at most 32 query terms plus an excerpt per returned hit. Not thread-safe on its own;
    :class:`~ctxbudget.archive.store.Archive` serializes access.

    Args:
        tokenizer: text -> tokens for entries and queries (default :func:`tokenize`); stopwords are dropped and
            plain words stemmed after it.
    """

    def __init__(self, *, tokenizer: Tokenizer = tokenize) -> None:
        self._tokenizer = tokenizer
        self._entries = 0
        self._units: list[_Unit] = []
        self._where: dict[str, int] = {}  # part key -> unit
        self._open_calls: dict[str, int] = {}  # call id -> unit of a call whose result is not archived yet
        self._open_results: dict[str, int] = {}  # call id -> unit of a result whose call is not archived yet
        self._postings: dict[str, dict[int, int]] = {}
        self._total_length = 0

    def __len__(self) -> int:
        """Entries indexed so far."""
        return self._entries

    # -- adding ------------------------------------------------------------------------------------------------
    def add(self, entry: ArchiveEntry) -> None:
        """Index one entry (appended after every entry already indexed)."""
        self._entries += 1
        message = entry.message
        if message is None:
            self._put(self._unit_of(f"text:{entry.handle}"), entry.handle, entry, entry.full_text, self._terms(entry))
            return
        if message.role == "tool" and message.tool_call_id:
            self._add_result(entry, message.tool_call_id)
            return
        units = [self._add_call(entry, call) for call in message.tool_calls]
        text = entry.full_text
        if units and not text.strip():
            return
        # A line that introduces a call ("Let me check the config.") is part of the call's hit; a longer text is one
        # of its own (reasoning, a plan, a decision).
        unit = self._where.get(message.id)
        if unit is None:
            unit = units[0] if units and len(text) <= NARRATION_CHARS else self._new_unit()
        self._put(unit, message.id, entry, text, self._terms(entry))

    def _add_result(self, entry: ArchiveEntry, call_id: str) -> None:
        key = entry.message.id if entry.message is not None else entry.handle
        unit = self._where.get(key)
        if unit is None:
            unit = self._open_calls.pop(call_id, None)
            if unit is None:
                unit = self._new_unit()
                self._open_results[call_id] = unit
        self._units[unit].result = key
        self._put(unit, key, entry, entry.full_text, self._terms(entry))

    def _add_call(self, entry: ArchiveEntry, call: ToolCall) -> int:
        key = f"{entry.message.id if entry.message is not None else entry.handle}#call:{call.id}"
        unit = self._where.get(key)
        if unit is None:
            unit = self._open_results.pop(call.id, None)
            if unit is None:
                unit = self._new_unit()
                self._open_calls[call.id] = unit
        self._units[unit].call = call
        text = f"{call.name} {call.args_json()}"
        self._put(unit, key, entry, text, term_counts(self._tokenizer(text)))
        return unit

    def _unit_of(self, key: str) -> int:
        unit = self._where.get(key)
        return self._new_unit() if unit is None else unit

    def _new_unit(self) -> int:
        self._units.append(_Unit(order=len(self._units)))
        return len(self._units) - 1

    def _terms(self, entry: ArchiveEntry) -> Counter[str]:
        """Term counts of an entry's text and of its labels (source, author or tool name).

        In a tool output or an archived text, the outcome lines count :data:`STATUS_WEIGHT` times and a failure among
        them adds :data:`~ctxbudget.archive._text.FAILURE_TERM`; what a user or the assistant says about a failure is
        talk, not an outcome, and is weighted as any other text.
        """
        message = entry.message
        output = message is None or message.role == "tool"
        status, rest = split_status(entry.full_text) if output else ("", entry.full_text)
        counts = term_counts(self._tokenizer(rest)) if rest else Counter()
        if status:
            for term, count in term_counts(self._tokenizer(status)).items():
                counts[term] += STATUS_WEIGHT * count
            if failed(status):
                counts[FAILURE_TERM] += 1
        role = ROLE_TERMS.get(message.role) if message is not None else None
        if role is not None and entry.full_text.strip():
            counts[role] += 1
        labels = " ".join(name for name in (entry.source, message.name if message else None) if name)
        if labels:
            counts.update(term_counts(self._tokenizer(labels)))
        return counts

    def _put(self, unit_id: int, key: str, entry: ArchiveEntry, text: str, counts: Counter[str]) -> None:
        """Make ``entry`` the part ``key`` of a unit, unless the part already holds a fuller version."""
        unit = self._units[unit_id]
        old = unit.parts.get(key)
        if old is not None and old.size >= len(text):
            return
        self._where[key] = unit_id
        unit.parts[key] = _Part(entry=entry, text=text, counts=counts, size=len(text), digest=hash(text))
        if old is None:  # the usual case: new terms only add
            unit.counts.update(counts)
            added = sum(counts.values())
            unit.length += added
            self._total_length += added
            postings = self._postings
            for term in counts:
                postings.setdefault(term, {})[unit_id] = unit.counts[term]
            return
        changed = Counter(counts)
        changed.subtract(old.counts)
        for term, delta in changed.items():
            if delta:
                self._shift(unit_id, unit, term, delta)

    def _shift(self, unit_id: int, unit: _Unit, term: str, delta: int) -> None:
        unit.counts[term] += delta
        unit.length += delta
        self._total_length += delta
        postings = self._postings.setdefault(term, {})
        if unit.counts[term] > 0:
            postings[unit_id] = unit.counts[term]
            return
        del unit.counts[term]
        postings.pop(unit_id, None)
        if not postings:
            del self._postings[term]

    # -- searching ---------------------------------------------------------------------------------------------
    def search(self, query: str, k: int = 5) -> list[ArchiveHit]:
        """The ``k`` best hits for ``query``, best first (ties: archive order); ``[]`` when nothing matches.

        Raises:
            InvalidPolicyError: ``query`` is not a non-empty str, or ``k`` is not an int in 1..100.
        """
        check_search_args(query, k)
        weights = self._weights(query_terms(query, self._tokenizer))
        ranked = self._rank(self._scores(weights), query, weights, k)
        return [self._hit(unit, score, weights) for score, unit in ranked]

    def _weights(self, terms: list[str]) -> dict[str, float]:
        """Each indexed query term's idf, then the :func:`~ctxbudget.archive._text.negation` of each term.

        A negation that the query does not hold itself weighs half the lower of its own idf and its term's: it can
        lift a text about the reversed state (``uninstalled``) but never outweigh the word asked. At most
        :data:`~ctxbudget.archive._text.MAX_QUERY_TERMS` terms in all.
        """
        weights = {term: self._idf(term) for term in terms if term in self._postings}
        for term in terms:
            other = negation(term)
            if len(weights) >= MAX_QUERY_TERMS:
                break
            if other is not None and other in self._postings and other not in weights and term in weights:
                weights[other] = NEGATION_WEIGHT * min(self._idf(other), weights[term])
        return weights

    def _idf(self, term: str) -> float:
        df = len(self._postings[term])
        return math.log(1.0 + (len(self._units) - df + 0.5) / (df + 0.5))

    def _scores(self, weights: dict[str, float]) -> dict[int, float]:
        average = (self._total_length / len(self._units) if self._units else 1.0) or 1.0
        scores: dict[int, float] = {}
        for term, idf in weights.items():
            for unit, tf in self._postings[term].items():
                norm = K1 * (1.0 - B + B * self._units[unit].length / average)
                scores[unit] = scores.get(unit, 0.0) + idf * tf * (K1 + 1.0) / (tf + norm)
        return scores

    def _rank(self, scores: dict[int, float], query: str, weights: dict[str, float], k: int) -> list[tuple[float, int]]:
        """The ``k`` best units after the phrase bonus (the summed weight of the phrase's words, added once).

        Units are visited best-first; the visit stops once even the bonus could not lift a unit into the top ``k``,
        so only texts that can still rank are scanned for the phrase (one scan per part).
        """
        phrase = phrase_pattern(query)
        bonus = 0.0
        if phrase is not None:
            bonus = sum(weights.get(stem(word), 0.0) for word in phrase[0] if word not in STOPWORDS)
        ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        ranked: list[tuple[float, int]] = []
        floor: list[float] = []  # min-heap of the k best final scores so far
        shown: set[str | int] = set()  # handles and texts already ranked
        for unit, score in ordered:
            if len(floor) == k and score + bonus < floor[0]:
                break
            primary = self._primary(unit)
            # One hit per handle; an archived text that copies a message already shown (the pinned goal) is none.
            if primary.entry.handle in shown or (primary.entry.message is None and primary.digest in shown):
                continue
            shown.update((primary.entry.handle, primary.digest))
            final = score
            if bonus and phrase is not None and any(phrase[1].search(p.text.lower()) for p in self._parts(unit)):
                final += bonus
            ranked.append((final, unit))
            (heapq.heappushpop if len(floor) == k else heapq.heappush)(floor, final)
        ranked.sort(key=lambda pair: (-pair[0], pair[1]))
        return ranked[:k]

    def _primary(self, unit_id: int) -> _Part:
        """The part a hit shows and reads back: the tool result when there is one, else the fullest part."""
        unit = self._units[unit_id]
        return unit.parts[unit.result] if unit.result is not None else max(unit.parts.values(), key=_size)

    def _parts(self, unit: int) -> Iterable[_Part]:
        return self._units[unit].parts.values()

    def _hit(self, unit_id: int, score: float, weights: dict[str, float]) -> ArchiveHit:
        unit = self._units[unit_id]
        part = self._primary(unit_id)
        entry = part.entry
        message = entry.message
        # To place the excerpt, a term repeated all over this text says less than one it holds once.
        local = {term: idf / (1.0 + math.log(max(1, part.counts.get(term, 1)))) for term, idf in weights.items()}
        call = call_handle = None
        if unit.call is not None:
            call_text = f"{unit.call.name} {unit.call.args_json()}"
            call = call_text if len(call_text) <= CALL_CHARS else excerpt(call_text, local)
            if call != call_text:  # cut: name where the whole call is read back, when it is archived
                call_handle = next((p.entry.handle for k, p in unit.parts.items() if "#call:" in k), None)
        source = unit.call.name if unit.call is not None else entry.source
        if source is None and message is not None and message.role == "tool":
            source = message.name
        return ArchiveHit(
            handle=entry.handle,
            message_id=message.id if message is not None else None,
            role=message.role if message is not None else None,
            reason=entry.reason,
            source=source,
            text=excerpt(part.text, local),
            score=score,
            call=call,
            call_handle=call_handle if call_handle != entry.handle else None,
        )


def _size(part: _Part) -> int:
    return part.size
