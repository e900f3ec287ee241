"""ContextSession, behaviour by behaviour."""

from __future__ import annotations

import asyncio
import random

import pytest
from ctxbudget import ContextSession, PreCompact
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import SummaryRequest
from ctxbudget.errors import CompactionError, ContextOverflowError, InvalidMessageError, InvalidPolicyError, UsageError
from ctxbudget.messages import Message, ToolCall, ToolSchema
from ctxbudget.messages.tokens import TiktokenCounter, count_request
from ctxbudget.messages.toolpairs import find_tool_pair_problems
from ctxbudget.session import INTERRUPTED_NOTICE
from ctxbudget.session.events import ContextCompacted, Event
from ctxbudget.testing import ScriptedSummarizer, StrictProvider

COUNTER = TiktokenCounter()


def make(window: int = 4_000, **kwargs: object) -> ContextSession:
    policy = kwargs.pop("policy", CompactionPolicy(keep_recent_messages=4))
    return ContextSession(max_tokens=window, counter=COUNTER, system_prompt="sys", policy=policy, **kwargs)  # type: ignore[arg-type]


def chat(session: ContextSession, turns: int, words: int = 40) -> None:
    for n in range(turns):
        session.add_user(f"question {n} " + "word " * words)
        session.add_assistant(f"Answer {n}. " + "text " * words)


class Recorder:
    def __init__(self, session: ContextSession) -> None:
        self.events: list[Event] = []
        session.subscribe(self.events.append)

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.type == kind]


# -- window and counting -------------------------------------------------------------------------------------------
def test_window_comes_from_the_caller_else_the_registry_and_is_never_guessed() -> None:
    assert ContextSession(max_tokens=1234).max_tokens == 1234
    assert ContextSession(model="gpt-4o").max_tokens == 128_000 - 16_384
    with pytest.raises(UsageError, match="no window given") as info:  # was a silent 128,000 whatever the model
        ContextSession()
    assert info.value.field == "max_tokens"


@pytest.mark.parametrize("bad", [0, -5, True, 1.5, "100"])
def test_a_bad_window_is_a_typed_error_naming_max_tokens(bad: object) -> None:
    with pytest.raises(InvalidPolicyError, match="max_tokens") as info:
        ContextSession(max_tokens=bad)  # type: ignore[arg-type]
    assert info.value.field == "max_tokens"


def test_count_covers_system_prompt_tools_tool_calls_and_results_exactly() -> None:
    tool = ToolSchema(
        name="grep",
        description="Search files.",
        parameters={"type": "object", "properties": {"q": {"type": "string", "description": "pattern"}}},
    )
    session = ContextSession(max_tokens=50_000, counter=COUNTER, system_prompt="You are terse.", tools=[tool])
    session.add_user("find TODOs")
    session.add_assistant(tool_calls=[ToolCall(id="c1", name="grep", args={"q": "TODO"})])
    session.add_tool_result("c1", "a.py:1: TODO fix", name="grep")
    request = session.build_request()
    assert request.tokens == count_request(COUNTER, request.messages, request.tools)
    assert request.tokens == session.counted_tokens()
    assert COUNTER.count_tools([tool]) > 0
    without_tools = ContextSession(max_tokens=50_000, counter=COUNTER, system_prompt="You are terse.")
    without_tools.sync(session.history)
    assert session.counted_tokens() - without_tools.counted_tokens() == COUNTER.count_tools([tool])


# -- tracking --------------------------------------------------------------------------------------------------
def test_reported_usage_is_trusted_and_never_hides_a_bigger_unsent_prompt() -> None:
    session = make(window=100_000)
    chat(session, 3)
    counted = session.build_request().tokens
    session.record_usage(counted + 500)  # the provider bills more than we count
    assert session.state.used_tokens >= counted + 500
    session.add_user("a big new prompt " + "x " * 3000)
    grown = session.counted_tokens()
    assert session.state.used_tokens >= grown  # own count of the unsent prompt wins when bigger
    assert session.state.used_tokens >= counted + 500 + (grown - counted)


def test_calibration_learns_the_provider_ratio() -> None:
    session = make(window=100_000)
    chat(session, 2)
    counted = session.build_request().tokens
    session.record_usage(counted * 2)
    assert session.tracker.calibration.ratio == pytest.approx(2.0)


def test_usage_floor_from_the_caller_is_respected() -> None:
    session = make(window=100_000)
    session.set_usage_floor(9_000)
    assert session.state.used_tokens == 9_000


def test_context_update_is_emitted_whenever_usage_changes() -> None:
    session = make()
    recorder = Recorder(session)
    session.add_user("hello")
    session.record_usage(50)
    updates = recorder.of("context_update")
    assert len(updates) == 2
    assert updates[-1].state.used_tokens >= 50  # type: ignore[attr-defined]


@pytest.mark.parametrize("bad", [-1, True, 2.5])
def test_record_usage_rejects_bad_figures(bad: object) -> None:
    with pytest.raises(InvalidPolicyError, match="prompt_tokens"):
        make().record_usage(bad)  # type: ignore[arg-type]


# -- compaction ------------------------------------------------------------------------------------------------
def test_auto_compaction_fires_at_threshold_and_lands_under_target() -> None:
    session = make()
    recorder = Recorder(session)
    chat(session, 40)
    request = session.build_request()
    compacted = recorder.of("context_compacted")
    assert len(compacted) == 1
    event = compacted[0]
    assert isinstance(event, ContextCompacted)
    assert event.trigger == "auto"
    assert event.before.used_tokens >= 0.8 * 4_000
    assert event.after.used_tokens <= 0.6 * 4_000
    assert request.tokens == event.after.used_tokens
    assert session.summary is not None
    assert len(event.receipt) == len(session.archive)


def test_no_compaction_below_threshold_or_when_auto_is_off() -> None:
    session = make()
    chat(session, 2)
    assert session.build_request().compaction is None
    off = make(policy=CompactionPolicy(auto=False, keep_recent_messages=4))
    chat(off, 50)
    with pytest.raises(ContextOverflowError):
        off.build_request()


def test_threshold_is_changeable_on_a_live_session_and_validated() -> None:
    session = make()
    session.set_threshold(0.5)
    assert session.policy.threshold == 0.5
    assert session.policy.target <= 0.5
    for bad in (0, 1.5, float("nan")):
        with pytest.raises(InvalidPolicyError, match="threshold"):
            session.set_threshold(bad)


def test_the_summary_is_cumulative_not_nested() -> None:
    summarizer = ScriptedSummarizer()
    session = make(summarizer=summarizer)
    chat(session, 10)
    session.compact()
    first = session.summary
    chat(session, 10)
    session.compact()
    assert summarizer.requests[-1].previous_summary == first
    assert session.summary is not None
    assert session.summary.count("[Context Summary]") == 0
    request_text = "\n".join(m.text for m in session.build_request().messages)
    assert request_text.count("[Context Summary]") == 1


def test_the_goal_survives_every_compaction_verbatim() -> None:
    session = make()
    goal = "Migrate the billing service to Postgres 16 without downtime."
    session.add_user(goal)
    for _ in range(5):
        chat(session, 8)
        session.compact()
    assert goal in session.build_request().messages[1].text


def test_compact_instructions_and_manual_focus_reach_the_summarizer() -> None:
    summarizer = ScriptedSummarizer()
    session = make(summarizer=summarizer, compact_instructions="Keep every SQL statement.")
    chat(session, 10)
    session.compact("focus on the API design")
    instructions = summarizer.requests[-1].instructions or ""
    assert "Keep every SQL statement." in instructions
    assert "focus on the API design" in instructions


def test_the_summarizer_sees_the_whole_evicted_span_in_chunks_when_it_is_large() -> None:
    summarizer = ScriptedSummarizer()
    session = make(
        window=60_000,
        summarizer=summarizer,
        policy=CompactionPolicy(keep_recent_messages=4, summarizer_input_tokens=1_000),
    )
    chat(session, 40, words=60)
    session.compact()
    seen = [m.id for request in summarizer.requests for m in request.messages]
    evicted = [e.message.id for e in session.archive.entries() if e.reason == "summarized" and e.message]
    assert len(summarizer.requests) > 1
    assert seen == evicted  # every evicted message, once, in order
    for later in summarizer.requests[1:]:
        assert later.previous_summary is not None  # each chunk folds into the running summary


@pytest.mark.parametrize("failure", ["raise", "blank", "oversized", "not_text"])
def test_a_failing_summarizer_falls_back_to_extractive_and_says_so(failure: str) -> None:
    session = make(summarizer=ScriptedSummarizer([failure]))  # type: ignore[list-item]
    recorder = Recorder(session)
    chat(session, 10)
    result = session.compact()
    assert result.tier == "extractive"
    assert result.fallback_reason
    assert recorder.of("compaction_failed")
    assert len(session.originals()) == 20


def test_a_hanging_summarizer_times_out_and_falls_back() -> None:
    session = make(
        summarizer=ScriptedSummarizer(["hang"], hang_seconds=3600.0),  # past any run: the timeout always fires first
        policy=CompactionPolicy(keep_recent_messages=4, summarizer_timeout=0.1),
    )
    chat(session, 10)
    result = session.compact()
    assert result.tier == "extractive"
    assert "timed out" in (result.fallback_reason or "")


def test_async_compaction_uses_asummarize_and_falls_back_on_cancel_inside_the_summarizer() -> None:
    session = make(summarizer=ScriptedSummarizer(["cancel"]))
    chat(session, 10)
    result = asyncio.run(session.acompact())
    assert result.tier == "extractive"


def test_cancelling_the_caller_leaves_history_exactly_as_before() -> None:
    summarizer = ScriptedSummarizer(["hang"], hang_seconds=5.0)
    session = make(summarizer=summarizer, policy=CompactionPolicy(keep_recent_messages=4, summarizer_timeout=30))
    chat(session, 10)
    before = (session.history, session.summary, len(session.archive))

    async def cancel_midway() -> None:
        task = asyncio.create_task(session.acompact())
        while not summarizer.requests:  # cancelled while the summarizer runs, however busy the machine
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())
    assert (session.history, session.summary, len(session.archive)) == before


def test_a_hook_that_raises_leaves_history_untouched_and_compact_reports_it() -> None:
    session = make()
    chat(session, 10)
    before = session.history

    def boom(_: PreCompact) -> None:
        raise RuntimeError("hook failed")

    session.pre_compact_hooks.append(boom)
    with pytest.raises(CompactionError, match="history unchanged"):
        session.compact()
    assert session.history == before


def test_hooks_run_in_order_around_compaction() -> None:
    session = make()
    calls: list[str] = []
    session.pre_compact_hooks.append(lambda e: calls.append(f"pre:{e.trigger}"))
    session.post_compact_hooks.append(lambda e: calls.append(f"post:{e.tier}"))
    session.subscribe(lambda e: calls.append("event"), "context_compacted")
    chat(session, 10)
    session.compact()
    assert calls == ["pre:manual", "post:summarize", "event"]


def test_oversized_tool_outputs_are_bounded_on_arrival_and_readable_back() -> None:
    session = make(window=20_000)
    recorder = Recorder(session)
    session.add_user("read the log")
    session.add_assistant(tool_calls=[ToolCall(id="c1", name="cat", args={"path": "app.log"})])
    log = "".join(f"line {i}: something happened\n" for i in range(5_000))
    stored = session.add_tool_result("c1", log, name="cat")
    bounded = recorder.of("tool_output_bounded")
    assert len(bounded) == 1
    handle = bounded[0].handle  # type: ignore[attr-defined]
    assert handle in stored.text
    assert COUNTER.count_message(stored) <= session.policy.tool_output_limit(20_000) + 20
    assert session.read_archived(handle, limit=None) == log
    assert session.originals()[-1].text == log


def test_old_tool_results_are_cleared_before_anything_is_summarized() -> None:
    session = make(
        window=12_000,
        policy=CompactionPolicy(keep_recent_messages=4, protected_tool_tokens=600, max_tool_output_tokens=1_400),
    )
    recorder = Recorder(session)
    session.add_user("investigate")
    for n in range(8):
        session.add_assistant(tool_calls=[ToolCall(id=f"c{n}", name="cat", args={"n": n})])
        session.add_tool_result(f"c{n}", "data row\n" * 400, name="cat")
    session.build_request()
    event = recorder.of("context_compacted")[0]
    assert isinstance(event, ContextCompacted)
    assert event.tiers[0] == "clear"
    cleared = [m for m in session.history if m.metadata.get("ctxbudget_cleared")]
    assert cleared
    assert all(m.tool_call_id for m in cleared)  # call ids stay, so pairs stay valid


def test_the_cut_never_separates_parallel_tool_calls_from_their_results() -> None:
    rng = random.Random(7)
    for _ in range(30):
        session = make(window=3_000, policy=CompactionPolicy(keep_recent_messages=rng.randint(1, 6)))
        for n in range(12):
            session.add_user(f"q{n}")
            calls = [ToolCall(id=f"c{n}_{i}", name="t", args={}) for i in range(rng.randint(1, 4))]
            session.add_assistant(tool_calls=calls)
            for call in calls:
                session.add_tool_result(call.id, "r " * rng.randint(1, 80))
            session.add_assistant("ok " * rng.randint(1, 40))
            request = session.build_request()
            assert not find_tool_pair_problems(request.messages)
            assert not find_tool_pair_problems(session.history)


def test_hard_stop_refuses_to_build_and_carries_the_figures() -> None:
    session = make(window=1_000)
    session.pin("x " * 2_000)  # pinned content compaction may not touch, alone over the window
    session.add_user("go on")
    with pytest.raises(ContextOverflowError) as info:
        session.build_request()
    error = info.value
    assert error.max_tokens == 1_000
    assert error.hard_stop_tokens == 950
    assert error.used_tokens > 950
    assert "hard stop" in str(error)
    assert f"{error.used_tokens:,}" in str(error)


def test_a_newest_message_larger_than_the_window_is_an_excerpt_and_the_request_fits() -> None:
    session = make(window=1_000)
    session.add_user("Summarize the export schedule.")
    session.add_assistant("Paste it and I will.")
    text = "The ledger export runs nightly. " * 300  # the latest message alone is over the window
    session.add_user(text)
    request = session.build_request()
    assert request.tokens <= 950
    newest = request.messages[-1]
    assert newest.text.startswith("The ledger export runs nightly.")  # the turn the model is in, as an excerpt
    handle = newest.text.split("full text: ", 1)[1].split(" ", 1)[0]
    assert session.read_archived(handle, limit=None) == text  # nothing lost: archived whole


def test_an_interrupted_reply_is_kept_and_the_next_request_says_it_was_cut_off() -> None:
    session = make()
    session.add_user("write a poem")
    session.add_assistant("Roses are red, vio", interrupted=True)
    messages = session.build_request().messages
    assert messages[-2].state == "interrupted"
    assert messages[-1].text == INTERRUPTED_NOTICE
    session.add_user("go on")
    messages = session.build_request().messages
    assert messages[-3].state == "interrupted"
    assert messages[-2].text == INTERRUPTED_NOTICE
    session.add_assistant("...violets are blue.")
    assert all(m.text != INTERRUPTED_NOTICE for m in session.build_request().messages)


def test_a_broken_history_is_repaired_in_the_request_but_kept_in_the_archive() -> None:
    session = make()
    session.add_user("hi")
    session.add_assistant(tool_calls=[ToolCall(id="a", name="t", args={})])
    session.add_user("never mind")  # the call was never answered
    request = session.build_request()
    assert not find_tool_pair_problems(request.messages)
    assert any(m.tool_call_id == "a" for m in request.messages)


def test_duplicate_message_ids_are_rejected() -> None:
    session = make()
    message = Message(role="user", content="hi")
    session.add(message)
    with pytest.raises(InvalidMessageError, match="already in this session"):
        session.add(message)


def test_sync_extends_cheaply_and_archives_what_a_framework_removed() -> None:
    session = make()
    first = [Message(role="user", content=f"m{n}") for n in range(4)]
    session.sync(first)
    session.sync([*first, Message(role="assistant", content="a")])
    assert len(session.history) == 5
    session.sync(first[2:])
    assert [m.text for m in session.history] == ["m2", "m3"]
    assert {m.text for m in session.originals()} == {"m0", "m1", "m2", "m3", "a"}


def test_a_300_turn_agent_session_in_a_32k_window_runs_offline() -> None:
    session = ContextSession(max_tokens=32_000, counter=COUNTER, system_prompt="You are a coding agent.")
    provider = StrictProvider(max_tokens=32_000, counter=COUNTER, bill_factor=1.02)
    rng = random.Random(300)
    added = 0
    for turn in range(300):
        session.add_user(f"Step {turn}: continue with module_{turn}.py " + "detail " * rng.randint(5, 60))
        calls = [
            ToolCall(id=f"c{turn}_{i}", name="read_file", args={"path": f"m{turn}_{i}.py"})
            for i in range(rng.randint(1, 3))
        ]
        session.add_assistant("Reading.", tool_calls=calls)
        for call in calls:
            session.add_tool_result(call.id, "code line\n" * rng.choice([20, 300, 8_000]), name="read_file")
        request = session.build_request()
        session.record_usage(provider.complete(request.messages, request.tools))
        session.add_assistant(f"Done with module_{turn}. " + "because " * rng.randint(5, 60))
        added += 3 + len(calls)
    assert provider.calls == 300
    assert len(session.originals()) == added
    assert session.goal is not None
    assert session.goal.startswith("Step 0")


def test_system_messages_added_mid_conversation_join_the_leading_system_block() -> None:
    session = make()
    session.add_user("hi")
    note = Message(role="system", content="The user prefers metric units.")
    session.add(note)
    session.add_user("how far is it?")
    messages = session.build_request().messages
    assert [m.role for m in messages[:2]] == ["system", "system"]
    assert messages[1] == note
    assert all(m.role != "system" for m in messages[2:])
    chat(session, 40)
    session.compact()
    assert note in session.build_request().messages[:2]  # never compacted away
    assert note in session.originals()
    restored = ContextSession.restore(session.snapshot().to_json(), counter=COUNTER)
    assert restored.build_request().messages[1] == note


def test_sync_accepts_a_framework_list_that_starts_with_system_messages() -> None:
    session = make()
    system = Message(role="system", content="policy")
    first = [system, Message(role="user", content="a"), Message(role="assistant", content="b")]
    session.sync(first)
    session.sync([*first, Message(role="user", content="c")])
    assert [m.text for m in session.history] == ["a", "b", "c"]
    assert session.build_request().messages[1] == system


def test_reserved_tokens_count_toward_threshold_and_hard_stop() -> None:
    session = make(window=4_000)
    chat(session, 10)
    plain = session.build_request()
    assert plain.compaction is None
    reserved = session.build_request(reserve_tokens=2_800)
    assert reserved.compaction is not None  # the reserve pushed usage over the threshold
    assert reserved.state.used_tokens == reserved.tokens
    assert reserved.tokens - 2_800 < plain.tokens  # the history shrank to make room for the reserve
    with pytest.raises(ContextOverflowError):
        session.build_request(reserve_tokens=5_000)
    with pytest.raises(InvalidPolicyError, match="reserve_tokens"):
        session.build_request(reserve_tokens=-1)


def test_clear_goal_takes_the_goal_from_the_live_history_again() -> None:
    session = make()
    session.add_user("old goal")
    session.sync([Message(role="user", content="new conversation")])
    assert session.goal == "old goal"
    session.clear_goal()
    assert session.goal == "new conversation"


def test_a_summarizer_that_cancels_itself_on_the_sync_path_says_so() -> None:
    session = make(summarizer=ScriptedSummarizer(["cancel"]))
    chat(session, 10)
    assert session.compact().fallback_reason == "summarizer: was cancelled"


def test_a_summary_that_would_cost_more_than_the_span_is_not_applied() -> None:
    session = make(window=100_000)
    session.add_user("hi")
    session.add_assistant("hello")
    session.add_user("bye")
    session.add_assistant("ok")
    before = session.counted_tokens()
    result = session.compact()
    assert result.tiers == ("summarize-skipped",)
    assert session.counted_tokens() == before
    assert session.summary is None
    assert len(session.history) == 4


def test_the_goal_shown_in_the_summary_is_measured_during_compaction() -> None:
    session = make(window=4_000)
    session.add_user("GOAL: " + "port the billing service to Postgres " * 30)
    chat(session, 40)
    request = session.build_request()
    assert request.compaction is not None
    assert request.compaction.after.used_tokens == request.tokens  # what compaction measured is what is sent
    assert "port the billing service" in request.messages[1].text


class ActsWhileSummarizing(ScriptedSummarizer):
    """An async summarizer that changes the session on its first call, as a concurrent request would."""

    def __init__(self, session: ContextSession, action: str) -> None:
        super().__init__()
        self.session = session
        self.action = action
        self.calls = 0

    async def asummarize(self, request: SummaryRequest) -> str:
        self.calls += 1
        if self.calls == 1 and self.action == "append":
            self.session.add_user("arrived during the summary")
        if self.calls == 1 and self.action == "replace":
            self.session.sync(self.session.history[2:])
        return await super().asummarize(request)


def test_async_compaction_keeps_its_summary_when_messages_only_arrive_meanwhile() -> None:
    session = make()
    summarizer = ActsWhileSummarizing(session, "append")
    session.summarizer = summarizer
    chat(session, 10)
    result = asyncio.run(session.acompact())
    assert summarizer.calls == 1  # the paid-for summary is used, not thrown away
    assert result.tier == "summarize"
    assert session.history[-1].text == "arrived during the summary"
    assert len(session.originals()) == 21


def test_async_compaction_recomputes_when_the_history_is_replaced_meanwhile() -> None:
    session = make()
    summarizer = ActsWhileSummarizing(session, "replace")
    session.summarizer = summarizer
    chat(session, 10)
    result = asyncio.run(session.acompact())
    assert summarizer.calls == 2  # the first summary described a history that no longer exists
    assert result.tier == "summarize"
    assert len(session.originals()) == 20


@pytest.mark.parametrize(
    ("action", "error", "field"),
    [
        (lambda s: setattr(s, "tools", [{"name": "x"}]), InvalidMessageError, "tools[0]"),
        (lambda s: setattr(s, "system_prompt", 42), InvalidMessageError, "system_prompt"),
        (lambda s: s.read_archived("ctx://archive/x", offset="a"), InvalidPolicyError, "offset"),
        (lambda s: s.set_usage_floor("10"), InvalidPolicyError, "floor"),
        (lambda s: s.set_usage_floor(True), InvalidPolicyError, "floor"),
        (lambda s: s.set_context(["text"]), InvalidPolicyError, "items[0]"),
    ],
)
def test_setters_and_helpers_raise_typed_errors_naming_the_field(action, error, field) -> None:  # type: ignore[no-untyped-def]
    session = make()
    with pytest.raises(error) as info:
        action(session)
    assert info.value.field == field
    assert field in str(info.value)


def test_the_extractive_summarizer_rejects_a_useless_item_limit() -> None:
    from ctxbudget.compaction.summarize import ExtractiveSummarizer

    with pytest.raises(InvalidPolicyError, match="max_items"):
        ExtractiveSummarizer(max_items=0)


def test_set_threshold_false_turns_auto_compaction_off_and_a_number_back_on() -> None:
    session = make()
    session.set_threshold(False)
    assert session.policy.auto is False
    session.set_threshold(0.7)
    assert session.policy.auto is True
    assert session.policy.threshold == 0.7
    with pytest.raises(InvalidPolicyError, match="threshold"):
        session.set_threshold(True)  # type: ignore[arg-type]


def test_the_extractive_summary_keeps_its_structure_when_one_statement_alone_is_over_budget() -> None:
    from ctxbudget.compaction.summarize import ExtractiveSummarizer

    summarizer = ExtractiveSummarizer(COUNTER)
    statement = "Migrate the billing service to Postgres 16 without downtime. " * 40
    first = summarizer.summarize(SummaryRequest(messages=(Message(role="user", content=statement),), max_tokens=120))
    assert COUNTER.count_text(first) <= 120
    assert first.startswith("## Task\n- Now: Migrate the billing service")  # one request, said 40 times: once
    later = summarizer.summarize(
        SummaryRequest(
            messages=(Message(role="user", content="now also add read replica db-2"),),
            previous_summary=first,
            max_tokens=120,
        )
    )
    assert COUNTER.count_text(later) <= 120
    assert "Now: now also add read replica db-2" in later  # the latest request is the task now
    assert "Asked: Migrate the billing service" in later  # cumulative: the earlier one stays


@pytest.mark.parametrize(
    "build",
    [
        lambda: Message(role="user", content="broken \ud800 text"),
        lambda: Message(role="user", content=[{"type": "text", "text": "\udc00"}]),
        lambda: ToolCall(id="c", name="grep", args={"q": "\ud800"}),
        lambda: Message(role="user", content="ok", metadata={"note": "\ud800"}),
    ],
)
def test_text_that_is_not_valid_unicode_is_rejected_where_it_enters(build) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidMessageError, match="unpaired surrogate"):
        build()
