"""The stateless runnable reports its run to every callback LangChain configures for it.

With none configured it calls its fit directly (LangChain's run setup was a fifth of a call at 10k messages); these
cases pin that a handler passed in the config, one inherited from an enclosing chain, and one a configure hook
installs (``collect_runs``) each still see the run, its output and its error, sync and async.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tracers.context import collect_runs

from langchain_ctxbudget import ContextBudgetRunnable, LangChainContextOverflowError, fit_messages


class Runs(BaseCallbackHandler):
    """Records the chain runs it is told about."""

    def __init__(self) -> None:
        self.started: list[tuple[str | None, UUID, UUID | None]] = []
        self.ended: list[tuple[UUID, Any]] = []
        self.failed: list[tuple[UUID, BaseException]] = []

    def on_chain_start(
        self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self.started.append((kwargs.get("name"), run_id, parent_run_id))

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.ended.append((run_id, outputs))

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.failed.append((run_id, error))

    def ours(self) -> list[UUID]:
        return [run_id for name, run_id, _ in self.started if name == "ContextBudgetRunnable"]


def _messages(turns: int = 6) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage("You are terse.")]
    for t in range(turns):
        call = {"id": f"c{t}", "name": "grep", "args": {"pattern": f"p{t}"}}
        messages += [
            HumanMessage(f"question {t}", id=f"h{t}"),
            AIMessage("", tool_calls=[call], id=f"a{t}"),
            ToolMessage(" ".join(f"line{i}" for i in range(300)), tool_call_id=f"c{t}", id=f"r{t}"),
            AIMessage(f"answer {t}", id=f"f{t}"),
        ]
    return messages


BUDGET = 900


def test_a_handler_in_the_config_sees_the_run_and_its_output() -> None:
    runs = Runs()
    messages = _messages()
    out = ContextBudgetRunnable(max_tokens=BUDGET).invoke(messages, {"callbacks": [runs]})
    assert out == fit_messages(messages, max_tokens=BUDGET)
    assert len(runs.ours()) == 1
    ((run_id, outputs),) = runs.ended
    assert run_id == runs.ours()[0]
    assert outputs == out


def test_the_run_name_in_the_config_is_the_one_reported() -> None:
    runs = Runs()
    ContextBudgetRunnable(max_tokens=BUDGET).invoke(_messages(), {"callbacks": [runs], "run_name": "fit history"})
    assert [name for name, _, _ in runs.started] == ["fit history"]


def test_a_handler_on_an_enclosing_chain_sees_the_run_as_its_child() -> None:
    runs = Runs()
    chain = RunnableLambda(lambda messages: messages) | ContextBudgetRunnable(max_tokens=BUDGET)
    chain.invoke(_messages(), {"callbacks": [runs]})
    (ours,) = runs.ours()
    parents = {run_id: parent for _, run_id, parent in runs.started}
    root = next(run_id for run_id, parent in parents.items() if parent is None)
    assert parents[ours] == root


def test_a_configure_hook_sees_the_run() -> None:
    messages = _messages()
    with collect_runs() as collector:
        out = ContextBudgetRunnable(max_tokens=BUDGET).invoke(messages)
    (run,) = collector.traced_runs
    assert run.name == "ContextBudgetRunnable"
    assert run.outputs is not None
    assert out == fit_messages(messages, max_tokens=BUDGET)


def test_a_handler_sees_the_error_of_a_failed_fit() -> None:
    runs = Runs()
    with pytest.raises(LangChainContextOverflowError):
        ContextBudgetRunnable(max_tokens=40).invoke(_messages(), {"callbacks": [runs]})
    (run_id,) = runs.ours()
    assert [(r, type(e)) for r, e in runs.failed] == [(run_id, LangChainContextOverflowError)]
    assert runs.ended == []


def test_without_a_handler_the_answer_is_the_same_call_after_call() -> None:
    traced, direct = ContextBudgetRunnable(max_tokens=BUDGET), ContextBudgetRunnable(max_tokens=BUDGET)
    messages = _messages(2)
    for t in range(2, 8):
        assert direct.invoke(messages) == traced.invoke(messages, {"callbacks": [Runs()]})
        assert direct.invoke(messages) == fit_messages(messages, max_tokens=BUDGET)
        messages = messages + _messages(t + 1)[len(messages) :]


async def test_async_a_handler_and_a_configure_hook_see_the_run() -> None:
    runs = Runs()
    messages = _messages()
    out = await ContextBudgetRunnable(max_tokens=BUDGET).ainvoke(messages, {"callbacks": [runs]})
    assert out == fit_messages(messages, max_tokens=BUDGET)
    assert len(runs.ours()) == 1
    assert [outputs for _, outputs in runs.ended] == [out]
    with collect_runs() as collector:
        assert await ContextBudgetRunnable(max_tokens=BUDGET).ainvoke(messages) == out
    assert [run.name for run in collector.traced_runs] == ["ContextBudgetRunnable"]


async def test_async_a_handler_sees_the_error_of_a_failed_fit() -> None:
    runs = Runs()
    with pytest.raises(LangChainContextOverflowError):
        await ContextBudgetRunnable(max_tokens=40).ainvoke(_messages(), {"callbacks": [runs]})
    assert [type(e) for _, e in runs.failed] == [LangChainContextOverflowError]
