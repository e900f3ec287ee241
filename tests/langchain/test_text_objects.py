"""A text block whose ``text`` is not a string is kept whole, counted, and converted back as it was given.

Hostile review 3, finding 11: ``{"type": "text", "text": {"value": ..., "annotations": [...]}}`` (the OpenAI
Assistants-API shape) became ``ContentBlock(text=None, data={})``: its text was lost and counted as nothing, so
``ContextBudgetRunnable`` passed about 20,000 tokens through a 2,000-token budget. ``value`` is now the block's text
(counted, summarized and searched like any text), the rest of the object is kept, and any other non-string ``text``
is kept in the block's data, where the counter counts it by its JSON.
"""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget import ContextSession
from ctxbudget.errors import InvalidMessageError
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from langchain_ctxbudget import ContextBudgetRunnable, LangChainContextOverflowError, fit_messages
from langchain_ctxbudget.convert import from_langchain, to_langchain

BIG = "word " * 20_000
ANNOTATIONS = [{"type": "file_citation", "text": "【4:0†source】", "start_index": 3, "end_index": 15}]


def _assistants_block(value: str) -> dict[str, Any]:
    return {"type": "text", "text": {"value": value, "annotations": ANNOTATIONS}}


def _head() -> list[BaseMessage]:
    return [SystemMessage("sys"), HumanMessage("hi"), AIMessage("ok")]


BLOCKS = [
    pytest.param(_assistants_block("The answer is 42."), id="assistants-text-object"),
    pytest.param({"type": "text", "text": {"value": "v"}, "cache_control": {"type": "ephemeral"}}, id="value-only"),
    pytest.param({"type": "text", "text": {"segments": ["a", "b"]}}, id="object-without-value"),
    pytest.param({"type": "text", "text": None}, id="null-text"),
    pytest.param({"type": "text", "text": 7}, id="number-text"),
    pytest.param({"type": "text", "text": "plain", "id": "b1"}, id="plain-text"),
    pytest.param({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}, id="image"),
]


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("kind", [HumanMessage, AIMessage])
def test_a_block_converted_to_ctxbudget_and_back_is_the_block_given(block: dict[str, Any], kind: type) -> None:
    message = kind(content=[block, {"type": "text", "text": "and a text part"}], id="m-1", name="someone")
    back = to_langchain(from_langchain(message))
    assert back == message


def test_the_value_of_a_text_object_is_the_blocks_text() -> None:
    message = from_langchain(HumanMessage(content=[_assistants_block("The answer is 42.")]))
    assert message.text == "The answer is 42."
    assert not isinstance(message.content, str)
    (block,) = message.content
    assert block.data == {"text": {"annotations": ANNOTATIONS}}  # nothing else of the object is lost


def test_a_text_object_over_the_budget_is_refused_as_the_same_text_as_a_string() -> None:
    plain: dict[str, Any] = {"type": "text", "text": BIG}
    for block in (plain, _assistants_block(BIG)):
        content: list[str | dict[str, Any]] = [block]
        with pytest.raises(LangChainContextOverflowError):
            ContextBudgetRunnable(max_tokens=2_000).invoke([*_head(), HumanMessage(content=content)])
        with pytest.raises(LangChainContextOverflowError):
            fit_messages([*_head(), HumanMessage(content=content)], max_tokens=2_000)


def test_a_text_without_a_string_value_is_counted_by_its_json() -> None:
    content: list[str | dict[str, Any]] = [{"type": "text", "text": {"segments": BIG.split()}}]
    with pytest.raises(LangChainContextOverflowError):
        ContextBudgetRunnable(max_tokens=2_000).invoke([*_head(), HumanMessage(content=content)])


def test_a_text_object_within_the_budget_is_sent_as_given() -> None:
    message = HumanMessage(content=[_assistants_block("short question")], id="q-1")
    out = ContextBudgetRunnable(max_tokens=2_000).invoke([*_head(), message])
    assert out[-1] == message


def test_a_session_bound_runnable_holds_the_text_and_sends_the_object_back() -> None:
    session = ContextSession(max_tokens=8_000)
    message = HumanMessage(content=[_assistants_block("where is the 7th invoice?")], id="q-1")
    out = ContextBudgetRunnable(session=session).invoke([*_head(), message])
    assert "where is the 7th invoice?" in [m.text for m in session.history]
    assert out[-1] == message


def test_a_text_json_cannot_hold_raises_the_typed_error_naming_the_field() -> None:
    with pytest.raises(InvalidMessageError, match=r"data\.text"):
        from_langchain(HumanMessage(content=[{"type": "text", "text": {"value": 1, "when": object()}}]))
