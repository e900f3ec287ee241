"""A long run of whitespace is counted exactly, cut where its tokens do not change, and never crashes tiktoken.

tiktoken's regex matches whitespace before a non-space (``\\s+(?!\\S)``) by backtracking, and from 999,999 characters
its engine fails: tiktoken panics with ``pyo3_runtime.PanicException``, a ``BaseException`` that passes every
``except Exception``. A text of ``"x" + " " * 1_000_000 + "y"`` crashed ``ContextSession.add`` and ``ctxbudget
inspect``. Counting now cuts such runs (:mod:`ctxbudget.messages._space_runs`) where the whole text's tokens do not
change, so a count equals ``encode_ordinary``'s wherever tiktoken can encode the text, and is the sum of the parts'
tokens past that; a failure tiktoken still raises is an :class:`~ctxbudget.errors.EncodingDataError`.
"""

from __future__ import annotations

import pytest
from ctxbudget import ContextSession, CtxBudgetError, Message, ToolCall
from ctxbudget.errors import EncodingDataError
from ctxbudget.messages import _token_chunks as chunks
from ctxbudget.messages import _token_edges as edges
from ctxbudget.messages._space_runs import MARGIN, PERIOD, REGEX_LIMIT, SPACES
from ctxbudget.messages.encodings import get_encoding
from ctxbudget.messages.message import ContentBlock
from ctxbudget.messages.tokens import TiktokenCounter
from hypothesis import given, settings
from hypothesis import strategies as st

ENCODINGS = ["o200k_base", "cl100k_base"]
STRETCH_CHARS = sorted(SPACES - {"\r", "\n"})
"""Every ``White_Space`` character a stretch may be cut in (all 23)."""

_RUN_CHARS = [" ", "\t", "\xa0", "\u3000", "\n", "\r\n", "\x0b", "\u2003", "\u205f", "=", "-", "."]
_runs = st.one_of(
    st.builds(lambda char, size: char * size, st.sampled_from(_RUN_CHARS), st.integers(1, 3_000)),
    st.lists(st.sampled_from(_RUN_CHARS), min_size=1, max_size=40).map("".join),
)
_words = st.sampled_from(["x", "Hello", "word", "'s", "42", "1234", "é", "中文", "😀", "/", "}", "a.b", "--"])
TEXTS = st.lists(st.one_of(_runs, _words), min_size=1, max_size=12).map("".join)
"""Words between runs of mixed whitespace and punctuation: up to a few thousand characters, with long stretches."""


def _check_exact(encoding: str, text: str, chunk: int, at_least: int = 50) -> None:
    """Counting, encoding and the head and tail of ``text`` in parts of about ``chunk`` give the whole's tokens."""
    enc = get_encoding(encoding)
    whole = enc.encode_ordinary(text)
    assert chunks.count_tokens(enc, text, chunk) == len(whole)
    assert chunks.encode_text(enc, text, chunk) == whole
    head = edges.head_tokens(enc, text, at_least, chunk)
    tail = edges.tail_tokens(enc, text, at_least, chunk)
    assert head == whole[: len(head)]
    assert tail == whole[len(whole) - len(tail) :]
    assert min(len(head), len(tail)) >= min(at_least, len(whole))


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=150)
@given(text=TEXTS, chunk=st.sampled_from([1, 40, 300, 1_000]), at_least=st.integers(0, 80))
def test_runs_between_words_count_as_the_whole_encodes(encoding: str, text: str, chunk: int, at_least: int) -> None:
    _check_exact(encoding, text, chunk, at_least)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("char", STRETCH_CHARS, ids=[f"U+{ord(c):04X}" for c in STRETCH_CHARS])
def test_a_stretch_of_each_whitespace_character_is_cut_exactly(encoding: str, char: str) -> None:
    """Every length from the shortest run that holds a cut, before a word, a newline, other whitespace or the end."""
    ends = ["y", "\nz", "\u3000\t y", "", "1"]
    for index, size in enumerate(range(PERIOD + MARGIN, PERIOD + MARGIN + 3 * PERIOD, 3)):
        text = "x" + char * size + ends[index % len(ends)]
        cuts = list(chunks.cut_points(text, 1, encoding))
        assert any(text[cut - 1] == char == text[cut] for cut in cuts)  # cut inside the stretch
        _check_exact(encoding, text, 1)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(
    "text",
    [
        "x" + " " * 300_000 + "y",
        "word\n" + "\t" * 300_000 + "end",
        "a." + "\xa0" * 150_000 + " " * 150_000 + "\u3000b",
        "lines\n" * 30_000 + "\n" + " " * 300_000,
    ],
    ids=["spaces", "tabs-after-newline", "nbsp-then-spaces", "trailing-after-newline"],
)
def test_300k_of_whitespace_counts_as_tiktoken_does(encoding: str, text: str) -> None:
    enc = get_encoding(encoding)
    whole = enc.encode_ordinary(text)
    assert chunks.count_tokens(enc, text) == len(whole)
    assert chunks.count_tokens(enc, text, 50_000) == len(whole)
    assert TiktokenCounter(encoding).count_text(text) == len(whole)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_longest_run_tiktoken_encodes_is_counted_exactly(encoding: str) -> None:
    text = "x" + " " * (REGEX_LIMIT - 1) + "y"
    counter = TiktokenCounter(encoding)
    assert counter.count_text(text) == len(get_encoding(encoding).encode_ordinary(text))


def _constructed(encoding: str, char: str, size: int) -> int:
    """Tokens of ``"x" + char * size + "y"`` as the cuts count them: left-aligned blocks of PERIOD, then the rest.

    ``\\s+(?!\\S)`` leaves the run's last character to ``y``; the others are one pre-token, BPE-merged in blocks
    that no multiple of PERIOD straddles but within 19 characters of its end: the last block goes with the rest.
    """
    enc = get_encoding(encoding)
    blocks = (size - 1) // PERIOD - 1
    rest = size - 1 - blocks * PERIOD
    edges = len(enc.encode_ordinary("x")) + len(enc.encode_ordinary(char + "y"))
    return edges + blocks * len(enc.encode_ordinary(char * PERIOD)) + len(enc.encode_ordinary(char * rest))


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("char", [" ", "\t", "\xa0", "\u3000"], ids=["space", "tab", "nbsp", "ideographic"])
def test_1_2m_of_whitespace_counts_by_construction_without_a_panic(encoding: str, char: str) -> None:
    enc = get_encoding(encoding)
    counter = TiktokenCounter(encoding)
    counts = [counter.count_text("x" + char * size + "y") for size in (300_000, 600_000, 1_200_000)]
    assert counts[0] < counts[1] < counts[2]
    assert counts[0] == len(enc.encode_ordinary("x" + char * 300_000 + "y"))
    assert counts[2] == _constructed(encoding, char, 1_200_000)
    single_piece = getattr(enc, "_encode_single_piece", None)  # tiktoken's BPE of one pre-token, with no regex
    if single_piece is not None:  # what tiktoken would count had its regex not failed: the same
        run = len(single_piece((char * (1_200_000 - 1)).encode()))
        assert counts[2] == len(enc.encode_ordinary("x")) + run + len(enc.encode_ordinary(char + "y"))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_million_letters_or_symbols_count_whole_as_before(encoding: str) -> None:
    """Such runs hold no cut either, but tiktoken's regex matches them without backtracking: it encodes them."""
    text = "a" * 1_000_000 + "=" * 1_000_000
    assert TiktokenCounter(encoding).count_text(text) == len(get_encoding(encoding).encode_ordinary(text))


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(
    "text",
    [
        "x\n" + " " * 1_200_000,
        "x\n" + "\t" * 1_200_000 + "y",
        "x" + " \t" * 600_000 + "y",
        "=" * 200_000 + "\xa0" * 1_100_000 + "-" * 200_000,
        "\u3000 " * 300_000 + "\n" * 1_000 + "\u3000" * 600_000 + "\u2003" * 600_000,
    ],
    ids=["trailing-after-newline", "tabs-after-newline", "mixed", "between-symbol-runs", "mixed-after-newlines"],
)
def test_runs_tiktoken_cannot_encode_count_as_the_sum_of_their_parts(encoding: str, text: str) -> None:
    """Past the limit there is no whole encoding to match: the count is the parts' tokens, and nothing panics."""
    enc = get_encoding(encoding)
    parts, start = [], 0
    for cut in chunks.cut_points(text, chunks.CHUNK_CHARS, encoding):
        parts.append(text[start:cut])
        start = cut
    parts.append(text[start:])
    assert "".join(parts) == text
    expected = sum(len(enc.encode_ordinary(part)) for part in parts)
    assert TiktokenCounter(encoding).count_text(text) == expected
    assert len(chunks.encode_text(enc, text)) == expected


def test_a_run_ending_the_text_after_a_newline_is_cut_under_o200k_only() -> None:
    """``cl100k_base``'s ``\\s++$`` makes the newline and the run after it one pre-token (which never panics): no
    cut there is known to keep its tokens, so it is encoded whole, and exactly; ``o200k_base`` must cut it."""
    text = "x\n" + " " * 1_200_000
    assert 2 not in chunks.cut_points(text, 1, "cl100k_base")
    assert next(iter(chunks.cut_points(text, 1, "o200k_base"))) == 2
    expected = len(get_encoding("cl100k_base").encode_ordinary(text))
    assert TiktokenCounter("cl100k_base").count_text(text) == expected


def test_tiktoken_still_fails_from_the_limit_and_that_failure_is_typed() -> None:
    """Pins :data:`REGEX_LIMIT` to this tiktoken: should it change, the fallback cut in mixed runs needs re-checking."""
    enc = get_encoding("o200k_base")
    assert len(enc.encode_ordinary("x" + " " * (REGEX_LIMIT - 1) + "y")) > 0
    with pytest.raises(EncodingDataError, match="1,000,001 characters"):
        chunks.encode_piece(enc, "x" + " " * REGEX_LIMIT + "y")  # whole, as no caller does now


class _Failing:
    name = "o200k_base"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def encode_ordinary(self, text: str) -> list[int]:
        raise self.error


class _Panic(BaseException):
    """Stands for ``pyo3_runtime.PanicException``: a ``BaseException``, not an ``Exception``."""


@pytest.mark.parametrize("error", [KeyboardInterrupt(), SystemExit(3), GeneratorExit(), ValueError("x")])
def test_interrupts_and_ordinary_errors_pass_through_the_encode(error: BaseException) -> None:
    with pytest.raises(type(error)):
        chunks.count_tokens(_Failing(error), "some text")  # type: ignore[arg-type]


def test_another_base_exception_from_tiktoken_is_an_encoding_error() -> None:
    with pytest.raises(EncodingDataError, match="9 characters") as caught:
        chunks.count_tokens(_Failing(_Panic("boom")), "some text")  # type: ignore[arg-type]
    assert isinstance(caught.value.__cause__, _Panic)


def test_a_session_with_1_2m_spaces_in_a_user_message_builds_its_request() -> None:
    session = ContextSession(model="gpt-4o")
    try:
        session.add(Message(role="user", content="here is my form: " + " " * 1_200_000 + "thanks"))
        request = session.build_request()
    except CtxBudgetError:
        return  # the library's own typed errors are allowed; anything else (a panic) fails the test
    assert request


def test_a_session_with_1_2m_spaces_in_a_tool_output_builds_its_request() -> None:
    session = ContextSession(model="gpt-4o")
    try:
        session.add(Message(role="user", content="read the padded file"))
        call = ToolCall(id="c1", name="read_file", args={"path": "pad.txt"})
        session.add(Message(role="assistant", content="", tool_calls=[call]))
        session.add(Message(role="tool", tool_call_id="c1", name="read_file", content="h " + " " * 1_200_000 + "f"))
        request = session.build_request()
    except CtxBudgetError:
        return
    assert request


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_encode_and_block_content_of_1_2m_spaces_are_counted(encoding: str) -> None:
    counter = TiktokenCounter(encoding)
    text = "x" + " " * 1_200_000 + "y"
    assert len(counter.encode(text)) == counter.count_text(text)
    blocks = Message(role="user", content=(ContentBlock(type="text", text=text),))
    assert counter.count_message(blocks) > counter.count_text(text)
