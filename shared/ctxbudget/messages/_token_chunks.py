r"""Count and cut a huge text in pieces, with the same tokens as encoding it whole, in memory bounded by one piece.

Encoding a text whole gives a Python list of one int object per token: about 9 bytes of list per character of
text, so counting a 50 MB tool output used to take 450 MB on top of it. A tiktoken encoding splits text with its
regex into *pre-tokens* and runs BPE inside each one; nothing merges across them. So a text cut where a pre-token
ends encodes to exactly the concatenation of its parts' encodings, and it is counted part by part.

Where a pre-token always ends: right after a letter followed by an ASCII character that is not a letter or an
apostrophe (a space, a newline, a digit, ``"``, ``,``, ``}``...), and right after a numeral followed by an ASCII
character that is not a digit. In both bundled patterns (``o200k_base``, ``cl100k_base``; pinned in the tests) a
pre-token that holds a letter continues only with letters, combining marks or an apostrophe contraction, and one
that holds a numeral only with numerals (``\p{N}{1,3}``). No alternative looks behind, and the only look-ahead
(``\s+(?!\S)``) and end anchor (``\s++$``) follow whitespace, which never ends a part cut there. The character after
the cut is ASCII so that Unicode-version differences between Python's tables and tiktoken's cannot move the boundary.

Given the encoding, a text is also cut inside long whitespace runs (:mod:`._space_runs`): tiktoken's regex panics on
999,999 characters of whitespace before a non-space, so without those cuts such a text could not be counted at all.
Text with no place to cut (a megabyte of one symbol, or of CJK letters without ASCII punctuation) is encoded whole,
as before: tiktoken encodes those (its regex only fails on whitespace). Should tiktoken still fail (with a
``pyo3_runtime.PanicException``, not an ``Exception``), the failure is an :class:`~ctxbudget.errors.EncodingDataError`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator

import tiktoken

from ..errors import EncodingDataError
from ._space_runs import ENDS_WHOLE, SpaceCuts

__all__ = [
    "CHUNK_CHARS",
    "count_tokens",
    "cut_points",
    "encode_piece",
    "encode_text",
    "first_cut",
    "last_cut",
    "parts",
    "space_cuts",
    "text_digest",
]

CHUNK_CHARS = 256 * 1024
"""About how many characters each part holds (a part's token list is a few MB at most)."""

_SEARCH = 64 * 1024
"""How far past a part's nominal end a cut point is looked for before the next window is tried."""

# A letter (or a numeral that is not a decimal digit) followed by an ASCII character that is not a letter or "'", or
# a decimal digit followed by an ASCII character that is not a digit; each checked again by category in _is_cut.
_CANDIDATE = re.compile(r"[^\W\d_](?=[\x00-\x26\x28-\x40\x5b-\x60\x7b-\x7f])|\d(?=[\x00-\x2f\x3a-\x7f])")
_DIGITS = frozenset("0123456789")


def _is_cut(text: str, after: int) -> bool:
    """Whether a pre-token ends right after ``text[after]`` (where ``_CANDIDATE`` matched).

    After a letter, the pre-token ends at anything but a letter, a mark or ``'`` (the candidate is followed by an
    ASCII non-letter other than ``'``); after a numeral, at anything but a numeral.
    """
    kind = unicodedata.category(text[after])[0]
    return kind == "L" or (kind == "N" and text[after + 1] not in _DIGITS)


def _cut_after(text: str, start: int, stop: int) -> int | None:
    """The first cut point (an index where a pre-token starts) in ``text[start:stop]``, else ``None``."""
    for found in _CANDIDATE.finditer(text, start, min(stop, len(text) - 1)):
        if _is_cut(text, found.start()):
            return found.end()
    return None


def cut_points(text: str, chunk: int = CHUNK_CHARS, encoding: str | None = None) -> Iterator[int]:
    """Indices, in order, where ``text`` may be cut into parts of about ``chunk`` characters (never 0 or the end).

    With ``encoding`` (a name in :data:`~._space_runs.ENDS_WHOLE`), also inside long whitespace runs (for that
    encoding only: ``cl100k_base`` keeps a run that ends the text whole); a part then never holds whitespace that
    tiktoken's regex fails on.
    """
    spaces = space_cuts(text, encoding)
    position = 0
    while len(text) - position > chunk:
        cut = first_cut(text, position, position + chunk, len(text), spaces)
        if cut is None:
            return
        yield cut
        position = cut


def space_cuts(text: str, encoding: str | None) -> SpaceCuts | None:
    """The whitespace-run cuts of ``text`` for ``encoding`` (``None`` for an encoding they are not known for)."""
    return SpaceCuts(text, ENDS_WHOLE[encoding]) if encoding in ENDS_WHOLE else None


def first_cut(text: str, base: int, low: int, high: int, spaces: SpaceCuts | None) -> int | None:
    """The first cut point from ``low`` on, looked for before ``high``, for a part that starts at ``base``.

    ``spaces`` (:func:`space_cuts`) adds the cuts inside long whitespace runs; it is asked in increasing order.
    The search costs the characters scanned: about ``high - low``, in windows of :data:`_SEARCH`.
    """
    window, high = low, min(high, len(text))
    while window < high:
        stop = min(window + _SEARCH, high)
        cut = _cut_after(text, window, stop)
        if spaces is not None:
            before = spaces.first(base, window, stop if cut is None else cut)
            cut = cut if before is None else before
        if cut is not None:
            return cut
        window = stop
    return None


def last_cut(text: str, low: int, high: int) -> int | None:
    """The last place in ``text[low:high]`` where a pre-token always ends, else ``None`` (whitespace runs: none).

    Whether a pre-token ends there depends on the two characters around it alone (:func:`_is_cut`), so the
    place is found scanning back from any point: it also cuts a text that starts or ends at another such place.
    """
    last = None
    for found in _CANDIDATE.finditer(text, max(0, low - 1), min(high, len(text)) - 1):
        if _is_cut(text, found.start()):
            last = found.end()
    return last


def parts(encoding: tiktoken.Encoding, text: str, chunk: int = CHUNK_CHARS) -> Iterator[str]:
    """``text`` cut at :func:`cut_points` (whitespace runs included, for ``encoding``): parts encoded apart."""
    start = 0
    for cut in cut_points(text, chunk, encoding.name):
        yield text[start:cut]
        start = cut
    yield text[start:]


def encode_piece(encoding: tiktoken.Encoding, part: str) -> list[int]:
    """``encoding.encode_ordinary(part)``; a panic of tiktoken's (a ``BaseException``) is an ``EncodingDataError``."""
    try:
        return encoding.encode_ordinary(part)
    except (Exception, KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # pyo3_runtime.PanicException, which no ``except Exception`` would see
        raise EncodingDataError(
            f"encoding {encoding.name!r}: tiktoken failed on a text of {len(part):,} characters: "
            f"{type(exc).__name__}: {str(exc)[:200]}"
        ) from exc


def encode_text(encoding: tiktoken.Encoding, text: str, chunk: int = CHUNK_CHARS) -> list[int]:
    """``encoding.encode_ordinary(text)``: the same tokens, a huge text's encoded a part at a time."""
    if len(text) <= chunk:
        return encode_piece(encoding, text)
    tokens: list[int] = []
    for part in parts(encoding, text, chunk):
        tokens += encode_piece(encoding, part)
    return tokens


def count_tokens(encoding: tiktoken.Encoding, text: str, chunk: int = CHUNK_CHARS) -> int:
    """``len(encoding.encode_ordinary(text))``, holding one part's tokens at a time."""
    return sum(len(encode_piece(encoding, part)) for part in parts(encoding, text, chunk))


def text_digest(text: str, chunk: int = CHUNK_CHARS) -> bytes:
    """A 16-byte digest of ``text``'s UTF-8 (lone surrogates kept), hashed a part at a time (no whole copy)."""
    digest = hashlib.blake2b(digest_size=16)
    for start in range(0, len(text), chunk):
        digest.update(text[start : start + chunk].encode("utf-8", "surrogatepass"))
    return digest.digest()
