"""An argument of the wrong type is a typed error naming the argument, raised at the public entry (issue 26).

Each of these once raised a raw ``TypeError``, ``AttributeError`` or pydantic ``ValidationError`` from deep inside
(``KNOWN_RAW`` in :mod:`tests.reliability.test_fuzz_public_api` listed them); the fuzz test now runs them as normal
cases, and these tests say, one group at a time, which error and which field a caller gets.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from ctxbudget import Archive, ContextItem, Message, PlannerConfig, ToolSchema
from ctxbudget.context import (
    assemble_context_plan,
    assemble_fragments,
    compact_instructions,
    escape_attribute,
    escape_content,
    evidence_item,
    parse_front_matter,
    plan_context,
    render_envelope,
    render_item,
    score_item,
    trust_score,
)
from ctxbudget.errors import InvalidFragmentError, InvalidMessageError, InvalidPolicyError, UsageError
from ctxbudget.messages.tokens import CharCounter, count_request
from ctxbudget.providers import counter_for_model
from langchain_core.messages import HumanMessage
from llama_index.core.tools import FunctionTool

from langchain_ctxbudget import archived_messages, event_name, from_langchain, to_langchain, tool_schemas
from llamaindex_ctxbudget import BudgetedMemory, bound_tools

FRAGMENT = {"id": "f", "source_id": "s", "trust": "user", "value": "text"}
ITEM = ContextItem(id="i", source="s", content="the config lives in /etc/app.toml")


def _raises(error: type[UsageError], field: str, call: Callable[[], object]) -> UsageError:
    """``call()`` raises exactly ``error``, whose ``field`` is ``field`` and whose message starts by naming it."""
    with pytest.raises(error, match=rf"^{re.escape(field)}(?!\w)") as caught:
        call()
    assert type(caught.value) is error
    assert caught.value.field == field
    return caught.value


class _OwnCounter:
    """A user's counter: not one of ours, but a TokenCounter by the protocol."""

    name = "own"
    request_overhead = 0

    def count_text(self, text: str) -> int:
        return len(text.split())

    def count_message(self, message: Message) -> int:
        return self.count_text(message.text) + 1

    def count_tools(self, tools: Any) -> int:
        return 0


COUNTER_TAKERS: dict[str, Callable[[Any], object]] = {
    "plan_context": lambda counter: plan_context([ITEM], PlannerConfig(), counter=counter),
    "assemble_fragments": lambda counter: assemble_fragments([FRAGMENT], counter=counter),
    "assemble_context_plan": lambda counter: assemble_context_plan(
        fragments=[FRAGMENT], original_fragments=[FRAGMENT], mutable_fragment_ids=[], counter=counter
    ),
    "count_request": lambda counter: count_request(counter, [Message(role="user", content="q")]),
    "evidence_item": lambda counter: evidence_item(
        "output", key="k", source="tool", archive=Archive(), counter=counter, max_tokens=50
    ),
}


@pytest.mark.parametrize("take", COUNTER_TAKERS.values(), ids=COUNTER_TAKERS.keys())
def test_a_counter_that_is_not_a_token_counter_is_named(take: Callable[[Any], object]) -> None:
    error = _raises(InvalidPolicyError, "counter", lambda: take({"k": 1}))
    assert "expected a TokenCounter (name, request_overhead, count_text, count_message, count_tools)" in str(error)
    assert "got dict {'k': 1}" in str(error)
    take(_OwnCounter())  # a user's own counter still qualifies by the protocol
    take(CharCounter())


def test_a_registry_that_is_not_a_model_registry_is_named() -> None:
    error = _raises(InvalidPolicyError, "registry", lambda: counter_for_model("gpt-4o", registry=None))  # type: ignore[arg-type]
    assert "expected a ModelRegistry, got NoneType" in str(error)


@pytest.mark.parametrize("ids", [None, 3, [1], ["f", {"k": 1}], "f"], ids=repr)
def test_mutable_fragment_ids_must_be_a_collection_of_ids(ids: Any) -> None:
    _raises(
        InvalidPolicyError,
        "mutable_fragment_ids",
        lambda: assemble_context_plan(fragments=[FRAGMENT], original_fragments=[FRAGMENT], mutable_fragment_ids=ids),
    )


def test_mutable_fragment_ids_may_be_any_collection_of_ids() -> None:
    for ids in (["f"], ("f",), {"f"}, (i for i in ["f"]), {"f": True}):
        built = assemble_context_plan(fragments=[], original_fragments=[FRAGMENT], mutable_fragment_ids=ids)
        assert [usage.included for usage in built.fragment_usage] == [False]


TEXT_TAKERS: dict[str, tuple[str, Callable[[Any], object]]] = {
    "escape_content": ("text", escape_content),
    "escape_attribute": ("value", escape_attribute),
    "render_envelope.source": ("source", lambda v: render_envelope(source=v, type="note", content="body")),
    "render_envelope.type": ("type", lambda v: render_envelope(source="s", type=v, content="body")),
    "render_envelope.content": ("content", lambda v: render_envelope(source="s", type="note", content=v)),
    "compact_instructions": ("markdown", compact_instructions),
    "parse_front_matter": ("text", parse_front_matter),
}


@pytest.mark.parametrize(("field", "take"), TEXT_TAKERS.values(), ids=TEXT_TAKERS.keys())
def test_text_that_is_not_a_str_is_named(field: str, take: Callable[[Any], object]) -> None:
    error = _raises(UsageError, field, lambda: take({"k": 1}))
    assert str(error) == f"{field}: must be a str, got dict {{'k': 1}}"


def test_the_renderers_still_escape_as_before() -> None:
    assert escape_content("<a & b>") == "&lt;a &amp; b&gt;"
    assert escape_attribute('"x"\n') == "&quot;x&quot;&#10;"
    expected = '<context source="s" type="context">\nthe config lives in /etc/app.toml\n</context>'
    assert render_item(ITEM) == render_envelope(source="s", type="context", content=ITEM.content) == expected


@pytest.mark.parametrize("take", [render_item, score_item], ids=["render_item", "score_item"])
def test_an_item_that_is_not_a_context_item_is_named(take: Callable[[Any], object]) -> None:
    error = _raises(InvalidFragmentError, "item", lambda: take({"k": 1}))
    assert "expected a ContextItem, got dict" in str(error)


@pytest.mark.parametrize("trust", [{"k": 1}, "bogus", None], ids=repr)
def test_a_trust_that_is_not_a_trust_level_is_named(trust: Any) -> None:
    error = _raises(InvalidFragmentError, "trust", lambda: trust_score(trust))
    assert "'system', 'developer', 'user'" in str(error)
    assert trust_score("system") == 1.0
    assert trust_score("external") == 0.1


@pytest.mark.parametrize(
    ("field", "error", "changes"),
    [
        ("text", UsageError, {"text": {"k": 1}}),
        ("text", UsageError, {"text": "half a pair \ud800"}),
        ("key", UsageError, {"key": "k\udfff"}),
        ("source", UsageError, {"source": {"k": 1}}),
        ("archive", InvalidPolicyError, {"archive": {"k": 1}}),
    ],
    ids=["text-dict", "text-surrogate", "key-surrogate", "source-dict", "archive-dict"],
)
def test_evidence_item_names_a_bad_argument_before_archiving(
    field: str, error: type[UsageError], changes: dict[str, Any]
) -> None:
    archive = Archive()
    arguments: dict[str, Any] = {"text": "output", "key": "k", "source": "tool", "archive": archive}
    arguments.update(changes)
    _raises(error, field, lambda: evidence_item(**arguments, counter=CharCounter(), max_tokens=50))
    assert len(archive) == 0, "nothing is archived for a refused call"


def test_bound_tools_names_tools_that_are_not_llamaindex_tools() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=8_000)
    _raises(InvalidMessageError, "tools", lambda: bound_tools(None, memory))  # type: ignore[arg-type]
    error = _raises(InvalidMessageError, "tools", lambda: bound_tools([ToolSchema(name="x")], memory))  # type: ignore[list-item]
    assert str(error).startswith("tools[0]: expected a LlamaIndex tool (BaseTool), got ToolSchema")
    echo = FunctionTool.from_defaults(lambda text: text, name="echo")
    assert [tool.metadata.name for tool in bound_tools((echo,), memory)] == ["echo"]


@pytest.mark.parametrize(
    ("error", "field", "call"),
    [
        (InvalidMessageError, "state", lambda: archived_messages("x")),  # type: ignore[arg-type]
        (UsageError, "event", lambda: event_name("x")),  # type: ignore[arg-type]
        (InvalidMessageError, "message", lambda: from_langchain({"k": 1})),  # type: ignore[arg-type]
        (InvalidMessageError, "message", lambda: to_langchain({"k": 1})),  # type: ignore[arg-type]
        (
            InvalidMessageError,
            "template",
            lambda: to_langchain(Message(role="user", content="hi"), {"k": 1}),  # type: ignore[arg-type]
        ),
        (InvalidMessageError, "tools[0]", lambda: tool_schemas(["x"])),
        (InvalidMessageError, "tools", lambda: tool_schemas("x")),
    ],
)
def test_the_langchain_helpers_name_an_argument_of_the_wrong_type(
    error: type[UsageError], field: str, call: Callable[[], object]
) -> None:
    _raises(error, field, call)


def test_the_langchain_converters_still_convert() -> None:
    message = from_langchain(HumanMessage(content="hello", id="m1"))
    assert (message.role, message.text, message.id) == ("user", "hello", "m1")
    assert to_langchain(message).content == "hello"
    assert [schema.name for schema in tool_schemas([{"type": "function", "function": {"name": "f"}}])] == ["f"]
