"""BudgetedLLM (issue 13 items 6, 7): one long agent run stays inside the window; the workflow state is always seen.

A FunctionAgent keeps the current run's tool calls and results in its scratchpad, outside the memory; only the
LLM wrapper sees the whole request. The strict fake LLM refuses over-window requests and orphaned tool pairs as a
provider does, and reports usage.
"""

from __future__ import annotations

import pytest
from ctxbudget.errors import ContextOverflowError
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool

from llamaindex_ctxbudget import (
    READ_TOOL_NAME,
    BudgetedLLM,
    BudgetedMemory,
    FakeReply,
    FakeToolCall,
    StrictFakeLLM,
    archive_tools,
    from_chat_message,
)

from .conftest import assert_all_requests_valid

WINDOW = 6_000
ITERATIONS = 40


def cat(path: str) -> str:
    """Print a source file (100 lines)."""
    return "\n".join(
        f"{path}:{line}: def handler_{line}(event): return process(event, retries={line})" for line in range(100)
    )


def _script(iterations: int = ITERATIONS) -> list[FakeReply]:
    calls = [FakeReply(tool_calls=[FakeToolCall(name="cat", args={"path": f"src/m{i}.py"})]) for i in range(iterations)]
    return [*calls, FakeReply(text="All modules read.")]


async def test_a_40_iteration_function_agent_run_never_exceeds_a_6000_token_window() -> None:
    llm = StrictFakeLLM(context_window=WINDOW, script=_script())
    memory = BudgetedMemory.from_defaults(max_tokens=WINDOW)
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(cat)], llm=BudgetedLLM(llm, memory=memory))
    result = await agent.run("Read every module.", memory=memory, max_iterations=100)
    assert str(result) == "All modules read."
    assert len(llm.requests) == ITERATIONS + 1
    assert_all_requests_valid(llm, WINDOW)
    assert max(r.tokens for r in llm.requests) <= int(0.95 * WINDOW)  # the hard stop, by the provider's own count
    newest = llm.requests[-1].messages
    assert any(m.role == "tool" and "src/m39.py:99:" in m.text for m in newest)  # the latest result is whole
    assert len(memory.get_all()) == 1 + 2 * ITERATIONS + 1  # the run's scratchpad reached the memory, nothing lost


async def test_without_the_wrapper_the_same_run_overflows() -> None:
    """The control: the memory alone never sees the scratchpad, so the provider refuses a request mid-run."""
    llm = StrictFakeLLM(context_window=WINDOW, script=_script())
    memory = BudgetedMemory.from_defaults(max_tokens=WINDOW)
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(cat)], llm=llm)
    with pytest.raises(ContextOverflowError):
        await agent.run("Read every module.", memory=memory, max_iterations=100)


async def test_what_a_call_compacts_is_readable_through_the_memorys_archive_tools() -> None:
    llm = StrictFakeLLM(context_window=WINDOW, script=_script(25))
    memory = BudgetedMemory.from_defaults(max_tokens=WINDOW)
    budgeted = BudgetedLLM(llm, memory=memory)
    tools = [FunctionTool.from_defaults(cat), *archive_tools(memory)]
    await FunctionAgent(tools=tools, llm=budgeted).run("Read every module.", memory=memory, max_iterations=100)
    cleared = [e for e in memory.session.archive.entries() if e.message is not None and "src/m0.py:0:" in e.full_text]
    assert cleared  # the first output left the prompt mid-run and its original is in the memory's archive
    read = next(t for t in archive_tools(memory) if t.metadata.name == READ_TOOL_NAME)
    assert memory.session.read_archived(cleared[0].handle, limit=None) == cat("src/m0.py")
    assert str(read.call(handle=cleared[0].handle)).startswith("src/m0.py:0: def handler_0")
    assert budgeted.session.state.used_tokens <= WINDOW


async def test_usage_reported_by_the_provider_calibrates() -> None:
    llm = StrictFakeLLM(context_window=WINDOW, script=_script(3))
    memory = BudgetedMemory.from_defaults(max_tokens=WINDOW)
    budgeted = BudgetedLLM(llm, memory=memory)
    await FunctionAgent(tools=[FunctionTool.from_defaults(cat)], llm=budgeted).run("Read.", memory=memory)
    assert budgeted.session.tracker.last_reported == llm.requests[-1].tokens


def test_plain_chat_is_fitted_and_overflow_is_a_value_error() -> None:
    llm = StrictFakeLLM(context_window=2_000)
    budgeted = BudgetedLLM(llm, max_tokens=2_000)
    history = [ChatMessage(role="system", content="Be brief.")]
    for turn in range(60):
        history.append(ChatMessage(role="user", content=f"question {turn} " + "detail " * 30))
        history.append(budgeted.chat(history).message)
    assert max(r.tokens for r in llm.requests) <= 2_000
    assert all(r.messages[0].text == "Be brief." for r in llm.requests)
    with pytest.raises(ValueError, match="over the hard stop"):
        budgeted.chat([ChatMessage(role="system", content="x " * 3_000), ChatMessage(role="user", content="hi")])


# -- 6. AgentWorkflow's state_prompt on every model call --------------------------------------------------------
STATE = {"ticket": "T-4821", "stage": "triage"}


def lookup(key: str) -> str:
    """Look a key up."""
    return f"{key}: found"


def _lookups(iterations: int) -> list[FakeReply]:
    calls = [FakeReply(tool_calls=[FakeToolCall(name="lookup", args={"key": f"k{i}"})]) for i in range(iterations)]
    return [*calls, FakeReply(text="Triaged.")]


def _memory(kind: str) -> ChatMemoryBuffer | BudgetedMemory:
    if kind == "ChatMemoryBuffer":
        return ChatMemoryBuffer.from_defaults(token_limit=WINDOW)
    return BudgetedMemory.from_defaults(max_tokens=WINDOW)


@pytest.mark.parametrize("kind", ["ChatMemoryBuffer", "BudgetedMemory", "BudgetedMemory+BudgetedLLM"])
async def test_agent_workflow_state_is_seen_on_every_model_call(kind: str) -> None:
    llm = StrictFakeLLM(context_window=WINDOW, script=_lookups(5))
    memory = _memory(kind)
    model = BudgetedLLM(llm, memory=memory) if kind.endswith("BudgetedLLM") else llm
    agent = FunctionAgent(name="triager", description="Triage.", tools=[FunctionTool.from_defaults(lookup)], llm=model)
    workflow = AgentWorkflow(agents=[agent], initial_state=STATE)
    for run in range(2):
        await workflow.run(user_msg=f"run {run}: read the modules", memory=memory, max_iterations=100)
    assert len(llm.requests) == 12
    for request in llm.requests:
        last_user = [m for m in request.messages if m.role == "user"][-1]
        assert "T-4821" in last_user.text, last_user.text
    if isinstance(memory, BudgetedMemory):
        assert all("T-4821" not in (m.content or "") for m in memory.get_all())  # the stored history is clean


async def test_wrapping_upstreams_mock_function_calling_llm_keeps_its_tool_selections() -> None:
    """The wrapped LLM's own reading of tool calls is used (ToolSelection objects in additional_kwargs)."""
    seen: list[list[ChatMessage]] = []

    def respond(messages: list[ChatMessage], **kwargs: object) -> ChatMessage:
        seen.append(list(messages))
        if len(seen) <= 12:
            call = ToolSelection(tool_id=f"sel-{len(seen)}", tool_name="cat", tool_kwargs={"path": f"m{len(seen)}.py"})
            return ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [call]})
        return ChatMessage(role="assistant", content="done")

    memory = BudgetedMemory.from_defaults(max_tokens=3_000)
    llm = BudgetedLLM(MockFunctionCallingLLM(response_generator=respond), memory=memory)
    result = await FunctionAgent(tools=[FunctionTool.from_defaults(cat)], llm=llm).run("Read.", memory=memory)
    assert str(result) == "done"
    assert len(seen) == 13
    counter = memory.session.counter
    for messages in seen:
        assert sum(counter.count_message(from_chat_message(m)) for m in messages) <= 3_000
        results = [m.additional_kwargs["tool_call_id"] for m in messages if m.role.value == "tool"]
        assert all(r.startswith("sel-") for r in results)
