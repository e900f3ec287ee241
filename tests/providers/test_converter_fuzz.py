"""Any value given to a converter: a result or a typed ctxbudget error, never a raw exception.

Provider messages come from the network and from user code; a converter must refuse what it cannot read with an
:class:`~ctxbudget.errors.InvalidMessageError` (or :class:`~ctxbudget.errors.InvalidPolicyError` for usage) naming
the place, whatever the value: wrong types, non-string keys, bytes, NaN, lone surrogates, deep nesting.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ctxbudget import ContextSession, Message
from ctxbudget.errors import CtxBudgetError
from ctxbudget.messages.tokens import CharCounter
from ctxbudget.providers import (
    messages_from_anthropic,
    messages_from_openai,
    messages_from_responses,
    messages_to_anthropic,
    messages_to_openai,
    messages_to_responses,
    to_anthropic_request,
    tool_from_anthropic,
    tool_from_openai,
    tool_from_responses,
    usage_figures,
)
from hypothesis import given, settings
from hypothesis import strategies as st


class Opaque:
    """Not JSON, not a model, not iterable."""


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=8),
    st.sampled_from(["\ud800", "<|endoftext|>", "", "user", "assistant", "tool_use", "tool_result", "function"]),
    st.binary(max_size=4),
    st.builds(Opaque),
)
KEYS = st.one_of(
    st.sampled_from(["role", "content", "type", "text", "tool_calls", "tool_call_id", "id", "name", "function",
                     "arguments", "input", "tool_use_id", "call_id", "output", "is_error", "source", "usage"]),
    st.text(max_size=4),
    st.integers(0, 3),
)  # fmt: skip
LIMITS: list[Any] = [
    "[" * 50_000 + "]" * 50_000,  # arguments nested past any parser's recursion (issue 26 finding 7)
    '{"a": ' + "[" * 150 + "]" * 150 + "}",  # past the 100 levels a message holds
    '{"n": ' + "9" * 5_000 + "}",  # an int past 4,300 digits
    '{"a": NaN}',  # not JSON: kept as spelled
    '{"a": "\\ud800"}',  # a lone surrogate, escaped
    float("nan"),
    float("-inf"),
]
"""Values at the limits of what JSON and a snapshot hold; huge ints themselves are tried by ``test_huge_ints``."""
JSON_LIMITS = st.sampled_from(LIMITS)
VALUES = st.recursive(
    SCALARS | JSON_LIMITS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)
ENTRY_POINTS: dict[str, Callable[[Any], object]] = {
    "messages_from_openai([v])": lambda v: messages_from_openai([v]),
    "messages_from_openai(v)": messages_from_openai,
    "messages_from_responses([v])": lambda v: messages_from_responses([v]),
    "messages_from_anthropic([v])": lambda v: messages_from_anthropic([v]),
    "messages_from_anthropic(system=v)": lambda v: messages_from_anthropic([], system=v),
    "tool_from_openai(v)": tool_from_openai,
    "tool_from_anthropic(v)": tool_from_anthropic,
    "tool_from_responses(v)": tool_from_responses,
    "usage_figures(v)": usage_figures,
    "to_anthropic_request(cache_control=v)": lambda v: to_anthropic_request(
        [Message(role="user", content="q")], cache_control=v
    ),
    "session.add_openai(v)": lambda v: ContextSession(max_tokens=1_000).add_openai(v),
    "session.add_anthropic(v)": lambda v: ContextSession(max_tokens=1_000).add_anthropic(v),
    "session.record_usage(v)": lambda v: ContextSession(max_tokens=1_000).record_usage(v),
}


def _holds_up(result: object) -> None:
    """What a converter read writes back in every format, and survives a snapshot and a restore."""
    if isinstance(result, list) and all(isinstance(m, Message) for m in result):
        messages_to_openai(result)
        messages_to_responses(result)
        messages_to_anthropic(result)
        session = ContextSession(max_tokens=1_000_000, counter=CharCounter())
        session.sync([m for m in result if m.role != "system"])
        restored = ContextSession.restore(session.snapshot().to_json(), counter=CharCounter())
        assert restored.history == session.history


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
@settings(max_examples=60, deadline=None)
@given(value=VALUES)
def test_any_value_is_a_result_or_a_typed_error(name: str, value: Any) -> None:
    try:
        result = ENTRY_POINTS[name](value)
    except CtxBudgetError:
        return
    _holds_up(result)


HUGE = 10**5_000


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
@pytest.mark.parametrize(
    "wrap", [lambda v: v, lambda v: [v], lambda v: {"arguments": v, "input": {"n": v}, "content": v, "id": v}]
)
def test_huge_ints_are_a_result_or_a_typed_error(name: str, wrap: Callable[[Any], Any]) -> None:
    """An int past 4,300 digits (its ``repr()`` raises): typed errors only, wherever it is."""
    try:
        result = ENTRY_POINTS[name](wrap(HUGE))
    except CtxBudgetError:
        return
    _holds_up(result)


# -- near-valid messages: a fixture message with one value anywhere inside it replaced ----------------------------
FIXTURES = Path(__file__).parent / "fixtures"
CHAT = json.loads((FIXTURES / "openai_chat_transcript.json").read_text(encoding="utf-8"))
ANTHROPIC = json.loads((FIXTURES / "anthropic_transcript.json").read_text(encoding="utf-8"))
RESPONSES = json.loads((FIXTURES / "responses_transcript.json").read_text(encoding="utf-8"))


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            found.extend(_paths(child, (*path, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(_paths(child, (*path, index)))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


@st.composite
def mutated(draw: st.DrawFn, documents: list[Any]) -> Any:
    document = draw(st.sampled_from(documents))
    path = draw(st.sampled_from(_paths(document)))
    return _replaced(document, path, draw(VALUES))


READERS: dict[str, tuple[Callable[[Any], object], list[Any]]] = {
    "chat": (lambda m: messages_from_openai([m]), CHAT["messages"]),
    "chat tools": (tool_from_openai, CHAT["tools"]),
    "anthropic": (lambda m: messages_from_anthropic([m]), ANTHROPIC["messages"]),
    "anthropic tools": (tool_from_anthropic, ANTHROPIC["tools"]),
    "responses": (lambda m: messages_from_responses([m]), RESPONSES["input"]),
    "responses tools": (tool_from_responses, RESPONSES["tools"]),
}


@pytest.mark.parametrize("name", sorted(READERS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_near_valid_message_is_read_or_refused_with_a_typed_error(name: str, data: st.DataObject) -> None:
    reader, documents = READERS[name]
    value = data.draw(mutated(documents))
    try:
        result = reader(value)
    except CtxBudgetError:
        return
    _holds_up(result)


LIMIT_VALUES = [*LIMITS, HUGE, {"n": HUGE}, [HUGE]]


@pytest.mark.parametrize("name", sorted(READERS))
@pytest.mark.parametrize("limit", range(len(LIMIT_VALUES)))
def test_every_place_of_a_fixture_message_takes_a_limit_value_typed(name: str, limit: int) -> None:
    """Deterministic: each value at the JSON limits, at every place of every fixture message (issue 26 finding 7)."""
    reader, documents = READERS[name]
    for document in documents:
        for path in _paths(document)[1:]:
            try:
                result = reader(_replaced(document, path, LIMIT_VALUES[limit]))
            except CtxBudgetError:
                continue
            _holds_up(result)
