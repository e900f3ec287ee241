"""``TiktokenCounter.count_fields``: a message counted from its fields counts what the message itself counts.

A framework adapter counts each message as it arrives without building a :class:`Message` (the LangChain middleware
keeps it waiting until the session needs it); the count must be ``count_message``'s, for any text, name, tool calls
and encoding, and a wrong field is a typed error, never a raw one.
"""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget.errors import InvalidMessageError, UsageError
from ctxbudget.messages import Message, ToolCall
from ctxbudget.messages.tokens import TiktokenCounter
from hypothesis import given, settings
from hypothesis import strategies as st

characters = st.characters(blacklist_categories=("Cs",))
texts = st.text(characters, max_size=400) | st.sampled_from(["", "<|endoftext|>", "x" * 5_000, "line\n" * 3_000])
names = st.none() | st.text(characters, min_size=1, max_size=16)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | texts
arguments = st.dictionaries(st.text(characters, max_size=10), scalars | st.lists(scalars, max_size=3), max_size=5)
calls = st.lists(
    st.tuples(st.text(characters, min_size=1, max_size=40), st.text(characters, min_size=1, max_size=20), arguments),
    max_size=3,
    unique_by=lambda call: call[0],
)


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@settings(max_examples=200, deadline=None)
@given(role=st.sampled_from(["system", "user", "assistant", "tool"]), content=texts, name=names, data=st.data())
def test_a_message_counted_from_its_fields_counts_what_the_message_counts(
    encoding: str, role: str, content: str, name: str | None, data: st.DataObject
) -> None:
    tool_calls = data.draw(calls) if role == "assistant" else []
    call_id = data.draw(st.text(characters, min_size=1, max_size=40)) if role == "tool" else None
    message = Message(
        role=role,  # type: ignore[arg-type]
        content=content,
        name=name,
        tool_calls=tuple(ToolCall(id=i, name=n, args=a) for i, n, a in tool_calls),
        tool_call_id=call_id,
    )
    fields = TiktokenCounter(encoding).count_fields(
        role,  # type: ignore[arg-type]
        content,
        name=name,
        tool_calls=tool_calls,
        tool_call_id=call_id,
    )
    assert fields == TiktokenCounter(encoding).count_message(message)


@pytest.mark.parametrize(
    ("fields", "error", "field"),
    [
        ({"role": "robot", "content": "x"}, UsageError, "role"),
        ({"role": "user", "content": b"x"}, UsageError, "content"),
        ({"role": "user", "content": "x", "name": 7}, UsageError, "name"),
        ({"role": "tool", "content": "x", "tool_call_id": ["c"]}, UsageError, "tool_call_id"),
        ({"role": "assistant", "content": "", "tool_calls": "c1"}, InvalidMessageError, "tool_calls"),
        ({"role": "assistant", "content": "", "tool_calls": [("c1", "f")]}, InvalidMessageError, "tool_calls[0]"),
        ({"role": "assistant", "content": "", "tool_calls": [("", "f", {})]}, InvalidMessageError, "tool_calls[0]"),
        ({"role": "assistant", "content": "", "tool_calls": [("c", "f", [1])]}, InvalidMessageError, "tool_calls[0]"),
        (
            {"role": "assistant", "content": "", "tool_calls": [("c", "f", {"x": float("nan")})]},
            InvalidMessageError,
            "tool_calls[0]",
        ),
        (
            {"role": "assistant", "content": "", "tool_calls": [("c\ud800", "f", {})]},
            InvalidMessageError,
            "tool_calls[0]",
        ),
        (
            {"role": "assistant", "content": "", "tool_calls": [("c", "f", {"x": object()})]},
            InvalidMessageError,
            "tool_calls[0]",
        ),
    ],
)
def test_a_wrong_field_is_a_typed_error_naming_it(fields: dict[str, Any], error: type[Exception], field: str) -> None:
    with pytest.raises(error) as raised:
        TiktokenCounter().count_fields(**fields)
    assert getattr(raised.value, "field", None) == field


def test_counting_from_fields_remembers_no_message() -> None:
    counter = TiktokenCounter()
    counter.count_fields("tool", "result " * 2_000, tool_call_id="c1")
    assert counter.cache_stats == (0, 0)  # the message cache was neither read nor written: no digest was taken
