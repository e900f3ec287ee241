"""A long text is counted from tiktoken's token buffer, a short one remembered: both exactly ``encode_ordinary``'s.

``TiktokenCounter`` counts a text over 1,024 characters with ``encode_to_tiktoken_buffer`` (what ``encode_to_numpy``
reads: no list of Python ints is built) and remembers the count of a short text (a tool's name, a call id) by the
text itself. These tests hold both to ``encode_ordinary`` on texts that hold special-token strings, lone surrogates
and non-ASCII text, and check that a text counted then excerpted still gets its own tokens.
"""

from __future__ import annotations

import pytest
from ctxbudget.messages import Message, ToolCall
from ctxbudget.messages.encodings import get_encoding
from ctxbudget.messages.tokens import TiktokenCounter
from hypothesis import given, settings
from hypothesis import strategies as st

PIECES = ["ab ", "Z9", ".", "\n", "\t", "é", "中", "<|endoftext|>", "<|im_start|>", "\ud800", "  ", "'s", "12345", "/x"]
"""Pieces of a text; a long text has over 1,024 characters (each piece is one or more), so it is counted by buffer."""
long_texts = st.lists(st.sampled_from(PIECES), min_size=1_100, max_size=1_400).map("".join)
short_texts = st.lists(st.sampled_from(PIECES), min_size=0, max_size=12).map("".join)
VALID = [piece for piece in PIECES if piece != "\ud800"]  # a message refuses a lone surrogate
message_texts = st.lists(st.sampled_from(VALID), min_size=1_100, max_size=1_400).map("".join)


def _ordinary(encoding: str, text: str) -> list[int]:
    return get_encoding(encoding).encode_ordinary(text)


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@settings(max_examples=25, deadline=None)
@given(text=long_texts)
def test_a_long_text_counts_as_encode_ordinary_does(encoding: str, text: str) -> None:
    counter = TiktokenCounter(encoding)
    expected = _ordinary(encoding, text)
    assert counter.count_text(text) == len(expected)
    assert counter.encode(text) == expected  # the remembered buffer, read as the list encode_ordinary gives


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@given(text=short_texts)
def test_a_short_text_counts_as_encode_ordinary_does_every_time(encoding: str, text: str) -> None:
    counter = TiktokenCounter(encoding)
    expected = len(_ordinary(encoding, text))
    assert counter.count_text(text) == expected
    assert counter.count_text(text) == expected  # remembered, still exact


@settings(max_examples=20, deadline=None)
@given(text=message_texts, name=st.sampled_from(VALID))
def test_a_message_with_a_long_text_counts_as_its_parts(text: str, name: str) -> None:
    counter = TiktokenCounter()
    call = ToolCall(id="call_1", name="grep", args={"pattern": name})
    reply = Message(role="assistant", content=text, tool_calls=(call,))
    result = Message(role="tool", content=text, tool_call_id="call_1", name="grep")
    fresh = TiktokenCounter()
    assert counter.count_message(reply) == fresh.count_message(reply.model_copy(update={"id": "other"}))
    parts = len(_ordinary("o200k_base", text))
    assert counter.count_message(result) - TiktokenCounter().count_message(result.with_content("")) == parts


def test_a_counted_output_is_excerpted_from_its_own_tokens() -> None:
    from ctxbudget.context.evidence import excerpt

    text = "\n".join(f"line {n}: <|endoftext|> batch {n} of 4000 in 12 ms" for n in range(800))
    counter = TiktokenCounter()
    assert counter.count_text(text) == len(_ordinary("o200k_base", text))
    cut = excerpt(text, max_tokens=500, counter=counter, handle="ctx://archive/1")
    assert counter.count_text(cut) == len(_ordinary("o200k_base", cut)) <= 500
