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

import bisect
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from ._bounds import MAX_RUN, bounded, bounded_line, clip
from ._values import Value, phrases, run_kind
from ._words import STOP_WORDS, run_words, stem

__all__ = [
    "MAX_HITS",
    "MAX_LINE",
    "MAX_RUN",
    "STOP_WORDS",
    "Scan",
    "Value",
    "bounded",
    "bounded_line",
    "clip",
    "content_words",
    "hit_lines",
    "informative_tokens",
    "may_occur",
    "scan",
    "sentences",
    "stem",
    "values",
    "word_lines",
]

MAX_HITS = 48
"""Lines :func:`word_lines` and :func:`hit_lines` find in one text at most."""
MAX_LINE = 400
"""Characters of a line they find at most (a longer line is passed over)."""
_RUN_CACHE = 16_384
"""Distinct runs (each at most :data:`MAX_RUN` characters) whose reading is remembered: at most about 3 MB."""

_RUN = re.compile(r"[\w$€£~][\w./:@#%$€£+~'-]*")
"""A run of word characters and the punctuation that joins identifiers; one class after the first: no backtracking."""
_TRAIL = ".,;:!?)]}'\"-"
_OPENERS = r"(?:Next|Now|Let|Let's|I|I'll|I've|I'm|We|We'll|The|This|That|It|Upon|Then|So|But|However|Finally|First)"
_SENTENCE_END = re.compile(
    rf"(?<=[.!?])([\"'\u201d\u2019)\]]*)(?:\s+(?=[\"'\u201c\u2018(\[]?[A-Z0-9])|(?<=[a-z]{{2}}[.!?])(?={_OPENERS}[ ,]))"
)
"""Where a sentence ends: after its stop and any closing quote (straight or curly) or bracket, before a capital; or
with no space at all, between a word's stop and a word a sentence opens with (``a static message.Next, I'll``: an
agent's paragraphs run together), never inside a name (``fields.DateTime``, ``web.chal.csaw.io``)."""
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|vs|etc|mr|mrs|ms|dr|no|cf|approx|fig)\.|\b[A-Z]\.)$", re.IGNORECASE)
_LIST_NUMBER = re.compile(r"[*_]{0,3}\d{1,3}\.[*_]{0,3}")
_MARKER_CHARS = 16
"""Longest piece (spaces included) tested for a list's marker."""
"""A numbered list's marker (``2.``, ``*2.``, ``**3.**``): the sentence after it is the item, not one of its own."""


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


_DIGITS = str.maketrans({**dict.fromkeys(map(ord, "01234678")), ord("5"): "#", ord("9"): "#"})
"""What :func:`may_occur` reads words in: digits left out (a log's numbers make every line new), ``5`` and ``9`` kept
as ``#`` (the figure words ``p5`` and ``p9`` hold them)."""
_WORD_SEPARATORS = str.maketrans(
    dict.fromkeys((c for c in range(128) if not chr(c).isalpha() and chr(c) not in "$%,.#"), " ")
)
"""ASCII characters no word :func:`may_occur` is asked about holds beside spaces: where its words split further."""
_MAY_OCCUR_FROM = 2_000
"""Characters from which :func:`may_occur` reads a text's distinct words (a shorter text is searched word by word)."""


def may_occur(lower: str, words: tuple[str, ...]) -> frozenset[str]:
    """Those of ``words`` that may occur in ``lower`` (as substrings): every word that does is in the set.

    ``words`` hold lower-case letters, ``$%,.``, the digits ``5`` and ``9`` and single spaces (``" s "``,
    ``"not found"``). For a long ASCII text, each word is looked for in the text's distinct words, not the text: a
    word without a space is inside one of them, a space in it is a boundary between them (the part before it ends
    one, the part after it starts one). The distinct words are read in two rounds, whitespace first and the
    punctuation inside the words then, and without their digits (each maps to nothing or to ``#``, the same in the
    word asked about), so a few thousand lines of a log are a few hundred words. The set may hold words that do not
    occur (digits left out join their neighbours): only a word not in it is known absent.
    """
    if len(lower) < _MAY_OCCUR_FROM or not lower.isascii():
        return frozenset([word for word in words if word in lower])
    runs = "\n".join(set(lower.translate(_DIGITS).split()))
    vocabulary = "\n" + "\n".join(set(runs.translate(_WORD_SEPARATORS).split())) + "\n"
    plain, spaced = _probes(words)
    found = [word for word, probe in plain if probe in vocabulary]
    found.extend(word for word, parts in spaced if all(part in vocabulary for part in parts))
    return frozenset(found)


@functools.lru_cache(maxsize=16)
def _probes(words: tuple[str, ...]) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    """What :func:`may_occur`'s vocabulary (its distinct words, one a line) holds where each of ``words`` occurs.

    A word without a space: itself (its digits mapped); one with spaces, its parts: the first ends a line, the last
    starts one, each between is a whole line.
    """
    plain: list[tuple[str, str]] = []
    spaced: list[tuple[str, tuple[str, ...]]] = []
    for word in words:
        parts = word.translate(_DIGITS).split(" ")
        if len(parts) == 1:
            plain.append((word, parts[0]))
            continue
        last = len(parts) - 1
        shown = [("\n" if i else "") + part + ("\n" if i < last else "") for i, part in enumerate(parts) if part]
        spaced.append((word, tuple(shown)))
    return tuple(plain), tuple(spaced)


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

    A closing quote or bracket after the stop (``“ordered by mistake.” Please ...``) ends the sentence with it.

    Abbreviations (``e.g.``, ``vs.``, an initial), a numbered list's marker (``2.``) and a stop inside inline code
    (`` `${desc%%. Use *}` ``) do not end a sentence. Linear in the text's length.
    """
    out: list[str] = []
    for raw in bounded(text).splitlines():
        line = raw.strip()
        if not line:
            continue
        start = 0
        inside = _code_spans(line)
        for match in _SENTENCE_END.finditer(line):
            end = match.end(1)  # a closing quote or bracket stays with its sentence
            if inside is not None and inside(end):
                continue
            # Only the piece's last characters tell an abbreviation, and a list's marker is short: neither test reads
            # the piece from ``start`` again, which stays put past every stop they skip ("Mr. A Mr. A ...").
            if _ABBREVIATION.search(line, max(start, end - 8), end) or (
                end - start <= _MARKER_CHARS and _LIST_NUMBER.fullmatch(line[start:end].strip())
            ):
                continue
            piece = line[start:end].strip()
            if piece:
                out.append(piece)
            start = match.end()
        rest = line[start:].strip()
        if rest:
            out.append(rest)
    return out


def _code_spans(line: str) -> Callable[[int], bool] | None:
    """Whether a position of ``line`` lies inside an inline code span (between paired backticks); ``None``: none.

    Backticks pair in order (a run of them counts as one delimiter); an unpaired last one opens nothing.
    """
    if line.count("`") < 2:
        return None
    bounds = [m.start() for m in _BACKTICKS.finditer(line)]
    if len(bounds) % 2:
        bounds.pop()
    return lambda at: bisect.bisect_right(bounds, at - 1) % 2 == 1


_BACKTICKS = re.compile(r"`+")


def word_lines(
    text: str, words: tuple[str, ...], lower: str | None = None, present: frozenset[str] | None = None
) -> list[tuple[int, str]]:
    """The lines of ``text`` holding one of ``words`` as a whole word (any case), at most :data:`MAX_HITS`.

    ``words`` hold no line break. Found with ``str.find`` on the lower-cased text (``lower``, when the caller has
    it), a scan at memory speed, and each line taken once; a word not in ``present`` (:func:`may_occur` of ``lower``,
    when given) is known absent.
    """
    lower = text.lower() if lower is None else lower
    if len(lower) != len(text):  # lower-casing changed the length (rare letters): a regex keeps offsets right
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b", re.IGNORECASE)
        return hit_lines(text, pattern)
    starts: set[int] = set()
    out: list[tuple[int, str]] = []
    scan = lower + "\n"  # every line ends in a line break: a word (which holds none) is found as in ``lower``
    find, rfind = scan.find, scan.rfind
    for word in words:
        if len(out) >= MAX_HITS:
            break  # no later word can add a line
        if present is not None and word not in present:
            continue
        position = find(word)
        while position >= 0 and len(out) < MAX_HITS:
            end = position + len(word)
            whole = (position == 0 or not scan[position - 1].isalnum()) and not scan[end].isalnum()
            start = rfind("\n", 0, position) + 1
            if whole and start not in starts:
                stop = find("\n", end)
                starts.add(start)
                if stop - start <= MAX_LINE:
                    out.append((start, text[start:stop]))
            position = find(word, end)
    return sorted(out)


def hit_lines(text: str, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    """The lines of ``text`` holding a match of ``pattern``, once each, at most :data:`MAX_HITS` (C-speed search).

    Each search starts after the line last taken, so a line with many matches costs one step here.
    """
    out: list[tuple[int, str]] = []
    position = 0
    while len(out) < MAX_HITS:
        match = pattern.search(text, position)
        if match is None:
            break
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        end = len(text) if end < 0 else end
        if end - start <= MAX_LINE:
            out.append((start, text[start:end]))
        position = end + 1
    return out
