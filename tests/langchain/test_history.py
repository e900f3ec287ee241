"""BudgetedChatMessageHistory with RunnableWithMessageHistory and the strict fake model."""

from __future__ import annotations

from pathlib import Path

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.stores import SQLiteSnapshotStore
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from langchain_ctxbudget import BudgetedChatMessageHistory, StrictFakeChatModel

# RunnableWithMessageHistory and InMemoryChatMessageHistory are deprecated upstream but still what users run.
pytestmark = pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")

PROMPT = ChatPromptTemplate.from_messages(
    [("system", "Be brief."), MessagesPlaceholder("history"), ("human", "{question}")]
)


def _chain(model: StrictFakeChatModel, store: dict[str, BudgetedChatMessageHistory]) -> RunnableWithMessageHistory:
    return RunnableWithMessageHistory(
        PROMPT | model, lambda sid: store[sid], input_messages_key="question", history_messages_key="history"
    )


def _long_reply(messages: list) -> AIMessage:
    return AIMessage(content=f"Reply to {messages[-1].text}. " + "detail " * 300)


def test_history_stays_compacted_and_loses_nothing() -> None:
    inner = InMemoryChatMessageHistory()
    history = BudgetedChatMessageHistory(inner, max_tokens=4_000, policy=CompactionPolicy(keep_recent_messages=4))
    model = StrictFakeChatModel(max_input_tokens=5_000, respond=_long_reply)
    chain = _chain(model, {"s": history})
    for t in range(25):
        chain.invoke({"question": f"question {t}"}, {"configurable": {"session_id": "s"}})
    assert all(r.tokens <= 5_000 for r in model.requests)
    first = inner.messages[0]
    assert first.text.startswith("[Context Summary]")
    assert history.session.summary is not None
    assert history.session.summary in first.text
    live = [m.text for m in inner.messages[1:]]
    archived = [m.text for m in history.archive.messages]
    for t in range(25):
        assert any(text == f"question {t}" for text in live + archived)
    # the model always saw the summary right after the system prompt once compaction started
    assert model.requests[-1].messages[1].text.startswith("[Context Summary]")


def test_reloading_a_compacted_inner_history_restores_the_summary() -> None:
    inner = InMemoryChatMessageHistory()
    first = BudgetedChatMessageHistory(inner, max_tokens=3_000, policy=CompactionPolicy(keep_recent_messages=4))
    for t in range(20):
        first.add_messages([HumanMessage(content=f"q{t}"), AIMessage(content="answer " * 120)])
    assert first.session.summary is not None
    again = BudgetedChatMessageHistory(inner, max_tokens=3_000, policy=CompactionPolicy(keep_recent_messages=4))
    assert again.session.summary == first.session.summary
    assert [m.id for m in again.session.history] == [m.id for m in first.session.history]


async def test_async_history() -> None:
    inner = InMemoryChatMessageHistory()
    history = BudgetedChatMessageHistory(inner, max_tokens=4_000, policy=CompactionPolicy(keep_recent_messages=4))
    model = StrictFakeChatModel(max_input_tokens=5_000, respond=_long_reply)
    chain = _chain(model, {"s": history})
    for t in range(20):
        await chain.ainvoke({"question": f"question {t}"}, {"configurable": {"session_id": "s"}})
    assert (await history.aget_messages())[0].text.startswith("[Context Summary]")
    assert len(history.archive.messages) > 0


def test_clear_keeps_the_archive() -> None:
    history = BudgetedChatMessageHistory(
        InMemoryChatMessageHistory(), max_tokens=3_000, policy=CompactionPolicy(keep_recent_messages=4)
    )
    for t in range(20):
        history.add_messages([HumanMessage(content=f"q{t}"), AIMessage(content="answer " * 120)])
    archived = len(history.archive.messages)
    history.clear()
    assert history.messages == []
    assert len(history.archive.messages) == archived > 0


def test_the_sessions_archive_is_in_the_store_and_a_reload_reads_it_back(tmp_path: Path) -> None:
    store = SQLiteSnapshotStore(tmp_path / "archive.db")
    inner = InMemoryChatMessageHistory()
    policy = CompactionPolicy(keep_recent_messages=4)
    first = BudgetedChatMessageHistory(inner, max_tokens=3_000, policy=policy, archive_store=store)
    for t in range(30):
        first.add_messages([HumanMessage(content=f"q{t}: ticket T-{t:04d}"), AIMessage(content="answer " * 120)])
    archive = first.session.archive
    assert len(archive) > 30
    live = {m.id for m in first.session.history}
    held = list(archive._entries.values())  # what the wrapper keeps in memory: originals of live messages only
    assert all(e.message is not None and e.message.id in live for e in held)
    hit = first.session.search_archive("T-0003")[0]
    assert first.session.read_archived(hit.handle).startswith("q3: ticket T-0003")
    assert len(first.converter) <= len(first.session.history) + 2  # converted forms of archived messages dropped
    again = BudgetedChatMessageHistory(inner, max_tokens=3_000, policy=policy, archive_store=store)
    assert again.session.read_archived(hit.handle).startswith("q3: ticket T-0003")
    assert again.session.summary == first.session.summary


def test_the_same_id_less_reply_twice_is_two_messages_even_after_a_rewrite() -> None:
    """Regression: an id-less message got its id from its position and content only, so after a compaction rewrote
    the inner history, the same reply at the same position got the id of an earlier one and was refused."""
    history = BudgetedChatMessageHistory(
        InMemoryChatMessageHistory(), max_tokens=3_000, policy=CompactionPolicy(keep_recent_messages=4)
    )
    for t in range(30):
        history.add_messages([HumanMessage(content=f"q{t}"), AIMessage(content="answer " * 120)])
    originals = history.session.originals()
    assert [m.text for m in originals if m.role == "user"] == [f"q{t}" for t in range(30)]
    assert sum(1 for m in originals if m.role == "assistant") == 30
