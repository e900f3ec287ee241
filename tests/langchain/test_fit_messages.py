"""``fit_messages``: the stateless fit takes LangChain messages (or ctxbudget's) and ``max_tokens=`` (issue 16)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from ctxbudget import Message, ToolSchema
from ctxbudget.errors import InvalidMessageError, InvalidPolicyError
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.messages.toolpairs import find_tool_pair_problems
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langchain_ctxbudget import LangChainContextOverflowError, fit_messages, from_langchain

from .conftest import big_text, search


def _history(turns: int) -> list[BaseMessage]:
    history: list[BaseMessage] = [SystemMessage("You answer from the tool results.", id="s")]
    for t in range(turns):
        history.append(HumanMessage(f"question {t}", id=f"h{t}"))
        history.append(
            AIMessage("", tool_calls=[{"id": f"c{t}", "name": "search", "args": {"query": "q"}}], id=f"a{t}")
        )
        history.append(ToolMessage(big_text(f"t{t}", lines=300), tool_call_id=f"c{t}", id=f"r{t}"))
        history.append(AIMessage(f"answer {t}", id=f"f{t}"))
    return history


def _tokens(messages: list[Message], counter: TiktokenCounter) -> int:
    return sum(counter.count_message(m) for m in messages) + counter.request_overhead


def test_langchain_messages_in_langchain_messages_out_within_max_tokens() -> None:
    history = _history(20)
    before = [m.model_copy(deep=True) for m in history]

    out = fit_messages(history, max_tokens=3_000)

    assert all(isinstance(m, BaseMessage) for m in out)
    converted = [from_langchain(m.model_copy()) for m in out]
    assert find_tool_pair_problems(converted) == []
    assert _tokens(converted, TiktokenCounter()) <= 3_000
    assert out[0] is history[0]  # the system message is kept, as the very object given
    assert out[-1] is history[-1]  # unchanged messages come back as given
    assert history == before  # nothing given is modified


def test_core_messages_in_core_messages_out() -> None:
    core = [from_langchain(m) for m in _history(20)]
    out = fit_messages(core, max_tokens=3_000)
    assert all(isinstance(m, Message) for m in out)
    assert find_tool_pair_problems(out) == []
    assert _tokens(out, TiktokenCounter()) <= 3_000


def test_tools_count_toward_max_tokens_in_either_form() -> None:
    history = _history(20)
    schema = ToolSchema(name="search", description="Search the corpus. " * 100, parameters={"type": "object"})
    plain = fit_messages(history, max_tokens=3_000)
    with_schema = fit_messages(history, max_tokens=3_000, tools=[schema])
    with_tool = fit_messages(history, max_tokens=3_000, tools=[search])
    assert len(with_schema) < len(plain)
    assert len(with_tool) <= len(plain)


def test_max_tokens_is_the_budget_keyword_and_budget_is_gone() -> None:
    assert "max_tokens" in inspect.signature(fit_messages).parameters
    assert "budget" not in inspect.signature(fit_messages).parameters
    with pytest.raises(TypeError, match="budget"):
        fit_messages([HumanMessage("hi")], budget=100)  # type: ignore[call-overload]


def test_overflow_names_the_numbers() -> None:
    with pytest.raises(LangChainContextOverflowError, match="do not fit the budget of 200"):
        fit_messages([SystemMessage("rules " * 300), HumanMessage("hi")], max_tokens=200)


@pytest.mark.parametrize(
    ("messages", "kwargs", "error", "match"),
    [
        (
            [HumanMessage("a"), Message(role="user", content="b")],
            {},
            InvalidMessageError,
            r"messages\[1\]: a ctxbudget",
        ),
        ([HumanMessage("a"), {"role": "user"}], {}, InvalidMessageError, r"messages\[1\]: expected a LangChain"),
        (HumanMessage("a"), {}, InvalidMessageError, "messages: expected a sequence"),
        ([HumanMessage("a")], {"max_tokens": 0}, InvalidPolicyError, "max_tokens: expected an int > 0"),
        ([HumanMessage("a")], {"counter": "o200k"}, InvalidPolicyError, "counter: expected a TokenCounter"),
        ([HumanMessage("a")], {"tools": "search"}, InvalidPolicyError, "tools: expected a sequence of tools"),
    ],
    ids=["mixed", "not-a-message", "one-message", "max-tokens-zero", "counter", "tools"],
)
def test_mistakes_are_typed_errors_naming_the_argument(
    messages: Any, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        fit_messages(messages, **{"max_tokens": 1_000, **kwargs})
