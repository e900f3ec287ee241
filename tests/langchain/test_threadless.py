"""Runs without a ``thread_id`` (no checkpointer, stateless servers) are isolated from each other."""

from __future__ import annotations

import threading
from typing import Any

from ctxbudget.compaction.policy import CompactionPolicy
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langchain_ctxbudget import SUMMARY_KEY, ContextBudgetMiddleware, StrictFakeChatModel

from .conftest import agent_with, assert_valid_and_within, final_text

TAGS = ("alpha", "bravo", "charlie")


def _history(tag: str) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for i in range(40):
        out.append({"role": "user", "content": f"{tag} question {i} " + "detail " * 40})
        out.append({"role": "assistant", "content": f"{tag} answer {i} " + "reply " * 40})
    return [*out, {"role": "user", "content": f"{tag}: final question"}]


def _tag_of(messages: list[BaseMessage]) -> str:
    last = messages[-1].text
    return next(tag for tag in TAGS if last.startswith(tag))


def test_concurrent_threadless_runs_are_isolated_and_complete(policy: CompactionPolicy) -> None:
    # Every run waits at the barrier inside its model call, so all runs have built (and compacted) their request
    # before any of them reaches after_model: the window in which a shared view handed one run's update to another.
    barrier = threading.Barrier(len(TAGS), timeout=60)

    def respond(messages: list[BaseMessage]) -> AIMessage:
        barrier.wait()
        return AIMessage(content=f"reply for {_tag_of(messages)}")

    model = StrictFakeChatModel(max_input_tokens=4_000, respond=respond)
    middleware = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(model, middleware, tools=[])
    results: dict[str, Any] = {}

    def run(tag: str) -> None:
        try:
            results[tag] = agent.invoke({"messages": _history(tag)})
        except BaseException as exc:  # reported by the assertions below
            results[tag] = exc

    threads = [threading.Thread(target=run, args=(tag,)) for tag in TAGS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not [r for r in results.values() if isinstance(r, BaseException)], results
    assert len(model.requests) == len(TAGS)
    assert_valid_and_within(model, policy)
    for tag in TAGS:
        result = results[tag]
        others = [t for t in TAGS if t != tag]
        assert final_text(result) == f"reply for {tag}"
        texts = [m.text for m in result["messages"]]
        assert all(not text.startswith(tuple(others)) for text in texts), tag
        # This run's own compaction was persisted: the history shrank, its summary covers its own turns only.
        assert len(result["messages"]) < 81
        assert f"{tag} question" in result[SUMMARY_KEY]
        assert not any(other in result[SUMMARY_KEY] for other in others)
        assert any(isinstance(m, HumanMessage) and m.text == f"{tag}: final question" for m in result["messages"])
    # Views of finished threadless runs are dropped, not cached against later runs.
    assert middleware.session("__no_thread__") is None
    assert not middleware._views


def test_sequential_threadless_runs_do_not_see_each_other(policy: CompactionPolicy) -> None:
    model = StrictFakeChatModel(max_input_tokens=4_000, respond=lambda m: AIMessage(content=f"reply {_tag_of(m)}"))
    agent = agent_with(model, ContextBudgetMiddleware(policy=policy), tools=[])
    first = agent.invoke({"messages": _history("alpha")})
    second = agent.invoke({"messages": _history("bravo")})
    assert "alpha" not in second[SUMMARY_KEY]
    assert "bravo" not in first[SUMMARY_KEY]
    assert all("alpha" not in m.text for m in model.requests[-1].messages)
