"""Typed values: what a statement says something *is*, read from one run or from a phrase of several.

A path, a URL, an email, a host (with its port), a date, an amount of money, a version, a number, an identifier
(letters and digits: ``T9911``, ``eu-west-3``, ``spike/abc-12``) is one run (:func:`run_kind`); a time zone, a month
and day, an amount in words and a person's (or a place's) name span several (:func:`phrases`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._bounds import MAX_RUN
from ._needles import Needled
from ._words import STOP_WORDS

__all__ = ["Value", "phrases", "run_kind"]

_PERSON = re.compile(r"\b[A-Z][a-z]{1,20} [A-Z][a-z]{1,20}\b")
_PLACE_BEFORE = re.compile(r"\b(?:from|in|at|via|near|into|through)\s+$")
"""A capitalized pair after one of these words (or after "to" in "from A to B") is a place, not a person."""
_TIME_ZONE = Needled(
    re.compile(
        r"\b(?:UTC|GMT|(?:Pacific|Eastern|Central|Mountain|Atlantic|Alaska|Hawaii)(?: Standard| Daylight)? [Tt]ime"
        r"|[PECM][SD]T|CES?T|BST|JST|AEST|[A-Z][a-z]+/[A-Z][A-Za-z_]+)\b"
    ),
    ("UTC", "GMT", "ime", "ST", "DT", "CET", "/"),
)
_MONTH_DAY = Needled(
    re.compile(
        r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December"
        r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.? \d{1,2}(?:st|nd|rd|th)?\b(?:,? \d{4})?"
    ),
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
)
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|"
    "seventy|eighty|ninety|hundred|thousand|million|billion"
)
_MONEY_WORDS = Needled(
    re.compile(
        rf"\b(?:(?:{_NUMBER_WORDS})(?:[ -](?:{_NUMBER_WORDS}|and)){{0,8}}|\d[\d,.]{{0,24}})"
        r" (?:dollars|euros|pounds|usd|eur|gbp)\b",
        re.IGNORECASE,
    ),
    ("dollars", "pounds", "usd", "eur", "gbp"),
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


@dataclass(frozen=True)
class Value:
    """A typed value found in text: its ``kind`` and its text as written (trailing punctuation removed)."""

    kind: str
    text: str


def run_kind(run: str) -> str | None:  # noqa: PLR0911  # one answer per value type, in priority order
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


def phrases(text: str) -> list[tuple[int, int, Value]]:
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
