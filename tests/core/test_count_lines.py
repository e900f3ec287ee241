"""Counting a text from its lines' remembered counts gives exactly the encoding's own count, for any text.

A rolling summary is written again at every compaction with most of its lines unchanged; ``count_lines`` adds up
the lines' counts instead of encoding the whole. That is exact only where the encoding's pre-tokenizer starts afresh
after the newline the text is cut at: these tests hold it to ``encode_ordinary`` on texts built to break it (a next
line starting with ``/``, a space, a tab, another newline, a non-breaking space) and on a real ledger.
"""

from __future__ import annotations

import itertools

import pytest
from ctxbudget.messages import Message
from ctxbudget.messages._tiktoken_counter import line_pieces
from ctxbudget.messages.encodings import get_encoding
from ctxbudget.messages.tokens import (
    CharCounter,
    TiktokenCounter,
    count_message_by_lines,
    count_text_by_lines,
)
from hypothesis import given
from hypothesis import strategies as st

ALPHABET = [*list("ab Z9.-/#*:,'\"\n\r\t "), "é", "中", "\xa0", "\u2028", "\u3000", "'s", "'ll", "\n\n", "1234", "\x85"]
texts = st.lists(st.sampled_from(ALPHABET), min_size=0, max_size=120).map("".join)


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@given(text=texts)
def test_count_lines_is_the_encodings_own_count(encoding: str, text: str) -> None:
    counter = TiktokenCounter(encoding)
    expected = len(get_encoding(encoding).encode_ordinary(text))
    assert counter.count_lines(text) == expected
    assert counter.count_lines(text) == expected  # remembered, still exact
    assert counter.count_text(text) == expected  # the total is what count_text remembers


@given(text=texts)
def test_line_pieces_cut_only_after_a_newline_and_lose_nothing(text: str) -> None:
    pieces = list(line_pieces(text))
    assert "".join(pieces) == text
    for piece, following in itertools.pairwise(pieces):
        assert piece.endswith("\n")
        assert not following[0].isspace()
        assert following[0] != "/"


def test_a_line_starting_with_a_slash_is_not_cut_off() -> None:
    # o200k joins ".\n//" into one pre-token: "x.\n" and "//" counted apart would be a token off.
    encoding = get_encoding("o200k_base")
    assert len(encoding.encode_ordinary("x.\n")) + len(encoding.encode_ordinary("//")) != len(
        encoding.encode_ordinary("x.\n//")
    )
    assert list(line_pieces("x.\n//")) == ["x.\n//"]
    assert TiktokenCounter().count_lines("- see src/a.py.\n/usr/bin/env python is the interpreter " * 3) == len(
        encoding.encode_ordinary("- see src/a.py.\n/usr/bin/env python is the interpreter " * 3)
    )


class _Spy:
    """An encoding that records what it is asked to encode (the counter's own, wrapped)."""

    def __init__(self, encoding: object) -> None:
        self.encoding = encoding
        self.encoded: list[str] = []

    def encode_ordinary(self, text: str) -> list[int]:
        self.encoded.append(text)
        return self.encoding.encode_ordinary(text)  # type: ignore[attr-defined, no-any-return]

    @property
    def _core_bpe(self) -> object:
        return _CoreSpy(self.encoding._core_bpe, self.encoded)  # type: ignore[attr-defined]  # a long text's count

    def __getattr__(self, name: str) -> object:
        return getattr(self.encoding, name)


class _CoreSpy:
    """The encoding's core, recording the texts counted from its token buffer into its spy's list."""

    def __init__(self, core: object, encoded: list[str]) -> None:
        self.core = core
        self.encoded = encoded

    def encode_to_tiktoken_buffer(self, text: str, allowed: frozenset[str]) -> object:
        self.encoded.append(text)
        return self.core.encode_to_tiktoken_buffer(text, allowed)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.core, name)


def test_a_rebuilt_ledger_encodes_only_its_new_lines() -> None:
    counter = TiktokenCounter()
    spy = _Spy(counter._encoding)  # white box: what the counter encodes
    counter._encoding = spy  # type: ignore[assignment]
    bullets = [f"- fact {n}: the staging db lives at db-stg-{n}.internal:5433, and Marta signs off" for n in range(40)]
    first = "## User facts and constraints\n" + "\n".join(bullets)
    second = "## User facts and constraints\n" + "\n".join([*bullets[1:], "- a new line that was not there"])
    encoding = get_encoding("o200k_base")
    assert counter.count_lines(first) == len(encoding.encode_ordinary(first))
    spy.encoded.clear()
    assert counter.count_lines(second) == len(encoding.encode_ordinary(second))
    # the line that is now the last but one gained a newline, and the last is new: no other long line is encoded
    # again (a line of 64 characters or fewer, like the heading, is encoded each time: cheaper than remembering it)
    assert [text for text in spy.encoded if len(text) > 64] == [bullets[-1] + "\n"]


def test_a_summary_message_counted_by_lines_is_its_exact_count() -> None:
    text = "[Summary]\n## Task\n- Now: ship it\n## Errors\n- pytest -> FAILED: 2 failed\n" * 5
    message = Message(role="user", content=text)
    assert count_message_by_lines(TiktokenCounter(), message) == TiktokenCounter().count_message(message)
    assert count_text_by_lines(CharCounter(), text) == CharCounter().count_text(text)  # other counters: as before


def test_count_lines_refuses_what_is_not_text() -> None:
    from ctxbudget.errors import UsageError

    with pytest.raises(UsageError, match="text: must be a str"):
        TiktokenCounter().count_lines(b"bytes")  # type: ignore[arg-type]


MARKERS = [
    "\n[... 1,234 of 9,999 chars omitted; full text: ctx://a/b ...]\n",
    "\n[... x ...]\n",
    "\n",
    "\n\n",
    "",
    "\n/x\n",
]


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@given(head=texts, middle=st.sampled_from(MARKERS), tail=texts, known=st.booleans())
def test_count_joined_is_the_encodings_own_count_of_the_joined_text(
    encoding: str, head: str, middle: str, tail: str, known: bool
) -> None:
    # An excerpt is counted from its edges' counts where the marker's newlines cut it cleanly; anything else whole.
    counter = TiktokenCounter(encoding)
    if known:
        counter.count_text(head), counter.count_text(tail)
    assert counter.count_joined(head, middle, tail) == len(get_encoding(encoding).encode_ordinary(head + middle + tail))


def test_an_excerpt_is_not_encoded_whole_once_its_edges_are_cut() -> None:
    from ctxbudget.context.evidence import excerpt

    counter = TiktokenCounter()
    spy = _Spy(counter._encoding)
    counter._encoding = spy  # type: ignore[assignment]
    text = "\n".join(f"line {n}: processed batch {n} of 4000 in 12 ms" for n in range(1000))
    counter.count_text(text)
    spy.encoded.clear()
    cut = excerpt(text, max_tokens=2000, counter=counter, handle="ctx://archive/1")
    assert counter.count_text(cut) <= 2000
    assert len(get_encoding("o200k_base").encode_ordinary(cut)) == counter.count_text(cut)
    assert len(text) < 100_000  # encoded whole on arrival (a huge one is counted a part at a time)
    assert cut not in spy.encoded  # the joined excerpt is counted from its head, marker and tail
    assert text not in spy.encoded  # nor the text again: its tokens were remembered when it was counted
