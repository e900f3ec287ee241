"""The stateless runnable counts only what the fit needs: while the counter's bounds show the request fits, nothing
is tokenized; once they do not, bounded messages are counted newest first until they do (or all are), each once.
The output is always ``fit_messages``'s."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest
from ctxbudget import Message
from ctxbudget.messages.tokens import TiktokenCounter
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langchain_ctxbudget import ContextBudgetRunnable, LangChainContextOverflowError, fit_messages


class RecordingCounter(TiktokenCounter):
    """Exact o200k counts; records which messages were counted (by id) and which bounded.

    ``forms`` counts each (id, text) counted: a tool output cut to head + tail is counted whole, then cut.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counted: Counter[str] = Counter()
        self.forms: Counter[tuple[str, str]] = Counter()
        self.bounded: Counter[str] = Counter()

    def count_message(self, message: Message) -> int:
        self.counted[message.id or ""] += 1
        self.forms[message.id or "", message.text] += 1
        return super().count_message(message)

    def bound_message(self, message: Message) -> int | None:
        self.bounded[message.id or ""] += 1
        return super().bound_message(message)


def _turn(t: int, *, output_words: int = 60) -> list[BaseMessage]:
    calls = [{"id": f"c{t}_{i}", "name": "grep", "args": {"pattern": f"TODO {t}", "path": f"src/m{i}"}} for i in (0, 1)]
    return [
        HumanMessage(content=f"step {t}: look for the TODOs in module {t}", id=f"h{t}"),
        AIMessage(content="", tool_calls=calls, id=f"a{t}"),
        *(
            ToolMessage(
                content=" ".join(f"src/m{i}/f{w}.py:{w}: TODO {t}" for w in range(output_words)),
                tool_call_id=f"c{t}_{i}",
                id=f"r{t}_{i}",
            )
            for i in (0, 1)
        ),
        AIMessage(content=f"module {t}: {output_words} TODOs", id=f"f{t}"),
    ]


def _history(turns: int) -> list[BaseMessage]:
    return [SystemMessage(content="You are a coding agent.", id="sys")] + [m for t in range(turns) for m in _turn(t)]


def _total(messages: list[BaseMessage], counter: TiktokenCounter) -> int:
    """Exact tokens of the request ``fit_messages`` sends for ``messages`` in a window that keeps them all."""
    from langchain_ctxbudget.convert import from_langchain

    return sum(counter.count_message(from_langchain(m.model_copy())) for m in messages) + counter.request_overhead


def _outcome(call: Callable[[], list[BaseMessage]]) -> list[BaseMessage] | str:
    try:
        return call()
    except LangChainContextOverflowError as exc:
        return str(exc)


def test_a_request_the_bounds_show_fits_is_not_tokenized() -> None:
    counter = RecordingCounter()
    runnable = ContextBudgetRunnable(max_tokens=1_000_000, counter=counter)
    history = _history(40)
    assert runnable.invoke(history) == fit_messages(history, max_tokens=1_000_000)
    assert set(counter.counted) == {"sys"}  # the system messages are always counted; the rest was bounded
    history += _turn(40)
    assert runnable.invoke(history) == history
    assert set(counter.counted) == {"sys"}
    assert counter.bounded["h40"] == 1


def test_once_the_bounds_are_not_enough_the_newest_are_counted_until_they_are_each_once() -> None:
    history = _history(40)
    exact = _total(history, TiktokenCounter())
    counter = RecordingCounter()
    runnable = ContextBudgetRunnable(max_tokens=exact + 200, counter=counter)  # fits, though not by the bounds
    assert runnable.invoke(history[:50]) == history[:50]  # by the bounds
    assert set(counter.counted) == {"sys"}
    assert runnable.invoke(history) == fit_messages(history, max_tokens=exact + 200) == history
    counted = [m.id for m in history[1:] if m.id in counter.counted]
    assert 0 < len(counted) < len(history) - 1  # some, not all: enough for the sizes to show it fits
    assert counted == [m.id for m in history[len(history) - len(counted) :]]  # the newest
    history += _turn(40)  # now over: a cut is chosen, on counts of everything
    out = runnable.invoke(history)
    assert out == fit_messages(history, max_tokens=exact + 200)
    assert len(out) < len(history)
    assert set(counter.counted) == {m.id for m in history}
    assert max(counter.counted.values()) == 1


def test_a_tool_output_whose_bound_is_over_the_limit_is_counted_and_cut_at_once() -> None:
    counter = RecordingCounter()
    runnable = ContextBudgetRunnable(max_tokens=1_000_000, counter=counter)
    history = _history(2) + _turn(2, output_words=2_000)  # ~40k characters each: over the 8,000-token output limit
    out = runnable.invoke(history)
    assert out == fit_messages(history, max_tokens=1_000_000)
    assert counter.counted["r2_0"] == counter.counted["r2_1"] == 2  # the output, then its cut form
    assert len(out[-2].text) < len(history[-2].text)  # cut to head + tail
    assert "h2" not in counter.counted


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(st.integers(1, 7), min_size=1, max_size=8),
    sizes=st.lists(st.sampled_from([5, 40, 200, 500]), min_size=30, max_size=30),  # under the output limit
    slack=st.floats(0.5, 2.5),
)
def test_growing_across_the_point_where_bounds_stop_sufficing_equals_the_uncached_fit(
    steps: list[int], sizes: list[int], slack: float
) -> None:
    """Budgets from half the final exact total to beyond its bound: calls fit on bounds, then settle, then trim."""
    pool = [
        SystemMessage(content="rules", id="sys"),
        *(m for t, n in enumerate(sizes) for m in _turn(t, output_words=n)),
    ]
    budget = max(2_000, int(_total(pool[: 1 + 5 * sum(steps)], TiktokenCounter()) * slack))
    counter = RecordingCounter()
    runnable = ContextBudgetRunnable(max_tokens=budget, counter=counter)
    length = 1
    for step in steps:
        length = min(len(pool), length + 5 * step)
        history = pool[:length]
        expected = _outcome(lambda: fit_messages(history, max_tokens=budget))  # noqa: B023  # called at once
        assert _outcome(lambda: runnable.invoke(history)) == expected  # noqa: B023
    assert max(counter.forms.values()) == 1  # a list that only grows: nothing is ever counted twice


class FlakyCounter(RecordingCounter):
    """Raises on the ``fail_on``-th count, once."""

    def __init__(self, fail_on: int) -> None:
        super().__init__()
        self.fail_on = fail_on

    def count_message(self, message: Message) -> int:
        if sum(self.counted.values()) + 1 == self.fail_on:
            self.fail_on = -1
            raise RuntimeError("counter unavailable")
        return super().count_message(message)


def test_a_counter_that_raises_while_counting_bounded_messages_leaves_the_cache_exact() -> None:
    history = _history(40)
    budget = _total(history, TiktokenCounter()) + 200  # fits, though not by the bounds: the call counts
    for fail_on in (2, 5, 20):
        runnable = ContextBudgetRunnable(max_tokens=budget, counter=FlakyCounter(fail_on))
        runnable.invoke(history[:50])  # bounded; the system message is the first count
        with pytest.raises(RuntimeError, match="counter unavailable"):
            runnable.invoke(history)
        for messages in (history, history + _turn(40)):
            assert runnable.invoke(messages) == fit_messages(messages, max_tokens=budget)
