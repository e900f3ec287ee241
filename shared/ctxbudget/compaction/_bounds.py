"""Bounding what compaction reads and clipping what it shows: runs cut to :data:`MAX_RUN`, lines cut at a word.

:func:`bounded` is applied before any pattern that could retry inside a run, so reading a text costs time linear in
its length; :func:`clip` shortens a text to one line for a bullet or a marker.
"""

from __future__ import annotations

import re

__all__ = ["MAX_RUN", "bounded", "bounded_line", "clip"]

MAX_RUN = 200
"""Characters of one run that are classified (a longer run is one opaque word)."""

_LONG_RUN = re.compile(rf"(?<!\S)\S{{{MAX_RUN + 1},}}")
_LONG_SPACE = re.compile(r"(?<![ \t])[ \t]{16,}")
"""Both tried only where a run starts (the lookbehind), so finding them is one pass over the text."""


def bounded(text: str) -> str:
    """``text`` with every run of non-space characters cut to :data:`MAX_RUN` (and long gaps to one space).

    What the patterns of compaction read: none of them then meets a run longer than :data:`MAX_RUN`, so whatever a
    pattern may retry inside one run is bounded, and reading a text costs time linear in its length. (The archive
    keeps the original; this is only what is read.)
    """
    return text if len(text) <= MAX_RUN else bounded_line(text)


def bounded_line(line: str) -> str:
    """One line of ``bounded(text)`` where ``text`` (longer than :data:`MAX_RUN`) holds ``line`` between line breaks.

    :func:`bounded` cuts runs and closes gaps, neither of which spans a line break, so a long text's lines can be
    bounded one at a time: only those read. (A text of :data:`MAX_RUN` characters or fewer is left as it is.)
    """
    if len(line) > MAX_RUN and max(map(len, line.split()), default=0) > MAX_RUN:  # split() is C speed
        line = _LONG_RUN.sub(lambda m: m.group(0)[:MAX_RUN] + "…", line)
    if "\t" in line or " " * 16 in line:  # a long gap needs a tab or sixteen spaces in a row
        line = _LONG_SPACE.sub(" ", line)
    return line


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
