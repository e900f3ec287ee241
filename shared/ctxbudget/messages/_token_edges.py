"""The first (last) tokens of a huge text, from a part about as long as they are, never from the whole text.

An excerpt keeps a text's head and tail (:meth:`~ctxbudget.messages.tokens.TiktokenCounter.fit_text_edges`): a few
thousand tokens of a text that may hold millions. Each end is encoded from a part that ends (starts) at a *seam*, a
place where the text's tokens are those of the two sides encoded apart, so the part's tokens are exactly the
whole's. Seams are where a pre-token always ends (:func:`~._token_chunks.first_cut`,
:func:`~._token_chunks.last_cut`), or are proven inside a long stretch of one character (:mod:`._stretches`), whose
tokens are then repeated units. A part is about :data:`_CHARS_PER_TOKEN` characters per token still wanted, doubled
while no seam is found past it: the cost follows the tokens asked for, not the text's length. Only a long text with
no seam at all (megabytes of CJK letters without ASCII punctuation, of ``"ab"`` repeated) is still encoded to its
end, a part at a time. A huge text is counted the same way (:func:`count_huge`): its stretches are never encoded.
"""

from __future__ import annotations

import tiktoken

from ._space_runs import SpaceCuts
from ._stretches import find_stretch, last_stretch, lead, trail, units_ahead
from ._token_chunks import CHUNK_CHARS, count_tokens, encode_piece, encode_text, first_cut, last_cut, parts, space_cuts

__all__ = ["count_huge", "cut_edge", "head_tokens", "tail_tokens"]

_STEP = 1024
"""The fewest characters a part past the last seam holds."""

_CHARS_PER_TOKEN = 4
"""Characters of text a part holds per token still wanted (about English prose's; a denser text takes more parts)."""


def head_tokens(encoding: tiktoken.Encoding, text: str, at_least: int, step: int = _STEP) -> list[int]:
    """The first tokens of ``text``: at least ``at_least`` of them (all, when it has fewer), as the whole's start.

    ``step``: the fewest characters a part holds. Memory: the tokens returned, and a part's.
    """
    tokens: list[int] = []
    start = 0  # a seam: tokens are the whole text's tokens before it
    spaces = space_cuts(text, encoding.name)
    while len(tokens) < at_least and start < len(text):
        want = at_least - len(tokens)
        unit, copies, start = units_ahead(encoding, text, start, want)
        part = unit * copies
        if not part:
            part, start = _next_part(encoding, text, start, max(step, _CHARS_PER_TOKEN * want), spaces)
        tokens += part
    return tokens


def tail_tokens(encoding: tiktoken.Encoding, text: str, at_least: int, step: int = _STEP) -> list[int]:
    """The last tokens of ``text``: at least ``at_least`` of them (all, when it has fewer), as the whole's end.

    ``step``: the fewest characters a part holds. Memory: the tokens returned, and a part's.
    """
    parts: list[list[int]] = []
    found = 0
    end = len(text)  # a seam: the parts are the whole text's tokens after it
    while found < at_least and end > 0:
        want = at_least - found
        part, end = _previous_part(encoding, text, end, max(step, _CHARS_PER_TOKEN * want), want)
        parts.append(part)
        found += len(part)
    return [token for part in reversed(parts) for token in part]


def count_huge(encoding: tiktoken.Encoding, text: str, chunk: int = CHUNK_CHARS) -> int:
    """:func:`~._token_chunks.count_tokens` of ``text``, where no part with a long stretch of one character is encoded.

    Such a part (longer than ``chunk``: :func:`~._token_chunks.cut_points` found no place to cut it) is counted
    between seams, its stretches as units (:func:`~._stretches.units_ahead`): tiktoken's BPE of a pre-token of
    megabytes takes about 45 bytes of memory per character (``"x" * 5_000_000``: 230 MB), whatever form it returns.
    """
    return sum(_count_part(encoding, part, chunk) for part in parts(encoding, text, chunk))


def _count_part(encoding: tiktoken.Encoding, part: str, chunk: int) -> int:
    """The tokens of ``part`` (a text of its own), summed between seams when it holds a long stretch."""
    if len(part) <= chunk or find_stretch(part, 0, len(part)) is None:
        return len(encode_piece(encoding, part))
    total, start = 0, 0
    spaces = space_cuts(part, encoding.name)
    while start < len(part):
        unit, copies, start = units_ahead(encoding, part, start, len(part))
        if not copies:
            tokens, start = _next_part(encoding, part, start, chunk, spaces)
            total += len(tokens)
        total += len(unit) * copies
    return total


def cut_edge(encoding: tiktoken.Encoding, tokens: list[int], budget: int, *, from_end: bool) -> tuple[str, int]:
    """The longest head (tail) of the text ``tokens`` start (end) that counts ``budget`` tokens or fewer, and its count.

    A decode per try instead of a binary search of encodes; an edge that re-encodes to more tokens (a word cut
    mid-merge) is shortened a token at a time.
    """
    keep = budget
    while keep > 0:
        part = tokens[len(tokens) - keep :] if from_end else tokens[:keep]
        # The tokens' bytes are a byte prefix (suffix) of the text's UTF-8: "ignore" drops only the character cut
        # in two at the edge, so the decoded string is an exact prefix (suffix) of the text.
        piece = encoding.decode_bytes(part).decode("utf-8", errors="ignore")
        count = count_tokens(encoding, piece)
        if count <= budget:
            return piece, count
        keep -= 1
    return "", 0


def _next_part(
    encoding: tiktoken.Encoding, text: str, start: int, size: int, spaces: SpaceCuts | None
) -> tuple[list[int], int]:
    """The tokens from the seam ``start`` to the next seam found past about ``start + size``, and that seam.

    A seam is looked for in ``size`` characters past ``start + size``: a cut where a pre-token ends, else one
    proven in a stretch from ``start`` on (from the last cut before the stretch: the proof encodes the text from
    where it starts several times). With none, ``size`` doubles; the rest of a text no longer than it is encoded
    whole.
    """
    tried: set[int] = set()
    while start + size < len(text):
        low = start + size
        high = min(len(text), low + size)
        cut = first_cut(text, start, low, high, spaces)
        if cut is not None:
            return encode_text(encoding, text[start:cut]), cut
        at = find_stretch(text, start, high)
        if at is not None and at not in tried:
            tried.add(at)
            cut = last_cut(text, start + 1, at)
            if cut is not None:
                return encode_text(encoding, text[start:cut]), cut
            entered = lead(encoding, text, start, at)
            if entered is not None:
                return entered
        size *= 2
    return encode_text(encoding, text[start:]), len(text)


def _previous_part(encoding: tiktoken.Encoding, text: str, end: int, size: int, want: int) -> tuple[list[int], int]:
    """:func:`_next_part` mirrored: the tokens from a seam found before about ``end - size`` to the seam ``end``.

    In a stretch the seam is as far back as ``want`` tokens need (:func:`~._stretches.trail`). Cuts inside
    whitespace runs are found forward only (:class:`~._space_runs.SpaceCuts`): before a long run the search goes on
    to a pre-token's end or a stretch, else to the text's start.
    """
    tried: set[int] = set()
    while end - size > 0:
        high = end - size
        low = max(0, high - size)
        cut = last_cut(text, low, high)
        if cut is not None:
            return encode_text(encoding, text[cut:end]), cut
        at = last_stretch(text, low, end)
        if at is not None and at not in tried:
            tried.add(at)
            left = trail(encoding, text, end, at, want)
            if left is not None:
                return left
        size *= 2
    return encode_text(encoding, text[:end]), 0
