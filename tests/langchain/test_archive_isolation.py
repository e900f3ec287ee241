"""A state's archive is its own: a second agent on the same thread id, or a branch, never gets another's entries.

Issue 26, finding 4: the search cache was keyed by thread id and checked only the archive's size, so a second state
with as many entries was answered from the first one's archive. The archive of a state is now the chain its own
reference names (see ``langchain_ctxbudget._archive_store``), and every cache is keyed by that reference.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ctxbudget.compaction.policy import CompactionPolicy
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import ARCHIVE_KEY, ContextBudgetMiddleware, StrictFakeChatModel, ToolLoop

from .conftest import agent_with

ALPHA = "Remember: the alpha-credentials of branch one rotate on Mondays, ticket T1111."
BRAVO = "Remember: the bravo-credentials of branch two rotate on Fridays, ticket T2222."


def _turn(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _state_of_an_agent(planted: str, thread: str, policy: CompactionPolicy) -> dict[str, Any]:
    """The state of an agent (its own graph and checkpointer) whose first message was compacted away."""
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    agent = agent_with(model, ContextBudgetMiddleware(policy=policy), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": thread}}
    agent.invoke(_turn(planted), config)
    for i in range(20):
        agent.invoke(_turn(f"question {i}: what does item {i} say?"), config)
    state: dict[str, Any] = agent.get_state(config).values
    assert planted not in [m.text for m in state["messages"]]
    return state


def _count(state: dict[str, Any]) -> int:
    """Entries in a state's archive: its reference's count (an archive held inline, by an earlier version: its size)."""
    value = state[ARCHIVE_KEY]
    return int(value.get("count", len(value)))


def _texts(middleware: ContextBudgetMiddleware, state: dict[str, Any], runtime: Any) -> list[str]:
    return [hit.text for hit in middleware.search_archived("credentials rotate", k=3, state=state, runtime=runtime)]


def test_a_second_agent_on_the_same_thread_id_is_answered_from_its_own_archive(policy: CompactionPolicy) -> None:
    first = _state_of_an_agent(ALPHA, "shared", policy)
    second = _state_of_an_agent(BRAVO, "shared", policy)
    assert _count(first) == _count(second)  # as many entries: a size check cannot tell them apart
    middleware = ContextBudgetMiddleware(policy=policy)
    runtime = SimpleNamespace(execution_info=SimpleNamespace(thread_id="shared"))
    assert _texts(middleware, first, runtime)[0] == ALPHA
    found = _texts(middleware, second, runtime)
    assert found[0] == BRAVO
    assert ALPHA not in found
    assert _texts(middleware, first, runtime)[0] == ALPHA  # and back: each state keeps its own


def test_a_branch_forked_from_a_checkpoint_sees_only_its_own_entries(policy: CompactionPolicy) -> None:
    saver = InMemorySaver()
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    middleware = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(model, middleware, checkpointer=saver)
    config: dict[str, Any] = {"configurable": {"thread_id": "forked"}}
    for i in range(3):
        agent.invoke(_turn(f"question {i}: what does item {i} say?"), config)
    fork = agent.get_state(config).config  # the checkpoint both branches start from
    branches: dict[str, dict[str, Any]] = {}
    for planted in (ALPHA, BRAVO):
        agent.invoke(_turn(planted), fork)  # continue from the fork: a new branch, now the thread's latest
        for i in range(20):
            agent.invoke(_turn(f"{planted[:20]} follow-up {i}"), config)
        branches[planted] = agent.get_state(config).values
    assert _count(branches[ALPHA]) == _count(branches[BRAVO])
    runtime = SimpleNamespace(execution_info=SimpleNamespace(thread_id="forked"))
    reader = ContextBudgetMiddleware(policy=policy)
    bravo = _texts(reader, branches[BRAVO], runtime)
    assert ALPHA not in bravo
    assert BRAVO in bravo
