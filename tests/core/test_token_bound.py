"""A counter's bound: never below the count, whatever the text, so a fit decided on bounds is the fit on counts."""

from __future__ import annotations

import pytest
from ctxbudget import ContentBlock, Message, ToolCall
from ctxbudget.errors import InvalidMessageError
from ctxbudget.messages import BoundedCounter
from ctxbudget.messages.tokens import CharCounter, EstimatingCounter, TiktokenCounter
from hypothesis import given, settings
from hypothesis import strategies as st

COUNTERS = {
    "o200k": TiktokenCounter("o200k_base"),
    "cl100k": TiktokenCounter("cl100k_base"),
    "estimate x1.3": EstimatingCounter(1.3),
    "estimate x0.7": EstimatingCounter(0.7),
}
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|fim_prefix|>"]

# Valid Unicode text (no lone surrogates: a Message refuses them), with special-token strings and long runs mixed in.
_TEXT = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=300),
    st.lists(st.sampled_from([*SPECIALS, "日本語", "🎉", " ", "\n", "aaaa", "x" * 50]), max_size=40).map("".join),
)
_ARGS = st.dictionaries(st.text(min_size=1, max_size=8), st.one_of(st.integers(), _TEXT), max_size=3)


@st.composite
def _message(draw: st.DrawFn) -> Message:
    role = draw(st.sampled_from(["user", "assistant", "tool", "system"]))
    calls: list[ToolCall] = []
    if role == "assistant":
        names = draw(st.lists(st.sampled_from(["search", "read_file", "ß"]), max_size=3))
        calls = [ToolCall(id=f"call_{i}", name=name, args=draw(_ARGS)) for i, name in enumerate(names)]
    return Message(
        role=role,
        content=draw(_TEXT),
        name=draw(st.one_of(st.none(), st.sampled_from(["alice", "bøb"]))) if role == "user" else None,
        tool_calls=tuple(calls),
        tool_call_id=draw(st.sampled_from(["call_0", "ツール"])) if role == "tool" else None,
    )


@pytest.mark.parametrize("name", COUNTERS)
@settings(max_examples=300, deadline=None)
@given(message=_message())
def test_the_bound_is_never_below_the_count(name: str, message: Message) -> None:
    counter = COUNTERS[name]
    bound = counter.bound_message(message)
    assert bound is not None
    assert bound >= counter.count_message(message)


@pytest.mark.parametrize("name", COUNTERS)
def test_the_bound_of_ascii_text_is_its_length_plus_the_framing(name: str) -> None:
    counter = COUNTERS[name]
    short, long = Message(role="user", content="hi"), Message(role="user", content="hi" * 5_000)
    bound_short, bound_long = counter.bound_message(short), counter.bound_message(long)
    assert bound_short is not None
    assert bound_long is not None
    assert bound_long - bound_short == pytest.approx(9_998 * getattr(counter, "factor", 1.0), abs=1)


def test_content_blocks_have_no_bound() -> None:
    message = Message(role="user", content=(ContentBlock(type="image", data={"url": "https://x/y.png"}),))
    assert TiktokenCounter().bound_message(message) is None
    assert EstimatingCounter(1.2).bound_message(message) is None


def test_which_counters_bound() -> None:
    assert isinstance(TiktokenCounter(), BoundedCounter)
    assert isinstance(EstimatingCounter(1.1), BoundedCounter)
    assert not isinstance(CharCounter(), BoundedCounter)  # counting is as cheap as a bound would be


def test_the_bound_of_something_else_than_a_message_is_a_typed_error() -> None:
    with pytest.raises(InvalidMessageError, match=r"message: expected ctxbudget\.Message, got dict"):
        TiktokenCounter().bound_message({"role": "user", "content": "hi"})  # type: ignore[arg-type]
