r"""Cut points inside long runs of whitespace, which have no letter or digit to cut after (:mod:`._token_chunks`).

tiktoken matches whitespace that ends before a non-space (``\s+(?!\S)``, in both bundled patterns) with its
backtracking engine, one stack entry per character. From 999,999 characters on, the engine (fancy-regex, at most
1,000,000 entries) fails and tiktoken panics: ``pyo3_runtime.PanicException``, a ``BaseException`` that passes every
``except Exception``. A text is therefore also cut inside long whitespace runs, at places that keep its tokens. Here a
*run* is a maximal run of Unicode ``White_Space`` (the regex's ``\s``, listed explicitly: Python's also has
``\x1c``-``\x1f``); it starts a pre-token where its part starts, after a character that is not whitespace, or after its
last newline once cut there.

* **A stretch of one character** ``c`` (not ``\r``/``\n``) that starts a pre-token is cut at every multiple of
  :data:`PERIOD` characters from its start that is :data:`MARGIN` or more before the stretch ends. The part before
  the cut ends in a run of ``c`` (its own pre-token: ``\s+(?!\S)``, or ``\s++$``, at a text's end); the part after
  starts with the rest of the run, whose pre-token ends where the whole run's does. Both encodings BPE-merge such a
  stretch into left-aligned tokens (128 spaces, 16 tabs, 8 NBSP, 2 U+3000...) that straddle a multiple of 128 only
  within 19 characters of the stretch's end, whatever whitespace follows: checked for every such character at every
  length up to 3,000 (10,000 for space, tab, NBSP, U+3000) and with random whitespace after it, and the tests compare
  counts with whole encodes.
* **After a run's last newline**, before a long stretch: the newline's pre-token ends there (``\s*[\r\n]+``, or a
  symbol's ``[\r\n/]*``), and the stretch then starts one. Not at a text's end under ``cl100k_base``, whose ``\s++$``
  keeps that run whole (and never panics).
* **A run tiktoken cannot encode at all** (:data:`REGEX_LIMIT` characters or more, no newline, from where its
  pre-token starts, not kept whole by ``\s++$``) is cut at every multiple of :data:`PERIOD` from its start: its count
  is then the sum of its parts', for a text that has no other.

Each cut is found for the part that starts at the previous one, which is a text of its own. Finding one costs time
linear in what is scanned: a run's start is found backwards (galloping, then halving), its end and last newline once.
"""

from __future__ import annotations

import functools
import re

__all__ = ["ENDS_WHOLE", "MARGIN", "PERIOD", "REGEX_LIMIT", "SPACES", "SpaceCuts", "run_start"]

PERIOD = 128
"""Cuts inside a stretch of one whitespace character fall at multiples of this many characters from its start."""

MARGIN = 512
"""How near a stretch's end a cut may fall (its tokens straddle a multiple of 128 up to 19 characters from it)."""

REGEX_LIMIT = 999_999
"""The shortest whitespace (after its last newline) that tiktoken 0.14's regex fails on, from where its pre-token
starts: ``"x" + " " * 999_998 + "y"`` encodes, one more space panics."""

ENDS_WHOLE: dict[str, bool] = {"o200k_base": False, "cl100k_base": True}
"""The encodings whose whitespace runs are cut, each with whether its ``\\s++$`` takes a run ending its text whole."""

_CLASS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
SPACES = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))
)
"""Unicode ``White_Space``: the characters tiktoken's regex matches with ``\\s``."""

_LONG = PERIOD + MARGIN
"""The shortest run that can hold a cut (after its last newline, or in a stretch from its start)."""
_ALL = re.compile(f"[{_CLASS}]*")
_LONG_RUN = re.compile(f"[{_CLASS}]{{{_LONG},}}")


@functools.cache
def _stretch(char: str) -> re.Pattern[str]:
    return re.compile(f"{re.escape(char)}*")


def _end(pattern: re.Pattern[str], text: str, start: int) -> int:
    """Where ``pattern`` (one that matches the empty string) stops matching from ``start``."""
    found = pattern.match(text, start)
    return start if found is None else found.end()


class SpaceCuts:
    """The cuts inside the whitespace runs of one text, asked for in increasing order (the runs looked at are kept).

    Args:
        text: the text being cut.
        ends_whole: the encoding keeps a run that ends the text whole (:data:`ENDS_WHOLE`).
    """

    def __init__(self, text: str, ends_whole: bool) -> None:
        self._text = text
        self._ends_whole = ends_whole
        self._run = (0, 0, -1)  # start (or the part start it was looked for from), end, last newline (or -1)
        self._same = (0, 0)  # a stretch of one character: start, end

    def first(self, base: int, low: int, high: int) -> int | None:
        """The first cut at or after ``low`` and before ``high`` for a part starting at ``base`` (``base < low``).

        Or the cut after a newline, before ``low``, that the cuts in the stretch beyond it need first.
        """
        text = self._text
        position = low
        if low < len(text) and text[low] in SPACES:
            start, end, newline = self._run_at(low, base)
            cut = self._candidate(max(start, base), end, newline, low)
            if cut is not None or end >= high:
                return cut if cut is not None and cut < high else None
            position = end
        while position < high:
            found = _LONG_RUN.search(text, position, min(len(text), high + _LONG))
            if found is None or found.start() >= high:
                return None
            start, end, newline = self._run_at(found.start(), found.start())
            cut = self._candidate(start, end, newline, low)
            if cut is not None:
                return cut if cut < high else None
            position = end
        return None

    def _run_at(self, index: int, floor: int) -> tuple[int, int, int]:
        """The run holding ``text[index]``: its start (``floor`` at the earliest), end and last newline (or -1)."""
        start, end, newline = self._run
        if start <= index < end:
            return self._run
        text = self._text
        start = self._start(index, floor)
        end = _end(_ALL, text, index)
        newline = max(text.rfind("\n", start, end), text.rfind("\r", start, end))
        self._run = (start, end, newline)
        return self._run

    def _start(self, index: int, floor: int) -> int:
        """The least ``i >= floor`` with ``text[i:index]`` all whitespace."""
        return run_start(self._text, _ALL, index, floor)

    def _candidate(self, start: int, end: int, newline: int, low: int) -> int | None:
        """The first cut at or after ``low`` in the run ``text[start:end]`` of a part (``start`` starts a pre-token)."""
        text = self._text
        kept_whole = end == len(text) and self._ends_whole
        limit = -1
        if text[start] not in "\r\n":
            limit = self._stretch_end(start) - MARGIN
        if newline < start and end - start >= REGEX_LIMIT and not kept_whole:
            limit = end - MARGIN  # tiktoken cannot encode this run: any multiple of PERIOD will do
        cut = start + PERIOD * max(1, -(-(low - start) // PERIOD))
        if cut <= limit:
            return cut
        if newline >= start and end - (newline + 1) >= _LONG and not kept_whole:
            return newline + 1
        return None

    def _stretch_end(self, start: int) -> int:
        """Where the stretch of ``text[start]`` starting at ``start`` ends."""
        begin, end = self._same
        if not begin <= start < end:
            end = _end(_stretch(self._text[start]), self._text, start)
            self._same = (start, end)
        return end


def run_start(text: str, run: re.Pattern[str], end: int, floor: int) -> int:
    """The least ``i >= floor`` with ``text[i:end]`` a ``run`` (a pattern of one repeated class, ``[ ]*``).

    Gallops back (64, 128, 256 ... characters) until a probe holds another character, then halves the last step:
    O(log) probes of the regex engine, whatever the run's length.
    """
    known, step = end, 64  # text[known:end] is all run
    while known > floor:
        begin = max(floor, known - step)
        if run.fullmatch(text, begin, known) is None:
            while known - begin > 1:  # text[begin:known] holds another character; each probe costs half the rest
                middle = (begin + known) // 2
                if run.fullmatch(text, middle, known) is None:
                    begin = middle
                else:
                    known = middle
            return known
        known, step = begin, step * 2
    return known
