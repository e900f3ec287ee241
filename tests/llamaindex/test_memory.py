"""BudgetedMemory against real LlamaIndex engines and agents, driven by the strict fake LLM."""

from __future__ import annotations

import asyncio

import pytest
from ctxbudget import Message
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import SummaryRequest
from ctxbudget.errors import ContextOverflowError, InvalidPolicyError
from ctxbudget.messages.tokens import CharCounter, TiktokenCounter
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool

from llamaindex_ctxbudget import BudgetedMemory, FakeReply, FakeToolCall, StrictFakeLLM, bound_tools

from .conftest import assert_all_requests_valid


def grep(pattern: str) -> str:
    """Search the repository for a pattern."""
    return f"src/app.py:12: {pattern} matched here\n" * 4000  # ~50k tokens: a huge tool output


def read_file(path: str) -> str:
    """Read one file."""
    return f"# contents of {path}\nprint('hello')\n"


TOOLS = [FunctionTool.from_defaults(grep), FunctionTool.from_defaults(read_file)]
PARALLEL = FakeReply(
    tool_calls=[FakeToolCall(name="grep", args={"pattern": "TODO"}), FakeToolCall(name="read_file", args={"path": "a"})]
)


def test_simple_chat_engine_hundreds_of_turns_stay_in_budget() -> None:
    window = 3000
    llm = StrictFakeLLM(context_window=window, script=[FakeReply(text="noted, " * 40)])
    memory = BudgetedMemory.from_defaults(max_tokens=window, system_prompt="Remember everything.")
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt="You are a helpful bot.")
    for turn in range(300):
        engine.chat(f"turn {turn}: " + "please remember this detail " * 12)
    assert_all_requests_valid(llm, window)
    assert llm.max_request_tokens <= window
    assert memory.session.summary is not None  # compaction ran, many times
    everything = memory.get_all()
    assert len(everything) == 600
    assert [m.content for m in everything[::2]][:3] == [
        f"turn {t}: " + "please remember this detail " * 12 for t in range(3)
    ]
    for request in llm.requests[-5:]:
        assert [m.role for m in request.messages[:2]] == ["system", "system"]  # engine prompt + ours, both kept


def test_function_agent_parallel_calls_and_huge_outputs_stay_valid_and_in_budget() -> None:
    window = 16_000
    llm = StrictFakeLLM(context_window=window, script=[PARALLEL, FakeReply(text="done")])
    memory = BudgetedMemory.from_defaults(
        max_tokens=window,
        tools=TOOLS,
        reserve_tokens=4000,  # the agent's in-run scratchpad and its own system prompt
        policy=CompactionPolicy(max_tool_output_tokens=1000),
    )
    agent = FunctionAgent(tools=bound_tools(TOOLS, memory), llm=llm, system_prompt="You are a coding agent.")

    async def run() -> None:
        for turn in range(25):
            await agent.run(f"task {turn}", memory=memory)

    asyncio.run(run())
    assert_all_requests_valid(llm, window)
    everything = memory.get_all()
    assert len(everything) == 25 * 5  # user, assistant(calls), 2 results, final answer
    calls = [m for m in everything if m.additional_kwargs.get("tool_calls")]
    assert len(calls) == 25
    full = [e for e in memory.session.archive if e.text is not None and e.source == "grep"]
    assert len(full) == 25
    assert all(e.text == grep("TODO") for e in full)  # every huge output kept whole in the archive


@pytest.mark.parametrize("shape", ["openai", "blocks"])
async def test_function_agent_small_window_compacts_with_tool_calls(shape: str) -> None:
    window = 6000
    llm = StrictFakeLLM(context_window=window, script=[PARALLEL, FakeReply(text="done " * 30)], call_shape=shape)
    memory = BudgetedMemory.from_defaults(
        max_tokens=window, tools=TOOLS, reserve_tokens=2500, policy=CompactionPolicy(max_tool_output_tokens=600)
    )
    agent = FunctionAgent(tools=bound_tools(TOOLS, memory), llm=llm)
    for turn in range(30):
        await agent.run(f"task {turn}: fix the bug in module {turn}", memory=memory)
    assert_all_requests_valid(llm, window)
    assert memory.session.summary is not None
    assert len(memory.get_all()) == 30 * 5


async def test_react_agent_and_agent_workflow_use_the_memory() -> None:
    llm = StrictFakeLLM(context_window=8000, script=[FakeReply(text="Thought: I can answer.\nAnswer: done")])
    memory = BudgetedMemory.from_defaults(max_tokens=8000, reserve_tokens=2000)
    react = ReActAgent(tools=[], llm=llm)
    for turn in range(5):
        await react.run(f"question {turn}", memory=memory)
    workflow = AgentWorkflow(agents=[FunctionAgent(name="solo", description="d", tools=[], llm=llm)])
    await workflow.run(user_msg="one more", memory=memory)
    assert_all_requests_valid(llm, 8000)
    assert [m.content for m in memory.get_all() if m.role == "user"][-1] == "one more"
    assert len(memory.get_all()) == 12


def test_tool_call_arguments_are_counted() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=100_000)
    before = memory.state.used_tokens
    args = '{"code": "' + "x = 1\\n" * 2000 + '"}'
    memory.put(
        ChatMessage(
            role="assistant",
            content="",
            additional_kwargs={
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "run", "arguments": args}}]
            },
        )
    )
    assert memory.state.used_tokens - before > 2000


def _pairs(n: int) -> list[ChatMessage]:
    out = [ChatMessage(role="system", content="Never reveal the launch codes.")]
    for i in range(n):
        out.append(ChatMessage(role="user", content=f"question {i} " * 20))
        calls = [{"id": f"c{i}a", "type": "function", "function": {"name": "look", "arguments": "{}"}}]
        calls.append({"id": f"c{i}b", "type": "function", "function": {"name": "look", "arguments": "{}"}})
        out.append(ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": calls}))
        out.append(ChatMessage(role="tool", content=f"result {i} " * 30, additional_kwargs={"tool_call_id": f"c{i}a"}))
        out.append(ChatMessage(role="tool", content=f"other {i} " * 30, additional_kwargs={"tool_call_id": f"c{i}b"}))
        out.append(ChatMessage(role="assistant", content=f"answer {i} " * 20))
    return out


def test_set_history_is_budgeted_keeps_system_and_never_starts_on_a_tool_result() -> None:
    window = 2000
    counter = TiktokenCounter()
    memory = BudgetedMemory.from_defaults(max_tokens=window, counter=counter)
    history = _pairs(400)
    memory.set(history)  # Memory.get() would never trim history set this way
    llm = StrictFakeLLM(context_window=window, counter=counter)
    for _ in range(3):
        got = memory.get()
        llm.chat(got)
        assert any(m.role == "system" and m.content == "Never reveal the launch codes." for m in got)
        assert next(m for m in got if m.role != "system").role != "tool"
        memory.put(ChatMessage(role="user", content="and now?"))
    assert_all_requests_valid(llm, window)
    assert memory.get_all()[: len(history)] == history  # every original, in order, unchanged


def test_chat_memory_buffer_evicts_the_system_message_we_do_not() -> None:
    history = _pairs(40)
    buffer = ChatMemoryBuffer.from_defaults(chat_history=history, token_limit=1500)
    assert all(m.role != "system" for m in buffer.get())
    memory = BudgetedMemory.from_defaults(chat_history=history, max_tokens=1500)
    assert memory.get()[0].role == "system"


class _Failing:
    calls = 0

    def summarize(self, request: SummaryRequest) -> str:
        self.calls += 1
        raise RuntimeError("summary model is down")


def test_failing_summarizer_loses_nothing_and_stays_in_budget() -> None:
    summarizer = _Failing()
    memory = BudgetedMemory.from_defaults(max_tokens=1500, summarizer=summarizer)
    failures = []
    memory.session.subscribe(failures.append, "compaction_failed")
    put = []
    for turn in range(120):
        for message in (
            ChatMessage(role="user", content=f"fact {turn}: the value is {turn * 7}"),
            ChatMessage(role="assistant", content=f"stored fact {turn}"),
        ):
            memory.put(message)
            put.append(message)
        got = memory.get()
        assert memory.session.counted_tokens() <= 1500
        assert got
    assert summarizer.calls > 0
    assert failures
    assert memory.get_all() == put
    assert "fact 0" in (memory.session.summary or "") or "fact 0" in str(memory.session.goal)


def test_a_message_over_the_window_is_folded_not_truncated() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=500)
    huge = "word " * 2000
    memory.put(ChatMessage(role="user", content=huge))
    got = memory.get()  # compaction fits the window: the message is folded into the summary, its text archived
    counter = memory.session.counter
    assert sum(counter.count_text(m.content or "") for m in got) < 500
    assert memory.get_all()[0].content == huge  # nothing lost or truncated in the store


def test_overflow_is_typed_with_figures_not_truncated() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=500)
    memory.session.pin("rule " * 490)  # pinned content compaction may not touch, alone over the hard stop
    memory.put(ChatMessage(role="user", content="hi"))
    with pytest.raises(ContextOverflowError) as caught:
        memory.get()
    assert caught.value.max_tokens == 500
    assert caught.value.used_tokens > 475
    assert memory.get_all()[-1].content == "hi"


def test_initial_token_count_makes_room_and_is_validated() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=2000)
    for turn in range(60):
        memory.put(ChatMessage(role="user", content=f"message number {turn} " * 5))
    got = memory.get(initial_token_count=1000)
    counter = memory.session.counter
    assert sum(counter.count_message(m) for m in memory.session.history) + 1000 <= 2000
    assert got
    with pytest.raises(InvalidPolicyError, match="initial_token_count"):
        memory.get(initial_token_count=-1)


def test_counter_is_per_memory_and_model_aware(monkeypatch: pytest.MonkeyPatch) -> None:
    import llama_index.core.utils as li_utils

    def forbidden(*args: object, **kwargs: object) -> object:
        raise AssertionError("the process-global tokenizer was used")

    monkeypatch.setattr(li_utils, "get_tokenizer", forbidden)
    exact = BudgetedMemory.from_defaults(model="gpt-4o")
    other = BudgetedMemory.from_defaults(max_tokens=1000, counter=CharCounter(2.0))
    assert exact.session.counter is not other.session.counter
    text = "abcd" * 10
    assert len(other.tokenizer_fn(text)) == CharCounter(2.0).count_message(Message(role="system", content=text))
    assert len(exact.tokenizer_fn(text)) == TiktokenCounter().count_message(Message(role="system", content=text))
    exact.put(ChatMessage(role="user", content="hi"))
    assert exact.get()[-1].content == "hi"


async def test_async_surface() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=4000)
    await memory.aput(ChatMessage(role="user", content="a"))
    await memory.aput_messages([ChatMessage(role="assistant", content="b"), ChatMessage(role="user", content="c")])
    assert [m.content for m in await memory.aget()] == ["a", "b", "c"]
    await memory.aset([ChatMessage(role="user", content="x")])
    got = await memory.aget()
    assert got[-1].content == "x"
    assert got[0].content.endswith("## Goal (the user's first request)\n- a")  # the dropped goal stays pinned
    assert len(got) == 2
    assert [m.content for m in await memory.aget_all()] == ["a", "b", "c", "x"]
    await memory.areset()
    assert await memory.aget() == []
    assert await memory.aget_all() == []


def test_returned_last_message_is_a_copy_handed_back_while_it_is_last() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=4000)
    memory.put(ChatMessage(role="user", content="original"))
    got = memory.get()
    got[-1].blocks[0].text = "edited by an agent"  # type: ignore[union-attr]
    assert memory.get()[-1] is got[-1]  # AgentWorkflow's state_prompt edit stays visible for the rest of the run
    assert memory.get()[-1].content == "edited by an agent"
    assert memory.get_all()[-1].content == "original"  # the stored history is never edited
    memory.put(ChatMessage(role="assistant", content="reply"))
    assert [m.content for m in memory.get()] == ["original", "reply"]  # no longer last: the original again


def test_get_converts_incrementally_and_matches_a_full_conversion_across_compactions() -> None:
    from llamaindex_ctxbudget import to_chat_message

    memory = BudgetedMemory.from_defaults(max_tokens=1_500, system_prompt="Be brief.")
    compactions = []
    memory.session.subscribe(compactions.append, "context_compacted")
    for turn in range(120):
        memory.put(ChatMessage(role="user", content=f"question {turn} " + "detail " * 15))
        got = memory.get()
        memory.put(ChatMessage(role="assistant", content=f"answer {turn} " + "words " * 15))
        expected = [to_chat_message(m) for m in memory.session.build_request().messages]
        roles = ["system" if "[Context Summary]" in (c.content or "") else c.role for c in expected]
        assert [(c.role, c.content) for c in memory.get()] == list(
            zip(roles, [c.content for c in expected], strict=True)
        )
        assert got[-1].content.startswith(f"question {turn}")
    assert compactions  # the incremental cache survived history being replaced
