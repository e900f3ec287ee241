"""Shared pieces of the LangChain compatibility suite: each ported case runs on the framework class and on ours.

Every case is a port of one of LangChain's own test cases (named in its docstring, with the upstream file), with the
same inputs and the same assertions, parametrized over ``impl``: ``"langchain"`` (the framework class) and
``"ctxbudget"`` (ours in its place). A case may be a deliberate difference only for budget semantics or for raising
past the hard stop, marked on the ``ctxbudget`` parameter alone with ``xfail(strict=True, reason=...)``: strict, so a
difference that goes away fails the suite until the mark is removed.

Ported from langchain-core 1.8.3 / langchain 1.5.2 (the installed versions); the upstream files were read from the
langchain-ai/langchain repository (libs/core/tests/unit_tests/..., libs/langchain_v1/tests/unit_tests/...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from ctxbudget.messages import Message, ToolSchema

IMPLS = ("langchain", "ctxbudget")


def impls(
    ours_differs: str | None = None,
    raises: type[BaseException] | tuple[type[BaseException], ...] = AssertionError,
) -> list[Any]:
    """The two implementations; ``ours_differs`` marks ours as a deliberate difference (strict xfail, that reason),
    failing only with ``raises`` (an assertion by default; the hard stop's error for raising past it)."""
    if ours_differs is None:
        return list(IMPLS)
    mark = pytest.mark.xfail(strict=True, reason=ours_differs, raises=raises)
    return ["langchain", pytest.param("ctxbudget", marks=mark)]


class BlockCounter:
    """``dummy_token_counter`` of LangChain's tests as a ctxbudget counter: a message is 3 + 4 per content block
    (4 for a string) + 3 tokens; nothing else costs anything."""

    name = "dummy"
    request_overhead = 0

    def count_text(self, text: str) -> int:
        return 4

    def count_message(self, message: Message) -> int:
        blocks = 1 if isinstance(message.content, str) else len(message.content)
        return 3 + 4 * blocks + 3

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        return 0


class CharCounter:
    """A message is as many tokens as characters of text (the ``len(m.content)`` counters of LangChain's tests)."""

    name = "chars"
    request_overhead = 0

    def count_text(self, text: str) -> int:
        return len(text)

    def count_message(self, message: Message) -> int:
        return len(message.text)

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        return 0


class WordCounter:
    """A message is as many tokens as space-separated words (``count_words`` of LangChain's tests)."""

    name = "words"
    request_overhead = 0

    def count_text(self, text: str) -> int:
        return len(text.split(" "))

    def count_message(self, message: Message) -> int:
        return len(message.text.replace("\n", " ").split(" "))

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        return 0
