r"""Tokens in a long stretch of one ASCII character, proven from short encodes instead of the whole text's.

A text such as ``"hello " + "x" * 5_000_000`` has no place :mod:`._token_chunks` may cut: a pre-token never ends
inside a run of letters. Its first or last thousand tokens took encoding all of it (``ctxbudget inspect`` spent
seconds per megabyte on a goal's excerpt). Inside a pre-token tiktoken runs BPE: of the adjacent pairs whose bytes
together are a token, it merges the one of lowest rank, the leftmost of equal ones, until none is left. Two facts:

1. *A run of whole tokens of an encoding is the encoding of its own bytes*: on those bytes BPE makes the same merges
   in the same order (none of them crossed the run's ends, and ties go leftmost within the run too), then stops.
2. *An encoding has a token boundary among any* ``n`` *consecutive byte positions* where no token is longer: inside
   a stretch of ``c``, with :data:`MARGIN` characters of it around, ``n`` is the longest token made of ``c`` alone.

Take a text ``T`` with encoding ``E``, and a *window* of ``n`` positions inside a stretch of one character
``c`` (an ASCII letter or symbol: not a digit, whose pre-tokens are three long, nor whitespace) with :data:`MARGIN`
characters of the stretch before it. For every ``r`` in the window, ``T[:r]`` splits into the same pre-tokens as
``T`` up to the one holding ``r``, which then ends at ``r``: both bundled patterns read a stretch of one letter or
symbol as a run of one character class, greedily, and nothing before it looks that far ahead. (Not ``/``, which
``o200k_base`` reads in either of two classes: ``[^\s\p{L}\p{N}]+`` or, after a newline, ``[\r\n/]*``; the text
after a ``/`` in the second could then split differently on its own.) That piece is longer
than any token, so tiktoken does not map it to one token whole. Hence where ``E`` has a boundary at ``r`` (fact 2: at
some ``r`` in the window), ``encode(T[:r])`` is ``E``'s tokens up to ``r`` (fact 1): the tokens *all* the
``encode(T[:r])`` start with are ``E``'s first tokens. Where they end is a *seam*: with :data:`MARGIN` characters of
the stretch after it (and, for the text before it, before it), ``E`` there is the two sides' encodings joined.

An encode with a boundary at another window position gives that position's encode too (the same argument, in the
shorter text): at most ``n`` encodes are made (8 for a letter), each a little longer than the text before the
window, so the proof starts from the nearest seam before the stretch. From a seam with :data:`NEED` characters of the
stretch after it, the argument needs only ``encode(c * j)``: ``E``'s next tokens are a *unit*, computed once per
character, repeated as far as the stretch goes.

BPE merges a stretch from its left, so its last tokens depend on where it starts: they are found from there (a seam
before the stretch, the proof past its start, units to its end), at the cost of scanning back to its start, never of
encoding it. The property tests compare every edge found this way with the whole text's tokens.
"""

from __future__ import annotations

import functools
import re
import threading

import tiktoken

from ._space_runs import run_start
from ._token_chunks import encode_piece, encode_text, last_cut

__all__ = ["NEED", "find_stretch", "last_stretch", "lead", "trail", "units_ahead"]

WIDTH = 128
"""Bytes in the longest token of the encodings proofs are made for (both bundled ones): the widest window."""

MARGIN = 130
"""Characters of the stretch kept on each side of a window: a piece that long is never one token (:data:`WIDTH`)."""

NEED = 2 * MARGIN + WIDTH + 2
"""The shortest stretch a window fits in with its margins, and what a unit needs ahead of (behind) a seam."""

_CHARS = frozenset(map(chr, [*range(0x21, 0x2F), *range(0x3A, 0x7F)]))
"""The characters a stretch is made of: ASCII letters and symbols but ``/`` (no digit, whitespace or control)."""

_LONG = re.compile(rf"([!-.:-~])\1{{{NEED - 1},}}")
"""A stretch of one character of :data:`_CHARS`, long enough to hold a window with its margins."""
_START = re.compile(rf"([!-.:-~])\1{{{NEED - 1}}}")
"""The start of such a stretch (matched without reading the rest of it)."""

_LEAD_FLOOR = 1 << 16
"""Characters the encodes proving a stretch's first seam may always hold (:func:`lead`)."""

_DEPTH = 8
"""How many stretches in a row (each found from the one after it) a seam is looked for through, at most."""

_units: dict[tuple[str, str], tuple[list[int], int] | None] = {}
_units_lock = threading.Lock()


@functools.cache
def _stretch(char: str) -> re.Pattern[str]:
    return re.compile(f"{re.escape(char)}*")


@functools.cache
def _longest(encoding: tiktoken.Encoding, char: str = "") -> int:
    """Bytes in ``encoding``'s longest token (made of ``char`` alone, if given): more than :data:`WIDTH` if unknown."""
    ranks = getattr(encoding, "_mergeable_ranks", None)
    if not isinstance(ranks, dict) or not ranks:
        return WIDTH + 1
    if not char:
        return max(map(len, ranks))
    return max((size for size in range(1, WIDTH + 1) if (char * size).encode() in ranks), default=1)


def find_stretch(text: str, start: int, stop: int) -> int | None:
    """Where the first stretch of at least :data:`NEED` characters that starts in ``text[start:stop]`` starts."""
    found = _START.search(text, start, min(len(text), stop + NEED))
    return found.start() if found is not None and found.start() < stop else None


def last_stretch(text: str, start: int, stop: int) -> int | None:
    """Where the last stretch of at least :data:`NEED` characters within ``text[start:stop]`` ends."""
    end = None
    for found in _LONG.finditer(text, start, stop):
        end = found.end()
    return end


def lead(encoding: tiktoken.Encoding, text: str, start: int, at: int) -> tuple[list[int], int] | None:
    """The tokens from the seam ``start`` to a seam proven in the stretch at ``at``, and that seam (or ``None``).

    ``text[at:at + NEED]`` is a stretch (:func:`find_stretch`); its window starts :data:`MARGIN` into it. Each
    encode holds the text from ``start``: after a long text with no seam the proof gives up (``None``) once its
    encodes hold more characters than the stretch (and :data:`_LEAD_FLOOR`), so the stretch is rather encoded.
    """
    if _longest(encoding) > WIDTH or _LONG.match(text, at, at + NEED) is None:
        return None
    budget = max(_LEAD_FLOOR, _run_end(text, text[at], at, len(text)) - at)
    found = _common_start(encoding, text, start, at + MARGIN, width=_longest(encoding, text[at]), budget=budget)
    return found if found is not None and found[1] > at else None  # a seam inside the stretch: the argument holds


def units_ahead(encoding: tiktoken.Encoding, text: str, start: int, want: int) -> tuple[list[int], int, int]:
    """The unit of the stretch after the seam ``start``, how many follow it, and the seam after them.

    As many units as ``want`` tokens take, or as the stretch holds (none when no stretch of :data:`NEED` follows).
    Costs scanning the stretch as far as they go, and the unit's encodes the first time its character is seen.
    """
    unit = _unit(encoding, text[start]) if start < len(text) else None
    if unit is None:
        return [], 0, start
    tokens, size = unit
    copies = -(-want // len(tokens))
    end = _run_end(text, text[start], start, start + (copies - 1) * size + NEED)
    copies = min(copies, (end - start - NEED) // size + 1) if end - start >= NEED else 0
    return tokens, copies, start + copies * size


def trail(encoding: tiktoken.Encoding, text: str, end: int, at: int, want: int) -> tuple[list[int], int] | None:
    """The tokens from a seam in the stretch ending at ``at`` to the seam ``end``, and that seam (or ``None``).

    The seam is as far back as ``want`` tokens need, while :data:`MARGIN` characters of the stretch stay before it.
    """
    found = _seams(encoding, text, at, 0)
    if found is None:
        return None
    first, copies, (unit, size), start = found
    last = first + copies * size  # the stretch's last seam: from it on, the text is encoded
    tokens = encode_text(encoding, text[last:end])
    copies = min(-(-(want - len(tokens)) // len(unit)), (last - start - MARGIN) // size)
    return (unit * max(0, copies) + tokens, last - max(0, copies) * size) if last - start >= MARGIN else None


def _seams(
    encoding: tiktoken.Encoding, text: str, end: int, depth: int
) -> tuple[int, int, tuple[list[int], int], int] | None:
    """The seams in the stretch ending at ``end``: the first, how many units follow it, the unit, the stretch's start.

    The first seam is proven from a seam before the stretch (:func:`_seam_before`); a unit follows each seam with
    :data:`NEED` characters of the stretch after it.
    """
    start = _run_start(text, text[end - 1], end, 0)
    unit = _unit(encoding, text[end - 1])
    before = _seam_before(encoding, text, start, depth) if unit is not None and end - start >= NEED else None
    entered = lead(encoding, text, before, start) if before is not None else None
    if unit is None or entered is None:
        return None
    first = entered[1]
    return first, (end - first - NEED) // unit[1] + 1 if end - first >= NEED else 0, unit, start


def _seam_before(encoding: tiktoken.Encoding, text: str, at: int, depth: int) -> int | None:
    """A seam at or before ``at`` (the start of a stretch), the nearest found: searched back in doubling windows.

    The last place a pre-token ends, or, when a stretch ends after it, that stretch's last seam.
    """
    if depth >= _DEPTH:
        return None
    size = 2 * NEED
    while True:
        low = max(0, at - size)
        cut = last_cut(text, low, at)
        end = last_stretch(text, low, at)
        if end is not None and (cut is None or end > cut):
            found = _seams(encoding, text, end, depth + 1)
            if found is not None:
                return found[0] + found[1] * found[2][1]
        if cut is not None or low == 0:
            return 0 if cut is None else cut
        size *= 2


def _unit(encoding: tiktoken.Encoding, char: str) -> tuple[list[int], int] | None:
    """The tokens a stretch of ``char`` starts with after a seam, and their length in characters (``None``: none)."""
    key = (encoding.name, char)
    if char not in _CHARS or key in _units:
        return _units.get(key)
    found = None
    if _longest(encoding) <= WIDTH:
        width = _longest(encoding, char)
        found = _common_start(encoding, char * (MARGIN + width), 0, MARGIN, width=width)
    unit = found if found is not None and found[0] else None
    with _units_lock:
        _units[key] = unit
    return unit


def _common_start(
    encoding: tiktoken.Encoding, text: str, start: int, low: int, *, width: int, budget: int | None = None
) -> tuple[list[int], int] | None:
    """The tokens every ``encode(text[start:r])`` starts with, ``r`` in a window of ``width`` from ``low``, and end.

    Encodes from the window's last position down; a position where an encode already has a boundary needs none.
    ``None`` once the encodes would hold more than ``budget`` characters.
    """
    covered: dict[int, int] = {}  # a position -> how many tokens come before it in the encode with a boundary there
    last = low + width - 1
    first: list[int] = []
    agreed = -1
    for end in range(last, low - 1, -1):
        known = covered.get(end)
        if known is not None:
            agreed = min(agreed, known)
            continue
        if budget is not None:
            budget -= end - start
            if budget < 0:
                return None
        tokens = encode_piece(encoding, text[start:end])
        first, agreed = (tokens, len(tokens)) if agreed < 0 else (first, _agree(first, tokens, agreed))
        position, index = end, len(tokens)
        while index > 0:  # inside the window the text is ASCII: a token's bytes are its characters
            index -= 1
            position -= len(encoding.decode_single_token_bytes(tokens[index]))
            if position < low:
                break
            covered[position] = index
    # Where the agreed tokens end, counted back from the window in bytes: a character too few when a token crossed
    # out of the stretch, which the callers' check (the seam is inside the stretch) then refuses.
    return first[:agreed], last - sum(len(encoding.decode_single_token_bytes(t)) for t in first[agreed:])


def _agree(first: list[int], other: list[int], limit: int) -> int:
    """How many leading tokens ``first`` and ``other`` share, at most ``limit``."""
    limit = min(limit, len(other))
    for index in range(limit):
        if first[index] != other[index]:
            return index
    return limit


def _run_end(text: str, char: str, start: int, stop: int) -> int:
    """The greatest ``i <= stop`` with ``text[start:i]`` all ``char``."""
    found = _stretch(char).match(text, start, stop)
    return start if found is None else found.end()


def _run_start(text: str, char: str, end: int, floor: int) -> int:
    """The least ``i >= floor`` with ``text[i:end]`` all ``char``."""
    return run_start(text, _stretch(char), end, floor)
