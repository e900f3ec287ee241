"""The head and tail of a huge text are its whole encoding's, from parts about as long as they are.

``head_tokens``/``tail_tokens`` (:mod:`ctxbudget.messages._token_edges`) encode a prefix (suffix) that ends (starts)
at a seam: a pre-token's end, or a boundary proven inside a long stretch of one character
(:mod:`ctxbudget.messages._stretches`). A goal of ``"hello " + "x" * 5_000_000`` used to be encoded whole twice for
its excerpt. The reference here encodes everything; the edges must be exactly its first and last tokens, whatever the
text: stretches of letters, symbols, digits and whitespace of any length, unicode, and stretches one after another.
"""

from __future__ import annotations

from typing import Any

import pytest
import tiktoken
from ctxbudget.context.evidence import excerpt
from ctxbudget.messages import _token_edges as edges
from ctxbudget.messages.encodings import get_encoding
from ctxbudget.messages.tokens import TiktokenCounter
from hypothesis import given, settings
from hypothesis import strategies as st

ENCODINGS = ["o200k_base", "cl100k_base"]

_STRETCH_CHARS = [*"xXaQ-=.*/'_~!7", " ", "\t", "\n", "é", "中", "😀"]
_stretches = st.builds(lambda char, size: char * size, st.sampled_from(_STRETCH_CHARS), st.integers(1, 2_500))
_words = st.sampled_from(
    ["hello ", "Hello", "x", "word", "'s", "42", "1234", "é", "中文", "😀", "a.b", "--", " ", "\n", "camelCase", "ABc"]
)
TEXTS = st.lists(st.one_of(_stretches, _words, st.text(max_size=30)), min_size=1, max_size=12).map("".join)
"""Words, random unicode and stretches of one character up to a few thousand long, in any order."""


def _check(encoding: str, text: str, at_least: int, step: int) -> None:
    enc = get_encoding(encoding)
    whole = enc.encode_ordinary(text)
    head = edges.head_tokens(enc, text, at_least, step)
    tail = edges.tail_tokens(enc, text, at_least, step)
    assert head == whole[: len(head)]
    assert tail == whole[len(whole) - len(tail) :]
    assert min(len(head), len(tail)) >= min(at_least, len(whole))
    assert edges.count_huge(enc, text, max(step, 16)) == len(whole)  # parts past 16 characters: counted by seams


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=250, deadline=None)
@given(text=TEXTS, at_least=st.integers(0, 600), step=st.sampled_from([1, 64, 1_024]))
def test_the_edges_are_the_whole_encodings_first_and_last_tokens(
    encoding: str, text: str, at_least: int, step: int
) -> None:
    _check(encoding, text, at_least, step)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("char", ["x", "X", "-", "=", ".", "'", "~", "q"])
def test_a_stretch_of_every_length_near_a_seam_has_the_whole_encodings_edges(encoding: str, char: str) -> None:
    """Stretches from just too short to hold a window to a few units past it, alone and between words."""
    for size in range(380, 1_000, 7):
        for text in (char * size, f"hello {char * size}", f"{char * size} bye", f"ab {char * size}{char.upper()}yz"):
            _check(encoding, text, 40, 1)
            _check(encoding, text, 400, 64)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("step", [1, 16, 64])
def test_a_slash_after_a_newline_is_not_cut_as_a_stretch(encoding: str, step: int) -> None:
    """``o200k_base`` reads these slashes as the tail of the semicolons' pre-token (``[\\r\\n/]*``), which stops at
    the apostrophe; cut inside them, the rest would read as symbols up to the apostrophe (found by a fuzzer)."""
    for text in (
        ";" * 400 + "\r\n" * 3 + "/" * 1_000 + "'s",
        "@" * 1_398 + " " * 405 + ";" * 391 + "\r\n" * 26 + "/" * 420 + "'s",
    ):
        _check(encoding, text, 35, step)


class _CountingEncoding:
    """An encoding that counts the characters it is asked to encode (cost without timing)."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self._encoding = encoding
        self.encoded = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.encoded += len(text)
        return self._encoding.encode_ordinary(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._encoding, name)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(
    "text",
    [
        "hello " + "x" * 5_000_000,
        "hello " + "-" * 2_000_000 + " end",
        "x" * 2_000_000 + "y" * 2_000_000,
        "A" * 1_000_000 + "\n" + "b" * 1_000_000,
        "word " * 1_000_000,
    ],
    ids=["letter-run", "dash-run", "two-runs", "runs-lines", "prose"],
)
def test_the_edges_of_a_huge_text_encode_only_about_as_much_as_they_hold(encoding: str, text: str) -> None:
    counting = _CountingEncoding(get_encoding(encoding))
    enc: Any = counting
    head = edges.head_tokens(enc, text, 3_000)
    tail = edges.tail_tokens(enc, text, 3_000)
    assert min(len(head), len(tail)) >= 3_000
    assert counting.encoded < 400_000, f"{counting.encoded:,} characters encoded for {len(text):,}"
    assert edges.count_huge(enc, text) == len(get_encoding(encoding).encode_ordinary(text))
    if text.startswith("word"):
        return
    counting.encoded = 0
    edges.count_huge(enc, text)
    assert counting.encoded < 400_000, "a stretch is counted as units, never encoded"
    whole = get_encoding(encoding).encode_ordinary(text)
    assert head == whole[: len(head)]
    assert tail == whole[len(whole) - len(tail) :]


@pytest.mark.parametrize(
    "text",
    ["hello " + "x" * 1_200_000, "Intro.\n" + "=" * 700_000 + "\nTHE END", "q" * 600_000 + "Z" * 600_000],
    ids=["letter-run", "symbol-run", "two-runs"],
)
def test_a_huge_goal_of_one_character_gets_the_excerpt_the_whole_encoding_gives(text: str) -> None:
    counter = TiktokenCounter()
    for head_budget, budget in ((3_000, 5_000), (0, 2_000), (2_000, 2_000), (17, 31)):
        whole = counter.fit_edges(counter.encode(text), head_budget, budget)
        assert TiktokenCounter().fit_text_edges(text, head_budget, budget) == whole
    short = excerpt(text, max_tokens=4_000, counter=TiktokenCounter(), handle="ctx://archive/x")
    assert TiktokenCounter().count_text(short) <= 4_000
    assert short.startswith(text[:1_000])
    assert short.endswith(text[-1_000:])
