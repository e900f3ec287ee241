"""A caller's mistake in a public constructor raises a ctxbudget UsageError naming the argument, never a raw error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from ctxbudget.errors import InvalidPolicyError, UsageError
from ctxbudget.session import ContextSession
from langchain_core.chat_history import InMemoryChatMessageHistory

from langchain_ctxbudget import (
    BudgetDocumentCompressor,
    BudgetedChatMessageHistory,
    ContextBudgetMiddleware,
    ContextBudgetRunnable,
)

pytestmark = pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")


def _history(**kwargs: Any) -> BudgetedChatMessageHistory:
    inner = kwargs.pop("inner", InMemoryChatMessageHistory())
    return BudgetedChatMessageHistory(inner, **{"max_tokens": 1_000, **kwargs})


CASES: list[tuple[str, Callable[[], object], str]] = [
    ("middleware max_threads=0", lambda: ContextBudgetMiddleware(max_threads=0), "max_threads"),
    ("middleware max_threads='8'", lambda: ContextBudgetMiddleware(max_threads="8"), "max_threads"),  # type: ignore[arg-type]
    ("middleware max_threads=True", lambda: ContextBudgetMiddleware(max_threads=True), "max_threads"),
    ("middleware counter='o200k'", lambda: ContextBudgetMiddleware(counter="o200k"), "counter"),  # type: ignore[arg-type]
    ("middleware policy=dict", lambda: ContextBudgetMiddleware(policy={"threshold": 0.5}), "policy"),  # type: ignore[arg-type]
    ("middleware summarizer='gpt'", lambda: ContextBudgetMiddleware(summarizer="gpt"), "summarizer"),  # type: ignore[arg-type]
    (
        "middleware compact_instructions=3",
        lambda: ContextBudgetMiddleware(compact_instructions=3),  # type: ignore[arg-type]
        "compact_instructions",
    ),
    ("middleware read_back_tool='no'", lambda: ContextBudgetMiddleware(read_back_tool="no"), "read_back_tool"),  # type: ignore[arg-type]
    (
        "middleware forward_events unknown",
        lambda: ContextBudgetMiddleware(forward_events=frozenset({"nope"})),  # type: ignore[arg-type]
        "forward_events",
    ),
    ("middleware forward_events='x'", lambda: ContextBudgetMiddleware(forward_events="x"), "forward_events"),  # type: ignore[arg-type]
    ("runnable max_tokens='4000'", lambda: ContextBudgetRunnable(max_tokens="4000"), "max_tokens"),  # type: ignore[arg-type]
    ("runnable max_tokens=-5", lambda: ContextBudgetRunnable(max_tokens=-5), "max_tokens"),
    ("runnable max_tokens=1.5", lambda: ContextBudgetRunnable(max_tokens=1.5), "max_tokens"),  # type: ignore[arg-type]
    ("runnable counter=3", lambda: ContextBudgetRunnable(max_tokens=100, counter=3), "counter"),  # type: ignore[arg-type]
    ("runnable policy=3", lambda: ContextBudgetRunnable(max_tokens=100, policy=3), "policy"),  # type: ignore[arg-type]
    ("runnable tools=[3]", lambda: ContextBudgetRunnable(max_tokens=100, tools=[3]), "tools[0]"),
    ("runnable tools='abc'", lambda: ContextBudgetRunnable(max_tokens=100, tools="abc"), "tools"),
    ("runnable session='s'", lambda: ContextBudgetRunnable(session="s"), "session"),  # type: ignore[arg-type]
    ("history inner=None", lambda: _history(inner=None), "inner"),
    ("history inner=[]", lambda: _history(inner=[]), "inner"),
    ("history archive=3", lambda: _history(archive=3), "archive"),
    ("history summarizer='gpt'", lambda: _history(summarizer="gpt"), "summarizer"),
    ("history counter=3", lambda: _history(counter=3), "counter"),
    ("history max_tokens=0", lambda: _history(max_tokens=0), "max_tokens"),
    ("compressor max_tokens='x'", lambda: BudgetDocumentCompressor(max_tokens="x"), "max_tokens"),
    ("compressor max_tokens=-1", lambda: BudgetDocumentCompressor(max_tokens=-1), "max_tokens"),
    ("compressor max_items=-3", lambda: BudgetDocumentCompressor(max_items=-3), "max_items"),
    (
        "compressor max_tokens_per_source='q'",
        lambda: BudgetDocumentCompressor(max_tokens_per_source="q"),
        "max_tokens_per_source",
    ),
    ("compressor counter=3", lambda: BudgetDocumentCompressor(counter=3), "counter"),
    ("compressor source_key=3", lambda: BudgetDocumentCompressor(source_key=3), "source_key"),
    ("compressor dedupe_content='maybe'", lambda: BudgetDocumentCompressor(dedupe_content="maybe"), "dedupe_content"),
    ("compressor misspelt max_token", lambda: BudgetDocumentCompressor(max_token=100), "max_token"),
]


@pytest.mark.parametrize(("label", "build", "field"), CASES, ids=[c[0] for c in CASES])
def test_constructor_mistakes_raise_a_typed_error_naming_the_field(
    label: str, build: Callable[[], object], field: str
) -> None:
    with pytest.raises(UsageError) as info:
        build()
    assert isinstance(info.value, InvalidPolicyError) or info.value.field == "max_tokens"
    assert info.value.field == field
    assert field in str(info.value)


def test_valid_arguments_still_construct() -> None:
    ContextBudgetMiddleware(max_threads=4, compact_instructions="keep ids", forward_events=frozenset())
    ContextBudgetRunnable(max_tokens=100, tools=[{"type": "function", "function": {"name": "x", "parameters": {}}}])
    ContextBudgetRunnable(session=ContextSession(max_tokens=1_000))
    _history(archive=InMemoryChatMessageHistory())
    BudgetDocumentCompressor(max_items=0, max_tokens=None)
