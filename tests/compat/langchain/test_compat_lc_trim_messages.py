"""Ports of LangChain's ``trim_messages`` tests, run on ``trim_messages`` and on ``ContextBudgetRunnable``.

Upstream: ``libs/core/tests/unit_tests/messages/test_utils.py`` (langchain-core 1.8.3). Ported: every case with
``strategy="last"`` (the runnable keeps the newest messages, the leading system messages and starts on a human
turn, so it stands in for ``trim_messages(strategy="last", include_system=True, start_on="human")``). Not ported:
the ``strategy="first"`` cases and the ``token_counter`` argument cases (a shortcut string, a bound model, a dict),
which are options of ``trim_messages`` itself; the runnable takes a ctxbudget counter instead, given here as the
same figures (``BlockCounter`` is ``dummy_token_counter``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages

from langchain_ctxbudget import ContextBudgetRunnable, LangChainContextOverflowError

from .conftest import BlockCounter, CharCounter, WordCounter, impls

_MESSAGES_TO_TRIM = [
    SystemMessage("This is a 4 token text."),
    HumanMessage("This is a 4 token text.", id="first"),
    AIMessage(
        [
            {"type": "text", "text": "This is the FIRST 4 token block."},
            {"type": "text", "text": "This is the SECOND 4 token block."},
        ],
        id="second",
    ),
    HumanMessage("This is a 4 token text.", id="third"),
    AIMessage("This is a 4 token text.", id="fourth"),
]
_MESSAGES_TO_TRIM_COPY = [m.model_copy(deep=True) for m in _MESSAGES_TO_TRIM]

PARTIAL = "budget semantics: a message is kept whole or dropped, never cut to fill the budget (allow_partial)"
PAST_STOP = "raising past the hard stop: the latest human message alone is over max_tokens, so the runnable raises"


def dummy_token_counter(messages: list[BaseMessage]) -> int:
    count = 0
    for msg in messages:
        if isinstance(msg.content, str):
            count += 3 + 4 + 3
        if isinstance(msg.content, list):
            count += 3 + len(msg.content) * 4 + 3
    return count


def count_words(msgs: list[BaseMessage]) -> int:
    count = 0
    for msg in msgs:
        if isinstance(msg.content, str):
            count += len(msg.content.split(" "))
        else:
            count += len(" ".join(block["text"] for block in msg.content).split(" "))  # type: ignore[index]
    return count


OURS = {dummy_token_counter: BlockCounter(), count_words: WordCounter()}


def _trim(impl: str) -> Callable[..., list[BaseMessage]]:
    """``trim_messages`` itself, or the runnable given the same budget and the same counts (other options are ours)."""

    def ours(messages: Sequence[BaseMessage], *, max_tokens: int, token_counter: Any, **_: Any) -> list[BaseMessage]:
        counter = OURS.get(token_counter) or (CharCounter() if callable(token_counter) else None)
        return ContextBudgetRunnable(max_tokens=max_tokens, counter=counter).invoke(list(messages))

    return trim_messages if impl == "langchain" else ours  # type: ignore[return-value]


@pytest.mark.parametrize("impl", impls())
def test_trim_messages_last_30_include_system(impl: str) -> None:
    expected = [
        SystemMessage("This is a 4 token text."),
        HumanMessage("This is a 4 token text.", id="third"),
        AIMessage("This is a 4 token text.", id="fourth"),
    ]
    actual = _trim(impl)(
        _MESSAGES_TO_TRIM, max_tokens=30, include_system=True, token_counter=dummy_token_counter, strategy="last"
    )
    assert actual == expected
    assert _MESSAGES_TO_TRIM == _MESSAGES_TO_TRIM_COPY


@pytest.mark.parametrize("impl", impls(PARTIAL))
def test_trim_messages_last_40_include_system_allow_partial(impl: str) -> None:
    expected = [
        SystemMessage("This is a 4 token text."),
        AIMessage([{"type": "text", "text": "This is the SECOND 4 token block."}], id="second"),
        HumanMessage("This is a 4 token text.", id="third"),
        AIMessage("This is a 4 token text.", id="fourth"),
    ]
    actual = _trim(impl)(
        _MESSAGES_TO_TRIM,
        max_tokens=40,
        token_counter=dummy_token_counter,
        strategy="last",
        allow_partial=True,
        include_system=True,
    )
    assert actual == expected
    assert _MESSAGES_TO_TRIM == _MESSAGES_TO_TRIM_COPY


@pytest.mark.parametrize("impl", impls(PARTIAL))
def test_trim_messages_last_30_include_system_allow_partial_end_on_human(impl: str) -> None:
    expected = [
        SystemMessage("This is a 4 token text."),
        AIMessage([{"type": "text", "text": "This is the SECOND 4 token block."}], id="second"),
        HumanMessage("This is a 4 token text.", id="third"),
    ]
    actual = _trim(impl)(
        _MESSAGES_TO_TRIM,
        max_tokens=30,
        token_counter=dummy_token_counter,
        strategy="last",
        allow_partial=True,
        include_system=True,
        end_on="human",
    )
    assert actual == expected
    assert _MESSAGES_TO_TRIM == _MESSAGES_TO_TRIM_COPY


@pytest.mark.parametrize("impl", impls())
def test_trim_messages_last_40_include_system_allow_partial_start_on_human(impl: str) -> None:
    expected = [
        SystemMessage("This is a 4 token text."),
        HumanMessage("This is a 4 token text.", id="third"),
        AIMessage("This is a 4 token text.", id="fourth"),
    ]
    actual = _trim(impl)(
        _MESSAGES_TO_TRIM,
        max_tokens=30,
        token_counter=dummy_token_counter,
        strategy="last",
        allow_partial=True,
        include_system=True,
        start_on="human",
    )
    assert actual == expected
    assert _MESSAGES_TO_TRIM == _MESSAGES_TO_TRIM_COPY


@pytest.mark.parametrize("impl", impls(PAST_STOP, LangChainContextOverflowError))
def test_trim_messages_last_allow_partial_one_message(impl: str) -> None:
    expected = [HumanMessage("t.", id="third")]
    actual = _trim(impl)(
        [HumanMessage("This is a funky text.", id="third")],
        max_tokens=2,
        token_counter=lambda messages: sum(len(m.content) for m in messages),
        text_splitter=list,
        strategy="last",
        allow_partial=True,
    )
    assert actual == expected
    assert _MESSAGES_TO_TRIM == _MESSAGES_TO_TRIM_COPY


@pytest.mark.parametrize("impl", impls(PAST_STOP, LangChainContextOverflowError))
def test_trim_messages_allow_partial_text_splitter(impl: str) -> None:
    expected = [
        HumanMessage("a 4 token text.", id="third"),
        AIMessage("This is a 4 token text.", id="fourth"),
    ]

    def _split_on_space(text: str) -> list[str]:
        splits = text.split(" ")
        return [s + " " for s in splits[:-1]] + splits[-1:]

    actual = _trim(impl)(
        _MESSAGES_TO_TRIM,
        max_tokens=10,
        token_counter=count_words,
        strategy="last",
        allow_partial=True,
        text_splitter=_split_on_space,
    )
    assert actual == expected
    assert _MESSAGES_TO_TRIM == _MESSAGES_TO_TRIM_COPY


@pytest.mark.parametrize("impl", impls())
def test_trim_messages_include_system_strategy_last_empty_messages(impl: str) -> None:
    expected: list[BaseMessage] = []
    if impl == "langchain":
        trimmer: Any = trim_messages(
            max_tokens=10, token_counter=dummy_token_counter, strategy="last", include_system=True
        )
    else:
        trimmer = ContextBudgetRunnable(max_tokens=10, counter=BlockCounter())
    actual = trimmer.invoke([])
    assert actual == expected


@pytest.mark.parametrize("impl", impls())
def test_trim_messages_start_on_with_allow_partial(impl: str) -> None:
    messages = [
        HumanMessage(content="First human message"),
        AIMessage(content="AI response"),
        HumanMessage(content="Second human message"),
    ]
    messages_copy = [m.model_copy(deep=True) for m in messages]
    result = _trim(impl)(
        messages,
        max_tokens=20,
        token_counter=dummy_token_counter,
        strategy="last",
        allow_partial=True,
        start_on="human",
    )
    assert len(result) == 1
    assert result[0].content == "Second human message"
    assert messages == messages_copy


@pytest.mark.parametrize("impl", impls())
def test_trim_messages_token_counter_shortcut_with_options(impl: str) -> None:
    messages = [
        SystemMessage("System instructions"),
        HumanMessage("First human message", id="first"),
        AIMessage("First AI response", id="ai1"),
        HumanMessage("Second human message", id="second"),
        AIMessage("Second AI response", id="ai2"),
    ]
    messages_copy = [m.model_copy(deep=True) for m in messages]
    if impl == "langchain":
        result = trim_messages(
            messages,
            max_tokens=100,
            token_counter="approximate",
            strategy="last",
            include_system=True,
            start_on="human",
        )
    else:  # the runnable's own exact counter stands in for the approximate one
        result = ContextBudgetRunnable(max_tokens=100).invoke(messages)
    assert len(result) >= 2
    assert isinstance(result[0], SystemMessage)
    assert any(isinstance(msg, HumanMessage) for msg in result[1:])
    assert messages == messages_copy


@pytest.mark.parametrize("impl", impls())
def test_trim_messages_invoke(impl: str) -> None:
    """Upstream compares the runnable form with the function form; ours: the runnable with ``fit_messages``."""
    if impl == "langchain":
        actual = trim_messages(max_tokens=10, token_counter=dummy_token_counter).invoke(_MESSAGES_TO_TRIM)
        expected = trim_messages(_MESSAGES_TO_TRIM, max_tokens=10, token_counter=dummy_token_counter)
    else:
        from langchain_ctxbudget import fit_messages

        actual = ContextBudgetRunnable(max_tokens=30, counter=BlockCounter()).invoke(_MESSAGES_TO_TRIM)
        expected = fit_messages(_MESSAGES_TO_TRIM, max_tokens=30, counter=BlockCounter())
    assert actual == expected


def test_approximate_counter_is_langchains() -> None:
    """Guard for the port above: the shortcut string names ``count_tokens_approximately``."""
    messages = [HumanMessage("Another test message", id="first")]
    assert trim_messages(messages, max_tokens=50, token_counter="approximate") == trim_messages(
        messages, max_tokens=50, token_counter=count_tokens_approximately
    )
