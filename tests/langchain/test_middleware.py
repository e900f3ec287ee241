"""ContextBudgetMiddleware driving real create_agent graphs with the strict fake model and real @tool tools."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import ExtractiveSummarizer, SummaryRequest
from ctxbudget.errors import ContextOverflowError, UsageError
from ctxbudget.messages.tokens import TiktokenCounter
from langchain_core.exceptions import ContextOverflowError as LCContextOverflowError
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ctxbudget import (
    ARCHIVE_KEY,
    READ_TOOL_NAME,
    SUMMARY_KEY,
    ContextBudgetMiddleware,
    LangChainContextOverflowError,
    StrictFakeChatModel,
    ToolLoop,
)

from .conftest import (
    EventLog,
    agent_with,
    assert_valid_and_within,
    big_text,
    dump_logs,
    final_text,
    handle_in,
    lookup,
    search,
)


def _turn(i: int) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"question {i}: what does item {i} say?"}]}


def test_hundreds_of_turns_with_parallel_calls_stay_valid_and_within_budget(policy: CompactionPolicy) -> None:
    model = StrictFakeChatModel(max_input_tokens=8_000, respond=ToolLoop("search", parallel=3))
    middleware = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "long"}}
    for i in range(120):
        agent.invoke(_turn(i), config)
    assert len(model.requests) == 240
    assert_valid_and_within(model, policy)
    state = agent.get_state(config).values
    assert state[SUMMARY_KEY]
    assert "question 0" in model.requests[-1].messages[1].text  # the goal, pinned in the summary message
    # Nothing lost: every user question is either live in the state or archived in it.
    kept = {m.text for m in state["messages"] if isinstance(m, HumanMessage)}
    kept |= {m.text for m in middleware.archived(state) if m.role == "user"}
    assert {f"question {i}: what does item {i} say?" for i in range(120)} <= kept
    # The live history stays small: compaction results were persisted, not recomputed each turn.
    assert len(state["messages"]) < 60


def test_request_carries_summary_and_state_messages_without_recompaction(policy: CompactionPolicy) -> None:
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    middleware = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    for i in range(16):
        agent.invoke(_turn(i), config)
    state = agent.get_state(config).values
    summary = state[SUMMARY_KEY]
    assert summary  # sixteen turns of two ~600-line results compact in a 6,000-token window
    last = model.requests[-1].messages
    assert last[1].text.startswith("[Context Summary]")
    assert summary in last[1].text
    # What was sent after the summary is exactly the state's messages up to that call.
    sent_ids = [m.id for m in last[2:]]
    assert sent_ids == [m.id for m in state["messages"][: len(sent_ids)]]


def test_huge_tool_output_is_bounded_archived_in_state_and_readable_back(policy: CompactionPolicy) -> None:
    original = big_text("log:api", lines=20_000)

    def script(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            return AIMessage(content="", tool_calls=[{"id": "c1", "name": "dump_logs", "args": {"service": "api"}}])
        if isinstance(last, ToolMessage) and last.name == "dump_logs":
            handle = handle_in(messages)
            args = {"handle": handle, "offset": 0, "limit": 2000}
            return AIMessage(content="", tool_calls=[{"id": "c2", "name": READ_TOOL_NAME, "args": args}])
        return AIMessage(content="read it")

    model = StrictFakeChatModel(max_input_tokens=16_000, respond=script)
    middleware = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(model, middleware, tools=[dump_logs], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "logs"}}
    log = EventLog()
    result = agent.invoke(_turn(0), {**config, "callbacks": [log]})
    assert final_text(result) == "read it"
    assert_valid_and_within(model, policy)
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    bounded, read_back = tool_messages
    limit = policy.tool_output_limit(16_000)
    assert middleware.counter.count_text(bounded.text) <= limit < middleware.counter.count_text(original)
    assert bounded.text.startswith("BEGIN log:api")
    assert bounded.text.endswith("END log:api")
    assert bounded.response_metadata["ctxbudget"]["handle"].startswith("ctx://archive/")
    assert "original" not in bounded.response_metadata["ctxbudget"]  # moved to the archive store
    state = agent.get_state(config).values
    assert {m.id: m.text for m in middleware.archived(state)}[bounded.id] == original
    assert original not in json.dumps(state[ARCHIVE_KEY])  # the state holds a reference; the original is in the store
    assert read_back.text.startswith(original[:2000])
    assert "continue with offset=2000" in read_back.text
    assert "ctxbudget.tool_output_bounded" in log.names()


def test_checkpoint_round_trip_resumes_in_a_new_graph_instance(policy: CompactionPolicy) -> None:
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "resume"}}
    first_model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    first = agent_with(first_model, ContextBudgetMiddleware(policy=policy), checkpointer=saver)
    for i in range(16):
        first.invoke(_turn(i), config)
    before = first.get_state(config).values
    assert before[SUMMARY_KEY]

    # One model call in the resumed turn, so the state read afterwards is the one that call was built from.
    second_model = StrictFakeChatModel(max_input_tokens=6_000, responses=["done"])

    class Recording(ExtractiveSummarizer):
        previous: ClassVar[list[str | None]] = []

        def summarize(self, request: SummaryRequest) -> str:
            self.previous.append(request.previous_summary)
            return super().summarize(request)

    second_mw = ContextBudgetMiddleware(policy=policy, summarizer=Recording(TiktokenCounter()))
    second = agent_with(second_model, second_mw, checkpointer=saver)
    second.invoke(_turn(16), config)
    request = second_model.requests[0].messages
    # The persisted summary, not a recomputed one: sent as it is, or (when the resumed turn compacts at once)
    # the previous summary the next compaction merges into.
    if Recording.previous:
        assert Recording.previous[0] == before[SUMMARY_KEY]
    else:
        assert before[SUMMARY_KEY] in request[1].text
    state_messages = second.get_state(config).values["messages"]
    # A human message right after the summary is sent merged with it (no two user turns touch).
    folded = int(state_messages[0].type == "human" and state_messages[0].text in request[1].text)
    assert [m.id for m in request[2:]] == [m.id for m in state_messages[folded : folded + len(request) - 2]]
    session = second_mw.session("resume")
    assert session is not None
    assert len(session.archive) >= before[ARCHIVE_KEY]["count"] > 0
    assert_valid_and_within(second_model, policy)


async def test_async_agent_with_a_chat_model_summarizer(policy: CompactionPolicy) -> None:
    summarizer = StrictFakeChatModel(respond=lambda _: "## Goal\n- SUMMARY-BY-MODEL keeps the facts")
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    middleware = ContextBudgetMiddleware(policy=policy, summarizer=summarizer)
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "async"}}
    for i in range(16):
        await agent.ainvoke(_turn(i), config)
    assert_valid_and_within(model, policy)
    state = (await agent.aget_state(config)).values
    assert "SUMMARY-BY-MODEL" in state[SUMMARY_KEY]
    assert summarizer.requests  # the summary came from the chat model
    assert all(not r.tools for r in summarizer.requests)


def test_summaries_never_stream_to_the_ui(policy: CompactionPolicy) -> None:
    summarizer = StrictFakeChatModel(respond=lambda _: "SECRET-SUMMARY-TEXT")
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    agent = agent_with(
        model, ContextBudgetMiddleware(policy=policy, summarizer=summarizer), checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "stream"}}
    streamed: list[str] = []
    for i in range(16):
        for chunk, _meta in agent.stream(_turn(i), config, stream_mode="messages"):
            streamed.append(chunk.text)
    assert summarizer.requests, "compaction never called the summarizer"
    assert "SECRET-SUMMARY-TEXT" in agent.get_state(config).values[SUMMARY_KEY]
    assert not any("SECRET-SUMMARY-TEXT" in text for text in streamed)
    assert any("Done" in text for text in streamed)  # the agent's own replies do stream


def test_compaction_reaches_callbacks_as_custom_events(policy: CompactionPolicy) -> None:
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    agent = agent_with(model, ContextBudgetMiddleware(policy=policy), checkpointer=InMemorySaver())
    log = EventLog()
    config = {"configurable": {"thread_id": "events"}, "callbacks": [log]}
    for i in range(16):
        agent.invoke(_turn(i), config)
    compacted = [data for name, data in log.events if name == "ctxbudget.context_compacted"]
    assert compacted
    assert compacted[0]["before"]["used_tokens"] > compacted[0]["after"]["used_tokens"]
    assert any(data["summary"] for data in compacted)


def test_provider_usage_calibrates_the_tracker(policy: CompactionPolicy) -> None:
    model = StrictFakeChatModel(max_input_tokens=50_000, respond=ToolLoop("lookup", parallel=2))
    middleware = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    agent.invoke(_turn(0), {"configurable": {"thread_id": "usage"}})
    session = middleware.session("usage")
    assert session is not None
    assert session.tracker.calibration.samples == 2
    assert session.tracker.last_reported == model.requests[-1].tokens
    assert session.tracker.calibration.ratio == pytest.approx(1.0, abs=0.02)


def test_window_comes_from_the_model_profile() -> None:
    model = StrictFakeChatModel(max_input_tokens=12_345, respond=ToolLoop("lookup"))
    middleware = ContextBudgetMiddleware()
    agent_with(model, middleware).invoke(_turn(0), {"configurable": {"thread_id": "p"}})
    session = middleware.session("p")
    assert session is not None
    assert session.max_tokens == 12_345


def test_missing_window_is_a_usage_error_naming_the_field() -> None:
    model = StrictFakeChatModel(profile={}, responses=["hi"])
    with pytest.raises(UsageError, match="max_tokens") as info:
        agent_with(model, ContextBudgetMiddleware()).invoke(_turn(0))
    assert info.value.field == "max_tokens"


def test_hard_stop_raises_both_error_families_with_the_figures() -> None:
    model = StrictFakeChatModel(max_input_tokens=2_000, responses=["never"])
    # What compaction may not touch (the system prompt) alone over the hard stop: a huge user message would be
    # folded into the summary instead (test_summary_and_edits), but this request cannot be made to fit.
    agent = agent_with(model, ContextBudgetMiddleware(), tools=[lookup], system_prompt="rule " * 1_680)
    with pytest.raises(LangChainContextOverflowError) as info:
        agent.invoke({"messages": [{"role": "user", "content": "hi"}]})
    error = info.value
    assert isinstance(error, ContextOverflowError)
    assert isinstance(error, LCContextOverflowError)
    assert error.max_tokens == 2_000
    assert error.used_tokens > error.hard_stop_tokens == 1_900
    assert "1,900" in str(error)
    assert model.requests == []  # nothing was sent


def test_failing_summarizer_model_falls_back_and_keeps_history(policy: CompactionPolicy) -> None:
    def broken(_: list[BaseMessage]) -> AIMessage:
        raise RuntimeError("summarizer provider is down")

    summarizer = StrictFakeChatModel(respond=broken)
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    agent = agent_with(
        model, ContextBudgetMiddleware(policy=policy, summarizer=summarizer), checkpointer=InMemorySaver()
    )
    log = EventLog()
    config = {"configurable": {"thread_id": "broken"}, "callbacks": [log]}
    for i in range(16):
        agent.invoke(_turn(i), config)
    assert_valid_and_within(model, policy)
    assert "ctxbudget.compaction_failed" in log.names()
    assert "## Commands and results" in agent.get_state(config).values[SUMMARY_KEY]  # the offline ledger


def test_threads_are_isolated(policy: CompactionPolicy) -> None:
    model = StrictFakeChatModel(max_input_tokens=6_000, respond=ToolLoop("search", parallel=2))
    middleware = ContextBudgetMiddleware(policy=policy)
    agent = agent_with(model, middleware, checkpointer=InMemorySaver())
    for i in range(6):
        agent.invoke(_turn(i), {"configurable": {"thread_id": "a"}})
    agent.invoke({"messages": [{"role": "user", "content": "fresh thread"}]}, {"configurable": {"thread_id": "b"}})
    sent = model.requests[-1].messages
    assert not any("question" in m.text for m in sent)
    b_state = agent.get_state({"configurable": {"thread_id": "b"}}).values
    assert SUMMARY_KEY not in b_state or b_state[SUMMARY_KEY] is None


def test_unknown_read_back_handle_answers_the_model_instead_of_crashing() -> None:
    calls = [{"id": "r1", "name": READ_TOOL_NAME, "args": {"handle": "ctx://archive/nope"}}]
    model = StrictFakeChatModel(responses=[AIMessage(content="", tool_calls=calls), "ok"])
    result = agent_with(model, ContextBudgetMiddleware(), tools=[search]).invoke(_turn(0))
    reply = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert reply.status == "error"
    assert "no archived output" in reply.text
    assert "ctx://archive/nope" in reply.text


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"handle": "ctx://archive/x.bounded", "offset": "the start"}, "offset"),
        ({"handle": "ctx://archive/x.bounded", "offset": -5}, "offset"),
        ({"handle": "ctx://archive/x.bounded", "offset": 1.5}, "offset"),
        ({"handle": "ctx://archive/x.bounded", "limit": 0}, "limit"),
        ({"handle": "ctx://archive/x.bounded", "limit": [10]}, "limit"),
        ({"offset": 3}, "handle"),
        ({"handle": ""}, "handle"),
        ({"handle": 42}, "handle"),
        ({"handle": "ctx://archive/nope"}, "handle"),
    ],
)
def test_bad_read_back_arguments_answer_the_model_with_an_error(args: dict[str, Any], named: str) -> None:
    calls = [{"id": "r1", "name": READ_TOOL_NAME, "args": args}]
    model = StrictFakeChatModel(max_input_tokens=8_000, responses=[AIMessage(content="", tool_calls=calls), "done"])
    agent = agent_with(model, ContextBudgetMiddleware(), tools=[search], checkpointer=InMemorySaver())
    result = agent.invoke(_turn(0), {"configurable": {"thread_id": "read"}})
    assert final_text(result) == "done"
    reply = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert reply.status == "error"
    assert reply.tool_call_id == "r1"
    assert reply.text.startswith("Error:")
    assert f"{named}:" in reply.text


def test_read_archived_rejects_bad_arguments_with_a_typed_error() -> None:
    middleware = ContextBudgetMiddleware(max_tokens=8_000)
    with pytest.raises(UsageError, match="offset") as info:
        middleware.read_archived("ctx://archive/x", offset=-1)
    assert info.value.field == "offset"
    with pytest.raises(UsageError, match="limit"):
        middleware.read_archived("ctx://archive/x", limit=0)
    assert "no archived output" in middleware.read_archived("ctx://archive/x")


def test_read_back_tool_can_be_left_out() -> None:
    model = StrictFakeChatModel(responses=["ok"])
    agent_with(model, ContextBudgetMiddleware(read_back_tool=False), tools=[search]).invoke(_turn(0))
    assert model.requests[0].tools == ("search",)
    model2 = StrictFakeChatModel(responses=["ok"])
    agent_with(model2, ContextBudgetMiddleware(), tools=[search]).invoke(_turn(0))
    assert set(model2.requests[0].tools) == {"search", READ_TOOL_NAME, "search_archive"}


def test_invalid_max_tokens_is_rejected() -> None:
    with pytest.raises(UsageError, match="max_tokens"):
        ContextBudgetMiddleware(max_tokens=0)
