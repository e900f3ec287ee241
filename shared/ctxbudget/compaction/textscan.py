"""Linear-time reading of free text: runs, typed values, sentences, subject words and informative tokens.

Everything compaction extracts from a transcript starts here, so every function costs time linear in its input: one
scan with patterns that cannot backtrack across a run (each is a single character class, or an alternation of
literals), and per-run work on at most :data:`MAX_RUN` characters. A 60,000-letter word is one run, read once.

*Values* are what a statement says something *is*: a path, a URL, an email, a host (with its port), a date, an
amount of money, a version, a number, an identifier (letters and digits: ``T9911``, ``eu-west-3``, ``spike/abc-12``),
a time zone, a person's name. *Subject words* are the statement's other content words, lower-cased and lightly
stemmed (``owners`` and ``owns`` are ``own``): two statements about the same thing share subject words, two values of
the same thing share a value type. Neither depends on how a benchmark phrases its items.

The pieces live beside this module and are re-exported here: bounding and clipping in ``_bounds``, typed values in
``_values``, stop words and stemming in ``_words``; this module reads a whole text with them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ._bounds import MAX_RUN, bounded, clip
from ._values import Value, phrases, run_kind
from ._words import STOP_WORDS, run_words, stem

__all__ = [
    "MAX_RUN",
    "STOP_WORDS",
    "Scan",
    "Value",
    "bounded",
    "clip",
    "content_words",
    "informative_tokens",
    "scan",
    "sentences",
    "stem",
    "values",
]

_RUN_CACHE = 16_384
"""Distinct runs (each at most :data:`MAX_RUN` characters) whose reading is remembered: at most about 3 MB."""

_RUN = re.compile(r"[\w$€£~][\w./:@#%$€£+~'-]*")
"""A run of word characters and the punctuation that joins identifiers; one class after the first: no backtracking."""
_TRAIL = ".,;:!?)]}'\"-"
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|vs|etc|mr|mrs|ms|dr|no|cf|approx|fig)\.|\b[A-Z]\.)$", re.IGNORECASE)


@dataclass(frozen=True)
class Scan:
    """One pass over a text: its typed values and its content words (stemmed), each in order."""

    values: tuple[Value, ...]
    words: tuple[str, ...]


def scan(text: str) -> Scan:
    """Read ``text`` once: typed values (phrases first, then runs outside them) and the content words around them."""
    text = bounded(text)
    spans = phrases(text)
    found: list[tuple[int, Value]] = [(start, value) for start, _, value in spans]
    words: list[str] = []
    index = 0
    for match in _RUN.finditer(text):
        start = match.start()
        while index < len(spans) and spans[index][1] <= start:
            index += 1
        if index < len(spans) and spans[index][0] <= start:
            continue  # inside a phrase value
        raw = match.group(0)
        read = _read_run(raw) if len(raw) <= MAX_RUN else _run_reading(raw)
        if read is None:
            continue
        if isinstance(read, Value):
            found.append((start, read))
        else:
            words.extend(read)
    found.sort(key=lambda pair: pair[0])
    return Scan(values=tuple(value for _, value in found), words=tuple(words))


def _run_reading(raw: str) -> Value | tuple[str, ...] | None:
    """What one run (as matched) adds to a :class:`Scan`: its value, its content words, or nothing."""
    run = raw.rstrip(_TRAIL)
    if not run:
        return None
    kind = run_kind(run)
    if kind is not None:
        return Value(kind, run)
    return tuple(run_words(run)) if len(run) <= MAX_RUN else None


_read_run = functools.lru_cache(maxsize=_RUN_CACHE)(_run_reading)
""":func:`_run_reading` of a run of at most :data:`MAX_RUN` characters, remembered (a session's words recur)."""


def values(text: str) -> list[Value]:
    """Every typed value in ``text``, in order of appearance (phrases such as "five hundred dollars" included)."""
    return list(scan(text).values)


def content_words(text: str) -> list[str]:
    """The stemmed content words of ``text``: letters only, three or more, not stop words, not inside a value."""
    return list(scan(text).words)


def informative_tokens(text: str) -> frozenset[str]:
    """The tokens of ``text`` that can carry information: its values and its content words.

    Values are the runs that are not plain words (ids, paths, numbers, lower-cased); content words are stemmed,
    stop words left out. One regex scan and a set: cheap enough to run on every item and on a whole summary. Paths
    lose a ``:line`` suffix (``a.py:12`` is ``a.py``). Whole tokens only: ``k74`` is not found inside ``k740``.
    """
    found = {_token(run) if len(run) <= MAX_RUN else _token_of(run) for run in set(_RUN.findall(text))}
    found.discard(None)
    found.discard("")
    return frozenset(found)  # type: ignore[arg-type]  # None was discarded


def _token_of(run: str) -> str | None:
    """The informative token of one run (``None``: a stop word or a short word)."""
    token = run.rstrip(_TRAIL).lower()[:MAX_RUN]
    if not token:
        return None
    if token.isalpha():
        return stem(token) if len(token) >= 3 and token not in STOP_WORDS else None
    return _normal(token)


_token = functools.lru_cache(maxsize=_RUN_CACHE)(_token_of)
""":func:`_token_of` of a run of at most :data:`MAX_RUN` characters, remembered."""


def _normal(token: str) -> str:
    token = token.lower().rstrip(_TRAIL)
    if "/" in token or "." in token:
        head, _, tail = token.partition("::")
        token = head if tail else token
        while token and token[-1].isdigit() and ":" in token:
            before, _, after = token.rpartition(":")
            if not after.isdigit() or not before:
                break
            token = before
    return token


def sentences(text: str) -> list[str]:
    """``text`` split into sentences: at line breaks and after ``.``, ``!`` or ``?`` before a capital or digit.

    Abbreviations (``e.g.``, ``vs.``, an initial) do not end a sentence. Linear in the text's length.
    """
    out: list[str] = []
    for raw in bounded(text).splitlines():
        line = raw.strip()
        if not line:
            continue
        start = 0
        for match in _SENTENCE_END.finditer(line):
            piece = line[start : match.start()].strip()
            if piece and _ABBREVIATION.search(piece[-8:]):
                continue
            if piece:
                out.append(piece)
            start = match.end()
        rest = line[start:].strip()
        if rest:
            out.append(rest)
    return out
