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
from hypothesis import HealthCheck, given, settings
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
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=12
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


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=VALUES)
def test_any_value_is_a_result_or_a_typed_error(name: str, value: Any) -> None:
    try:
        result = ENTRY_POINTS[name](value)
    except CtxBudgetError:
        return
    if isinstance(result, list) and all(isinstance(m, Message) for m in result):  # what was read writes back
        messages_to_openai(result)
        messages_to_responses(result)
        messages_to_anthropic(result)


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
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_near_valid_message_is_read_or_refused_with_a_typed_error(name: str, data: st.DataObject) -> None:
    reader, documents = READERS[name]
    value = data.draw(mutated(documents))
    try:
        result = reader(value)
    except CtxBudgetError:
        return
    if isinstance(result, list):
        messages_to_openai(result)
        messages_to_responses(result)
        messages_to_anthropic(result)
