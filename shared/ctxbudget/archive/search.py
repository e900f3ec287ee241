"""Ranking archived originals for a query: an incremental BM25 index that reads a model's questions.

Compaction archives every original that leaves the prompt (:mod:`ctxbudget.archive.store`); a model can read one back by
handle, and this module lets it find the handle first, with the question it would ask ("why did the refund fail",
"which port does the staging db use") as well as with keywords, paths and ids.

How it ranks:

* **Units, not messages.** A tool call and its result are one unit (one hit): the call's name and arguments and the
  result's text are scored together, the hit shows the result's text and handle and names the call
  (:attr:`ArchiveHit.call`). A short assistant line that introduces a call, and a short reply right after a call's
  result (the model reading it out: "A $50 certificate has been issued"), belong to that call's unit. A call whose
  result was not archived is a unit of its own; so is a longer assistant text, any other message and any archived
  text. Versions of one message archived for several reasons (``.bounded`` then ``.summarized``) count once, by the
  fullest. A command written as text (mini-swe-agent's one ``bash`` block in a reply, its result a user turn starting
  ``<returncode>``) is read as a call and its result too (:mod:`ctxbudget.messages._text_actions`). The same call run
  again with the same result (a file read twice, unchanged) is one hit.
* **Terms.** :func:`tokenize` keeps identifiers whole (``src/pkg_3/module_8.py``, ``eu-west-3``, ``v1.2.3``) and
  adds their parts; function and question words are dropped from texts and queries alike, so they neither match
  nor score; plain words are lightly stemmed (``failed`` -> ``fail``, ``pointer`` -> ``point``). A query also asks,
  at half weight at most, for each word's ``un-`` form or the word an ``un-`` form negates (``installed`` finds
  ``uninstalled``), and for two adjacent words joined (``rollback``, ``item_id``). "How was X done" asks for
  :data:`~ctxbudget.archive._text.CALL_TERM`, which every call holds. See :mod:`ctxbudget.archive._text`.
* **Score.** Okapi BM25 (k1=1.2, b=0.35: see :data:`B`) over a unit's terms, where the lines that report an outcome
  (errors, exceptions, exit codes, HTTP status lines, ``"status"`` fields) count twice; a 2-8 word query found as a
  phrase earns a bonus (the summed weight of its words). A question about a failure ("why did django.setup fail")
  moves most of its failure words' weight to the failed outcome: the word ``FAIL`` in a script that ran cleanly is
  not the failure asked about.
* **Links** (:mod:`ctxbudget.archive._phrases`, :mod:`ctxbudget.archive._bonus`, :mod:`ctxbudget.archive._fixes`): a
  run of query words joined by operators or quoted in backticks (``_separable = True``) earns the summed weight of its
  terms where it occurs as written. A long form an archived text defined an abbreviation for (``Dallas/Fort Worth
  (DFW)``) also asks for the short form, and a unit scores the better of the two forms, not both. A question about a
  fix ("what was installed to fix django.setup") credits each call that fixed a failure (between the failed call and
  a re-run that got past it) with the failure's score. A question about order ("why did the script *first* fail",
  "what does it report *now*") gives the best score among the runs of one command to the earliest or latest like run
  (:mod:`ctxbudget.archive._order`).
* **Cost.** :meth:`ArchiveIndex.add` tokenizes one entry once and touches no other; :meth:`ArchiveIndex.search`
  reads at most :data:`~ctxbudget.archive._text.MAX_QUERY_CHARS` of the query and
  :data:`~ctxbudget.archive._text.MAX_QUERY_TERMS` terms, scans a text that can still rank once for the query as a
  phrase, and scans only the best few units for at most :data:`~ctxbudget.archive._bonus.MAX_CODE_PHRASES` code
  phrases (:mod:`ctxbudget.archive._bonus`).

Why this is written out here rather than taken from a library: ``benchmarks/bench_search.py`` (results in
``benchmarks/results/search.md``) asks 108 natural questions about something compacted out of view in 12 sessions (45
written for the benchmark, 63 written by others for the real-transcript probe set), each answer an exact string, of
this index, bm25s (its own stopwords and Snowball stems, or these terms), tantivy (``en_stem``), wordllama embeddings
alone and fused with this index by reciprocal rank. None ranks better on either set, and neither bm25s nor tantivy
indexes incrementally here (bm25s rebuilds its matrix for each new entry, tantivy commits and reloads a segment; the
archive grows while the model searches it); neither knows that a call and its result are one unit or keeps identifiers
whole by default. wordllama (16 MB of weights inside its wheel, loaded offline) ranks worse alone and no better fused,
for 120 MiB of packages and several times the query time. So no optional backend ships: the plain index is the only
path, and the ``search-bench`` extra installs the others only to rerun the comparison. The core keeps its two
dependencies (pydantic and tiktoken).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ._bonus import PhraseBonus, scanned
from ._hits import EXCERPT_CHARS, MAX_K, QUERY_ECHO_CHARS, ArchiveHit, check_search_args, excerpt, fit_text, render_hits
from ._order import order_asked, order_runs
from ._phrases import Abbreviation, Abbreviations, add_best_forms
from ._text import (
    CALL_TERM,
    FAILURE_TERM,
    FAILURE_WORDS,
    FIX_WORDS,
    MAX_QUERY_TERMS,
    ROLE_TERMS,
    Tokenizer,
    failed,
    negation,
    query_terms,
    split_status,
    term_counts,
    tokenize,
)
from ._units import Part, Placement, Unit, UnitTable, call_text

if TYPE_CHECKING:  # archive.py imports this module; entries are only read here
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
FAILURE_SHARE = 0.75
"""The share of a failure word's weight (``fail``, ``error``) a query moves to
:data:`~ctxbudget.archive._text.FAILURE_TERM`: the word also occurs in code, logs and talk that report no failure."""
FIX_LINK = 1.0
"""The share of a failure's score that a call which fixed it adds, for a question about a fix."""
CALL_CHARS = 300
"""Most characters of a call shown in :attr:`ArchiveHit.call`."""


class ArchiveIndex:
    """An incremental BM25 index over archive entries, one hit per unit (a message, or a tool call with its result).

    :meth:`add` tokenizes one entry, once (O(its text)), and touches no other entry; :meth:`search` costs the
    postings of at most 32 query terms, a scan of each text that can still rank for the query as a phrase, at most
    :data:`~ctxbudget.archive._bonus.MAX_CODE_PHRASES` scans of each of the best few texts for code phrases, plus an
    excerpt per returned hit. Not thread-safe on its own;
    :class:`~ctxbudget.archive.store.Archive` serializes access.

    Args:
        tokenizer: text -> tokens for entries and queries (default :func:`tokenize`); stopwords are dropped and
            plain words stemmed after it.
    """

    def __init__(self, *, tokenizer: Tokenizer = tokenize) -> None:
        self._tokenizer = tokenizer
        self._entries = 0
        self._table = UnitTable(tokenizer)
        self._units = self._table.units
        self._postings: dict[str, dict[int, int]] = {}
        self._total_length = 0
        self._abbreviations = Abbreviations(tokenizer)

    def __len__(self) -> int:
        """Entries indexed so far."""
        return self._entries

    @property
    def units(self) -> UnitTable:
        """The units hits stand for (read them; :meth:`add` places entries)."""
        return self._table

    # -- adding ------------------------------------------------------------------------------------------------
    def add(self, entry: ArchiveEntry) -> None:
        """Index one entry (appended after every entry already indexed)."""
        self._entries += 1
        for placed in self._table.place(entry):
            if placed.call is None:
                counts = self._terms(entry, placed)
            else:
                counts = term_counts(self._tokenizer(placed.text))
                counts[CALL_TERM] += 1
            self._put(placed.unit, placed.key, entry, placed.text, counts)
            self._table.indexed(placed.unit)
            self._abbreviations.learn(placed.text)

    def _terms(self, entry: ArchiveEntry, placed: Placement) -> Counter[str]:
        """Term counts of a placed text (an entry's, or a reply's without its command) and of the entry's labels.

        In an output (a tool result, a command's result turn, an archived text), the outcome lines count
        :data:`STATUS_WEIGHT` times and a failure among them adds :data:`~ctxbudget.archive._text.FAILURE_TERM`; what
        a user or the assistant says about a failure is talk, not an outcome, and is weighted as any other text.
        """
        message = entry.message
        status, rest = split_status(placed.text) if placed.output else ("", placed.text)
        counts = term_counts(self._tokenizer(rest)) if rest else Counter()
        if status:
            for term, count in term_counts(self._tokenizer(status)).items():
                counts[term] += STATUS_WEIGHT * count
            if failed(status):
                counts[FAILURE_TERM] += 1
        role = ROLE_TERMS.get(message.role) if message is not None and not placed.output else None
        if role is not None and placed.text.strip():
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
        unit.parts[key] = Part(entry=entry, text=text, counts=counts, size=len(text), digest=hash(text))
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

    def _shift(self, unit_id: int, unit: Unit, term: str, delta: int) -> None:
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
        terms = query_terms(query, self._tokenizer)
        weights = self._weights(terms)
        groups = self._abbreviated(terms, weights)
        scores = self._scores(weights, groups)
        if FIX_WORDS.intersection(terms):
            self._credit_fixes(scores)
        direction = order_asked(query)
        if direction:
            order_runs(scores, self._table, weights, direction, k)
        ranked = self._rank(scores, query, weights, k)
        return [self._hit(unit, score, weights) for score, unit in ranked]

    def _weights(self, terms: list[str]) -> dict[str, float]:
        """Each indexed query term's idf, then the :func:`~ctxbudget.archive._text.negation` of each term.

        A negation that the query does not hold itself weighs half the lower of its own idf and its term's: it can
        lift a text about the reversed state (``uninstalled``) but never outweigh the word asked. At most
        :data:`~ctxbudget.archive._text.MAX_QUERY_TERMS` terms in all.
        """
        weights = {term: self._idf(term) for term in terms if term in self._postings}
        if FAILURE_TERM in weights:  # "why did X fail" asks for X's failed outcome more than for the word "fail"
            for term in FAILURE_WORDS.intersection(weights):
                moved = FAILURE_SHARE * weights[term]
                weights[term] -= moved
                weights[FAILURE_TERM] += moved
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

    def _credit_fixes(self, scores: dict[int, float]) -> None:
        """Credit each call that fixed a failure with :data:`FIX_LINK` of the failure's score.

        A question about a fix ("what was installed to fix django.setup") names the failure, not the fix, which
        shares no word with it (:mod:`ctxbudget.archive._fixes` links the two).
        """
        fixed_by = self._table.fixes.fixed_by
        credit: dict[int, float] = {}
        for failure in fixed_by.keys() & scores.keys():
            for fix in fixed_by[failure]:
                credit[fix] = max(credit.get(fix, 0.0), FIX_LINK * scores[failure])
        for fix, score in credit.items():
            scores[fix] = scores.get(fix, 0.0) + score

    def _abbreviated(self, terms: list[str], weights: dict[str, float]) -> list[Abbreviation]:
        """Each abbreviation the archive defined whose long form the query holds (see :class:`Abbreviations`).

        The short form joins ``weights`` (unless the query names it itself) at its own idf, at most the long form's
        weight: ``from Dallas`` asks for ``DFW`` no more than for the name asked. Within the cap on query terms.
        """
        groups = []
        for long, short in self._abbreviations.asked(terms):
            if short not in self._postings:
                continue
            if short not in weights:
                if len(weights) >= MAX_QUERY_TERMS:
                    continue
                weights[short] = min(self._idf(short), math.fsum(weights.get(word, 0.0) for word in long))
            groups.append((long, short))
        return groups

    def _scores(self, weights: dict[str, float], groups: Sequence[Abbreviation] = ()) -> dict[int, float]:
        """BM25 per unit; a long form and its short form are one concept: a unit scores the better of the two."""
        average = (self._total_length / len(self._units) if self._units else 1.0) or 1.0
        grouped = {term for long, short in groups for term in (*long, short)}
        scores: dict[int, float] = {}
        apart: dict[str, dict[int, float]] = {}
        for term, idf in weights.items():
            into = apart.setdefault(term, {}) if term in grouped else scores
            for unit, tf in self._postings[term].items():
                norm = K1 * (1.0 - B + B * self._units[unit].length / average)
                into[unit] = into.get(unit, 0.0) + idf * tf * (K1 + 1.0) / (tf + norm)
        add_best_forms(scores, apart, groups)
        return scores

    def _rank(self, scores: dict[int, float], query: str, weights: dict[str, float], k: int) -> list[tuple[float, int]]:
        """The ``k`` best units after the phrase bonus (:class:`~ctxbudget.archive._bonus.PhraseBonus`).

        Units are visited best-first; the visit stops once even the bonus could not lift a unit into the top ``k``,
        so only texts that can still rank are scanned for the query's phrase (one scan per part), and only the best
        :func:`~ctxbudget.archive._bonus.scanned` of them for its code phrases (one scan per part and phrase).
        """
        bonus = PhraseBonus(query, weights, self._tokenizer)
        scan = scanned(k)
        ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        ranked: list[tuple[float, int]] = []
        floor: list[float] = []  # min-heap of the k best final scores so far
        shown: set[object] = set()  # handles, texts and (text, call) pairs already ranked
        for found, score in ordered:
            codes = len(ranked) < scan
            if len(floor) == k and score + bonus.most(codes) < floor[0]:
                break
            unit = self._ran(found)
            primary = self._units[unit].primary(weights)
            call = self._units[unit].call  # the same call again with the same result (a file read twice) is no news
            # One hit per handle; an archived text that copies a message already shown (the pinned goal) is none.
            seen = {primary.entry.handle, *([(primary.digest, call_text(call))] if call is not None else [])}
            if shown & (seen | ({primary.digest} if primary.entry.message is None else set())):
                continue
            shown.update((*seen, primary.digest))
            final = bonus.lift(score, (part.text for part in self._parts(unit)), codes)
            ranked.append((final, unit))
            (heapq.heappushpop if len(floor) == k else heapq.heappush)(floor, final)
        ranked.sort(key=lambda pair: (-pair[0], pair[1]))
        return ranked[:k]

    def _ran(self, unit_id: int) -> int:
        """The unit whose call ran in place of ``unit_id``'s (itself, unless its call never ran and was re-run)."""
        for _ in range(len(self._units)):  # a chain of retries, each later than the last
            retry = self._units[unit_id].retry
            if retry is None:
                break
            unit_id = retry
        return unit_id

    def _parts(self, unit: int) -> Iterable[Part]:
        return self._units[unit].parts.values()

    def _hit(self, unit_id: int, score: float, weights: dict[str, float]) -> ArchiveHit:
        unit = self._units[unit_id]
        part = unit.primary(weights)
        entry = part.entry
        message = entry.message
        # To place the excerpt, a term repeated all over this text says less than one it holds once.
        local = {term: idf / (1.0 + math.log(max(1, part.counts.get(term, 1)))) for term, idf in weights.items()}
        call = call_handle = None
        if unit.call is not None:
            whole = call_text(unit.call)
            call = whole if len(whole) <= CALL_CHARS else excerpt(whole, local)
            if call != whole:  # cut: name where the whole call is read back, when it is archived
                call_handle = unit.call_handle()
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
