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
    "encode_text",
    "head_tokens",
    "tail_tokens",
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
    spaces = SpaceCuts(text, ENDS_WHOLE[encoding]) if encoding in ENDS_WHOLE else None
    position = 0
    while len(text) - position > chunk:
        window = position + chunk
        cut = None
        while cut is None and window < len(text):
            stop = min(window + _SEARCH, len(text))
            cut = _cut_after(text, window, stop)
            if spaces is not None:
                before = spaces.first(position, window, stop if cut is None else cut)
                cut = cut if before is None else before
            window = stop
        if cut is None:
            return
        yield cut
        position = cut


def _parts(encoding: tiktoken.Encoding, text: str, chunk: int) -> Iterator[str]:
    start = 0
    for cut in cut_points(text, chunk, encoding.name):
        yield text[start:cut]
        start = cut
    yield text[start:]


def _encode(encoding: tiktoken.Encoding, part: str) -> list[int]:
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
        return _encode(encoding, text)
    tokens: list[int] = []
    for part in _parts(encoding, text, chunk):
        tokens += _encode(encoding, part)
    return tokens


def count_tokens(encoding: tiktoken.Encoding, text: str, chunk: int = CHUNK_CHARS) -> int:
    """``len(encoding.encode_ordinary(text))``, holding one part's tokens at a time."""
    return sum(len(_encode(encoding, part)) for part in _parts(encoding, text, chunk))


def head_tokens(encoding: tiktoken.Encoding, text: str, at_least: int, chunk: int = CHUNK_CHARS) -> list[int]:
    """The first tokens of ``text``: at least ``at_least`` of them (all, when it has fewer), from a prefix."""
    tokens: list[int] = []
    for part in _parts(encoding, text, chunk):
        tokens += _encode(encoding, part)
        if len(tokens) >= at_least:
            break
    return tokens


def tail_tokens(encoding: tiktoken.Encoding, text: str, at_least: int, chunk: int = CHUNK_CHARS) -> list[int]:
    """The last tokens of ``text``: at least ``at_least`` of them (all, when it has fewer), from a suffix.

    The suffix starts at a cut point, so its tokens are exactly the last tokens of the whole text's.
    """
    end = len(text)
    tokens: list[int] = []
    for start in reversed([0, *cut_points(text, chunk, encoding.name)]):
        tokens[:0] = _encode(encoding, text[start:end])
        end = start
        if len(tokens) >= at_least:
            break
    return tokens


def text_digest(text: str, chunk: int = CHUNK_CHARS) -> bytes:
    """A 16-byte digest of ``text``'s UTF-8 (lone surrogates kept), hashed a part at a time (no whole copy)."""
    digest = hashlib.blake2b(digest_size=16)
    for start in range(0, len(text), chunk):
        digest.update(text[start : start + chunk].encode("utf-8", "surrogatepass"))
    return digest.digest()
