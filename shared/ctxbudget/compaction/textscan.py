"""Linear-time reading of free text: runs, typed values, sentences, subject words and informative tokens.

Everything compaction extracts from a transcript starts here, so every function costs time linear in its input: one
scan with patterns that cannot backtrack across a run (each is a single character class, or an alternation of
literals), and per-run work on at most :data:`MAX_RUN` characters. A 60,000-letter word is one run, read once.

*Values* are what a statement says something *is*: a path, a URL, an email, a host (with its port), a date, an
amount of money, a version, a number, an identifier (letters and digits: ``T9911``, ``eu-west-3``, ``spike/abc-12``),
a time zone, a person's name. *Subject words* are the statement's other content words, lower-cased and lightly
stemmed (``owners`` and ``owns`` are ``own``): two statements about the same thing share subject words, two values of
the same thing share a value type. Neither depends on how a benchmark phrases its items.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

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

MAX_RUN = 200
"""Characters of one run that are classified (a longer run is one opaque word)."""
_RUN_CACHE = 16_384
"""Distinct runs (each at most :data:`MAX_RUN` characters) whose reading is remembered: at most about 3 MB."""

_RUN = re.compile(r"[\w$€£~][\w./:@#%$€£+~'-]*")
"""A run of word characters and the punctuation that joins identifiers; one class after the first: no backtracking."""
_TRAIL = ".,;:!?)]}'\"-"
_WORDS = re.compile(r"[A-Za-z]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|vs|etc|mr|mrs|ms|dr|no|cf|approx|fig)\.|\b[A-Z]\.)$", re.IGNORECASE)
_PERSON = re.compile(r"\b[A-Z][a-z]{1,20} [A-Z][a-z]{1,20}\b")
_PLACE_BEFORE = re.compile(r"\b(?:from|in|at|via|near|into|through)\s+$")
"""A capitalized pair after one of these words (or after "to" in "from A to B") is a place, not a person."""
_TIME_ZONE = re.compile(
    r"\b(?:UTC|GMT|(?:Pacific|Eastern|Central|Mountain|Atlantic|Alaska|Hawaii)(?: Standard| Daylight)? [Tt]ime"
    r"|[PECM][SD]T|CES?T|BST|JST|AEST|[A-Z][a-z]+/[A-Z][A-Za-z_]+)\b"
)
_MONTH_DAY = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.? \d{1,2}(?:st|nd|rd|th)?\b(?:,? \d{4})?"
)
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|"
    "seventy|eighty|ninety|hundred|thousand|million|billion"
)
_MONEY_WORDS = re.compile(
    rf"\b(?:(?:{_NUMBER_WORDS})(?:[ -](?:{_NUMBER_WORDS}|and)){{0,8}}|\d[\d,.]{{0,24}})"
    r" (?:dollars|euros|pounds|usd|eur|gbp)\b",
    re.IGNORECASE,
)
_UNIT = re.compile(
    r"\A(?:ms|µs|us|ns|s|sec|secs|seconds?|minutes?|mins?|h|hrs?|hours?|days?|weeks?|%|kb|mb|gb|tb|kib|mib|gib|"
    r"rps|qps|tokens?|rows?|items?|files?|lines?|bytes|x|gbps|mbps|px|°c|°f)\Z",
    re.IGNORECASE,
)
_EXTENSION = re.compile(r"\.[A-Za-z][\w]{0,7}\Z")
_HOST = re.compile(r"\A[A-Za-z0-9][\w-]*(?:\.[\w-]+)+(?::\d{1,5})?\Z")
_DATE = re.compile(r"\A(?:\d{4}-\d{1,2}-\d{1,2}(?:[tT][\d:.]+[zZ]?)?|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}-\d{1,2})\Z")
_VERSION = re.compile(r"\A[vV]?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?\Z")
_NUMBER = re.compile(r"\A[-+]?\d[\d,]*(?:\.\d+)?%?\Z")
_MONEY = re.compile(r"\A[$€£]\d[\d,]*(?:\.\d+)?[kKmM]?\Z")
_TLDS = frozenset(
    [
        "com",
        "org",
        "net",
        "io",
        "dev",
        "ai",
        "app",
        "co",
        "uk",
        "de",
        "fr",
        "eu",
        "us",
        "edu",
        "gov",
        "internal",
        "local",
        "lan",
        "corp",
        "cloud",
        "svc",
        "cluster",
        "localhost",
    ]
)
_KNOWN_EXTENSIONS = frozenset(
    [
        "py",
        "pyi",
        "js",
        "jsx",
        "ts",
        "tsx",
        "go",
        "rs",
        "java",
        "kt",
        "rb",
        "php",
        "cs",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "md",
        "rst",
        "json",
        "yaml",
        "yml",
        "toml",
        "cfg",
        "ini",
        "txt",
        "csv",
        "sql",
        "sh",
        "html",
        "css",
        "lock",
        "env",
        "ipynb",
        "proto",
        "tf",
        "xml",
        "log",
        "traj",
        "jsonl",
        "conf",
        "dat",
        "db",
        "gz",
        "zip",
        "tar",
        "whl",
        "cjs",
        "mjs",
        "vue",
        "svelte",
        "lua",
        "swift",
    ]
)
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "i",
        "you",
        "we",
        "he",
        "she",
        "they",
        "me",
        "my",
        "our",
        "your",
        "their",
        "them",
        "him",
        "her",
        "us",
        "please",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "just",
        "also",
        "then",
        "than",
        "so",
        "if",
        "not",
        "no",
        "yes",
        "ok",
        "okay",
        "do",
        "does",
        "did",
        "done",
        "doing",
        "have",
        "has",
        "had",
        "having",
        "let",
        "lets",
        "get",
        "got",
        "make",
        "made",
        "now",
        "next",
        "here",
        "there",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "how",
        "when",
        "where",
        "why",
        "all",
        "any",
        "some",
        "more",
        "most",
        "very",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "after",
        "before",
        "again",
        "only",
        "own",
        "same",
        "too",
        "up",
        "down",
        "out",
        "off",
        "each",
        "few",
        "other",
        "such",
        "both",
        "am",
        "being",
        "one",
        "two",
        "via",
        "per",
        "there's",
        "it's",
        "i'm",
        "i'll",
        "we'll",
        "you're",
        "that's",
        "let's",
        "don't",
        "doesn't",
        "didn't",
        "can't",
        "won't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "hasn't",
        "haven't",
        "hadn't",
        "i'd",
        "we're",
        "they're",
        "thanks",
        "thank",
        "hi",
        "hello",
        "hey",
        "sure",
        "well",
        "going",
        "want",
        "need",
        "like",
        "still",
        "really",
        "actually",
        "quick",
    ]
)
"""Function words, question words and filler: they carry no subject and never score a search."""


@dataclass(frozen=True)
class Value:
    """A typed value found in text: its ``kind`` and its text as written (trailing punctuation removed)."""

    kind: str
    text: str


_LONG_RUN = re.compile(rf"(?<!\S)\S{{{MAX_RUN + 1},}}")
_LONG_SPACE = re.compile(r"(?<![ \t])[ \t]{16,}")
"""Both tried only where a run starts (the lookbehind), so finding them is one pass over the text."""


def bounded(text: str) -> str:
    """``text`` with every run of non-space characters cut to :data:`MAX_RUN` (and long gaps to one space).

    What the patterns of compaction read: none of them then meets a run longer than :data:`MAX_RUN`, so whatever a
    pattern may retry inside one run is bounded, and reading a text costs time linear in its length. (The archive
    keeps the original; this is only what is read.)
    """
    if len(text) <= MAX_RUN:
        return text
    if max(map(len, text.split()), default=0) > MAX_RUN:  # split() is C speed; most texts have no long run
        text = _LONG_RUN.sub(lambda m: m.group(0)[:MAX_RUN] + "…", text)
    if "\t" in text or " " * 16 in text:  # a long gap needs a tab or sixteen spaces in a row
        text = _LONG_SPACE.sub(" ", text)
    return text


def clip(text: str, limit: int = 240) -> str:
    """``text`` on one line, whitespace collapsed, cut to ``limit`` chars at a word boundary with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def _run_kind(run: str) -> str | None:  # noqa: PLR0911  # one answer per value type, in priority order
    """The value type of one run (trailing punctuation already removed), or ``None`` for a plain word."""
    if len(run) > MAX_RUN:
        return None
    if run.startswith(("http://", "https://")):
        return "url"
    if "@" in run and run[0] != "@" and "." in run.rsplit("@", 1)[-1]:
        return "email"
    if run[0] in "$€£":
        return "money" if _MONEY.match(run) else None
    if run[0].isdigit() or run[0] in "+-":
        for pattern, kind in ((_DATE, "date"), (_VERSION, "version"), (_NUMBER, "number")):
            if pattern.match(run):
                return kind
    if "/" in run and _is_path(run):
        return "path"
    extension = _EXTENSION.search(run)
    if extension and extension.group(0)[1:].lower() in _KNOWN_EXTENSIONS and not run[0].isdigit():
        return "path"
    if _HOST.match(run):
        if ":" in run.rsplit(".", 1)[-1]:
            return "hostport"
        if run.rsplit(".", 1)[-1].lower() in _TLDS:
            return "host"
    return _word_kind(run)


def _is_path(run: str) -> bool:
    """A run with a slash is a path when it is rooted, has a file extension, two slashes, or digits or joiners."""
    if run.startswith(("/", "~/", "./", "../")) or run.count("/") >= 2 or _EXTENSION.search(run):
        return True
    return any(ch.isdigit() or ch in "_-." for ch in run)


def _word_kind(run: str) -> str | None:
    """An identifier (letters with digits, snake or camel case, an acronym, a dotted name) or ``None``."""
    has_digit = any(ch.isdigit() for ch in run)
    if has_digit:
        return "identifier" if any(ch.isalpha() for ch in run) or not _NUMBER.match(run) else "number"
    inner = run[1:]
    if "_" in run.strip("_") or "::" in run or (inner != inner.lower() and run != run.upper()):
        return "identifier"
    if 2 <= len(run) <= 12 and run.isalpha() and run.isupper():
        return "identifier"  # an acronym or a code: UTC, PAMNT
    if "." in run.strip(".") and all(part for part in run.split(".")):
        return "identifier"  # a dotted name: ctxbudget.archive.store
    return None


def _phrases(text: str) -> list[tuple[int, int, Value]]:
    """Values of more than one run (a time zone, a month and day, an amount in words, a person's name), in order."""
    found: list[tuple[int, int, Value]] = []
    for pattern, kind in ((_TIME_ZONE, "timezone"), (_MONTH_DAY, "date"), (_MONEY_WORDS, "money")):
        found.extend((m.start(), m.end(), Value(kind, m.group(0))) for m in pattern.finditer(text))
    found.sort(key=lambda item: item[0])
    for match in _PERSON.finditer(text):
        first, last = match.group(0).split(" ")
        if first.lower() in STOP_WORDS or last.lower() in STOP_WORDS:
            continue
        before = text[max(0, match.start() - 48) : match.start()]
        place = _PLACE_BEFORE.search(before) is not None or (before.endswith("to ") and "from " in before)
        found.append((match.start(), match.end(), Value("place" if place else "person", match.group(0))))
    found.sort(key=lambda item: item[0])
    kept: list[tuple[int, int, Value]] = []
    for start, end, value in found:  # overlapping phrases: the first (and, at one start, the longest) wins
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, value))
    return kept


@dataclass(frozen=True)
class Scan:
    """One pass over a text: its typed values and its content words (stemmed), each in order."""

    values: tuple[Value, ...]
    words: tuple[str, ...]


def scan(text: str) -> Scan:
    """Read ``text`` once: typed values (phrases first, then runs outside them) and the content words around them."""
    text = bounded(text)
    phrases = _phrases(text)
    found: list[tuple[int, Value]] = [(start, value) for start, _, value in phrases]
    words: list[str] = []
    index = 0
    for match in _RUN.finditer(text):
        start = match.start()
        while index < len(phrases) and phrases[index][1] <= start:
            index += 1
        if index < len(phrases) and phrases[index][0] <= start:
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
    kind = _run_kind(run)
    if kind is not None:
        return Value(kind, run)
    return tuple(_content(run)) if len(run) <= MAX_RUN else None


_read_run = functools.lru_cache(maxsize=_RUN_CACHE)(_run_reading)
""":func:`_run_reading` of a run of at most :data:`MAX_RUN` characters, remembered (a session's words recur)."""


def _content(run: str) -> list[str]:
    out = []
    for word in _WORDS.findall(run):
        lower = word.lower()
        if 3 <= len(lower) <= 40 and lower not in STOP_WORDS and not (word.isupper() and len(word) > 1):
            out.append(stem(lower))
    return out


def values(text: str) -> list[Value]:
    """Every typed value in ``text``, in order of appearance (phrases such as "five hundred dollars" included)."""
    return list(scan(text).values)


def stem(word: str) -> str:
    """A light, deterministic stem of a lower-cased word: plurals, ``-ing``, ``-ed``, ``-ly`` and ``-er`` removed."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "ches", "shes", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix, minimum in (("ing", 6), ("ed", 5), ("ly", 6), ("er", 6)):
        if word.endswith(suffix) and len(word) >= minimum and word[-len(suffix) - 1] != "e":
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


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
