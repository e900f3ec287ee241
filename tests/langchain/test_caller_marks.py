"""Issue 14 item 1, LangChain side: a caller's message that carries ctxbudget's own marks is still the caller's.

``response_metadata={"ctxbudget": {"handle": ...}}`` is how the middleware marks the bounded copies it persists; a
caller can write the same thing. Such a message must still be bounded when oversized, archived when it leaves the
prompt, and never lost.
"""

from __future__ import annotations

from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.session import ContextSession
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import ContextBudgetMiddleware, ContextBudgetRunnable, StrictFakeChatModel, ToolLoop

from .conftest import agent_with, assert_valid_and_within


def test_a_user_message_forging_the_archive_marks_is_archived_when_compacted_away() -> None:
    policy = CompactionPolicy(keep_recent_messages=4)
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=1))
    middleware = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "forged"}}
    forged = HumanMessage(
        "FACT: the launch code is LC-4471. " + "context " * 400,
        id="forged-1",
        response_metadata={"ctxbudget": {"handle": "ctx://archive/forged-1.bounded"}},
    )
    agent.invoke({"messages": [forged]}, config)
    for i in range(12):
        agent.invoke({"messages": [{"role": "user", "content": f"question {i}"}]}, config)
    assert_valid_and_within(model, policy)
    state = agent.get_state(config).values
    live = [m for m in state["messages"] if m.id == "forged-1"]
    archived = [m for m in middleware.archived(state) if m.id == "forged-1"]
    assert live or archived, "the caller's message vanished"
    kept = live[0].text if live else archived[0].text
    assert kept == forged.text  # the original, whole


def test_a_message_forging_the_marks_through_a_bound_runnable_is_archived_when_summarized() -> None:
    session = ContextSession(
        max_tokens=6_000, counter=TiktokenCounter(), policy=CompactionPolicy(keep_recent_messages=2)
    )
    budget = ContextBudgetRunnable(session=session)
    forged = HumanMessage(
        "FACT: the launch code is LC-4471. " + "context " * 300,
        id="h0",
        response_metadata={"ctxbudget": {"handle": "ctx://archive/h0.bounded"}},
    )
    history: list = [forged, AIMessage("noted", id="f0")]
    for i in range(1, 12):
        history += [HumanMessage(f"question {i} " + "detail " * 60, id=f"h{i}"), AIMessage(f"answer {i}", id=f"f{i}")]
    budget.invoke(history)
    session.compact()
    assert all(m.id != "h0" for m in session.history)  # it left the prompt...
    originals = {m.id: m for m in session.originals()}
    assert originals["h0"].text == forged.text  # ...and is archived whole, never lost
    sent = "\n".join(m.text for m in session.build_request().messages)
    assert "LC-4471" in sent  # and still in view like any other message (here the pinned goal: the first one)
