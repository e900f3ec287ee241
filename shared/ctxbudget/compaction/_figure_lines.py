"""Which lines of an output report a figure: a number with its unit, an amount, a named measure.

Candidate lines are found by ``str.find`` of a unit's or a measure's word on the lower-cased text (memory speed),
and only those lines are matched, so a long log costs a scan, not a regex pass per line.
"""

from __future__ import annotations

import re

from .textscan import MAX_HITS, bounded, hit_lines

__all__ = ["FIGURE_WORDS", "figure_lines"]

_MAX_HITS = MAX_HITS
"""Lines one output may yield (the items kept are the best of these)."""
_FIGURE = re.compile(  # matched on lower-cased lines
    r"[$€£]\s?\d[\d,]*(?:\.\d+)?(?![\d\"'}])"  # not a shell parameter ("$1")
    r"|\b\d[\d,]*(?:\.\d+)?(?:%|\s?(?:ms|µs|us|ns|s|sec|seconds?|minutes?|mins?|kb|mb|gb|tb|"
    r"kib|mib|gib|rps|qps|req/s|tokens?|passed|failed|errors?|warnings?|skipped|rows?|items?|files?|lines?|bytes|x)\b)"
    r"|\b(?:p\d{2}|latency|throughput|coverage|total|count|duration|accuracy|score)\b[^\n\d]{0,24}\d",
    re.IGNORECASE,
)
_FIGURE_LOWER = re.compile(r"(?=[$€£\dplctdas])(?:" + _FIGURE.pattern.replace("µs", "[µμ]s") + ")")
""":data:`_FIGURE` for text already lower-cased (case folding costs the engine a third of its time). A match starts
with a currency sign, a digit or a measure's first letter: other places are passed over by one class test."""
_UNITS = (
    r"ms|[µμ]s|us|ns|s|sec|seconds?|minutes?|mins?|kb|mb|gb|tb|kib|mib|gib|rps|qps|req/s|tokens?|passed|failed|"
    r"errors?|warnings?|skipped|rows?|items?|files?|lines?|bytes|x"
)
_AMOUNT = re.compile(r"[$€£]\s?\d[\d,]*(?:\.\d+)?(?![\d\"'}])")
_QUANTITY = re.compile(r"\d(?<!\w\d)[\d,]*+(?:\.\d+)?+(?:%|\s?(?:" + _UNITS + r")\b)")
_MEASURE = re.compile(r"\b(?:p\d{2}|latency|throughput|coverage|total|count|duration|accuracy|score)\b[^\n\d]{0,24}\d")
_P_DIGITS = re.compile(r"p\d\d")
_PROGRESS = re.compile(r"\[\s{0,3}\d{1,3}%\]")
_MEASURES = ("total", "count", "latency", "score", "duration", "coverage", "throughput", "accuracy")
"""The three branches of :data:`_FIGURE_LOWER`, searched one by one (a line matches one when it matches the whole).

A quantity's number starts at a word boundary (``\\b\\d``: no word character before its digit), and neither its
digits nor its fraction are given back: what follows a shorter number is a digit, a comma or a point, which starts
no unit. A measure is searched only in a line holding its word (or ``p`` and two digits).
"""

FIGURE_WORDS = (
    "ms", "%", "passed", "failed", "error", "latency", "throughput", "coverage", "total", "duration", "seconds",
    "tokens", "bytes", "rows", "items", " mb", " gb", " kb", "mib", "gib", "kib", " s ", " s,", " s.", "sec",
    "minute", "$", "€", "£", "rps", "qps", "p9", "p5", "score",
)  # fmt: skip
"""Words a figure line holds (a unit, a measure): what candidate lines are found by."""


def figure_lines(text: str, lower: str | None = None, present: frozenset[str] | None = None) -> list[tuple[int, str]]:
    """Lines of ``text`` reporting a figure (a number with its unit, a named measure), at most :data:`_MAX_HITS`.

    Candidates come from ``str.find`` of each unit or measure word on the lower-cased text (memory speed); only those
    lines are matched against :data:`_FIGURE`, so a long log costs a scan, not a regex pass per line.
    """
    lower = text.lower() if lower is None else lower
    if len(lower) != len(text):
        found = hit_lines(bounded(text), _FIGURE)
        return [(p, ln) for p, ln in found if len(ln) < 200 and _FIGURE.search(_PROGRESS.sub(" ", ln)) is not None]
    # Lines are matched lazily: while the lines visited are fewer than the cap on lines taken, the cap cannot bind,
    # and the lines found are the first of them that match (only those are matched). Past it, the lines visited so
    # far are matched in the order first visited and every later one at once, as the cap then decides which are
    # taken. ``lines`` holds each line visited once (its start and end), in the order first visited.
    scan = lower + "\n"  # every line ends in a line break: a word (which holds none) is found as in ``lower``
    find, rfind = scan.find, scan.rfind
    lines: dict[int, int] = {}
    taken: dict[int, str] = {}
    rejected: set[int] = set()  # a line holding several figure words is matched once
    cap = 4 * _MAX_HITS
    eager = False
    for word in FIGURE_WORDS:
        if present is not None and word not in present:
            continue  # known absent: find() would find nothing
        position, seen = find(word), 0
        while position >= 0 and seen < _MAX_HITS:
            start = rfind("\n", 0, position) + 1
            stop = find("\n", position)
            if stop - start < 200:
                if not eager:
                    lines[start] = stop
                    if len(lines) > cap:
                        eager = True
                        _take_figures(text, lower, lines, taken=taken, rejected=rejected)
                elif start not in taken and start not in rejected:
                    _take_figure(text, lower, (start, stop), taken=taken, rejected=rejected)
                if len(taken) >= cap:
                    return sorted(taken.items())[:_MAX_HITS]  # no later visit can take a line
            seen += 1
            position = find(word, stop)
    return sorted(taken.items())[:_MAX_HITS] if eager else _first_figures(text, lower, lines)


def _first_figures(text: str, lower: str, lines: dict[int, int]) -> list[tuple[int, str]]:
    """The first :data:`_MAX_HITS` of ``lines`` (start: end) that report a figure, in the text's order."""
    found: list[tuple[int, str]] = []
    for start in sorted(lines):
        if _figure_at(lower, start, lines[start]):
            found.append((start, text[start : lines[start]]))
            if len(found) >= _MAX_HITS:
                break
    return found


def _take_figures(text: str, lower: str, lines: dict[int, int], *, taken: dict[int, str], rejected: set[int]) -> None:
    """Match ``lines`` (start: end) in the order first visited, until the cap on lines taken."""
    for start, stop in lines.items():
        if len(taken) >= 4 * _MAX_HITS:
            break
        if start not in taken and start not in rejected:
            _take_figure(text, lower, (start, stop), taken=taken, rejected=rejected)


def _take_figure(text: str, lower: str, line: tuple[int, int], *, taken: dict[int, str], rejected: set[int]) -> None:
    """Match the line at ``line`` (its start and end) once: taken when it reports a figure, else rejected."""
    start, stop = line
    if _figure_at(lower, start, stop):
        taken[start] = text[start:stop]
    else:
        rejected.add(start)


def _figure_at(lower: str, start: int, stop: int) -> bool:
    """The line ``lower[start:stop]`` reports a figure: ``_FIGURE_LOWER.search(lower, start, stop)``, sooner.

    A progress counter (``reading sources... [100%] index``, ``[ 45%] Building CXX object``) is no figure of the
    work: a line reports one only past it.
    """
    if "%]" in lower[start:stop] and _PROGRESS.search(lower, start, stop):
        return _FIGURE_LOWER.search(_PROGRESS.sub(" ", lower[start:stop])) is not None
    if _QUANTITY.search(lower, start, stop):
        return True
    line = lower[start:stop]
    if any(map(line.__contains__, "$€£")) and _AMOUNT.search(lower, start, stop):
        return True
    measured = any(map(line.__contains__, _MEASURES)) or _P_DIGITS.search(line)
    return bool(measured and _MEASURE.search(lower, start, stop))
