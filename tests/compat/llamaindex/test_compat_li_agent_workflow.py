"""Ports of llama-index-core ``tests/agent/workflow/test_single_agent_workflow.py`` and
``test_multi_agent_workflow.py``: the cases that hand an agent a memory (and the state case), run with
``ChatMemoryBuffer`` and with ``BudgetedMemory``.

Upstream builds ``ChatMemoryBuffer.from_defaults()``, whose window is an implicit 3,000 tokens; ctxbudget never
guesses a window, so ours is given that same figure explicitly (``token_limit=3000``). The LLM is LlamaIndex's own
``MockFunctionCallingLLM`` with upstream's scripted responses (``ToolSelection`` objects in ``additional_kwargs``).
``test_early_stopping_method_generate_includes_tool_results`` runs on the agent's default memory upstream; here each
memory is passed to ``run`` (the framework's is the very memory the agent would have built). No
``from __future__ import annotations`` here: FunctionTool finds the ``Context`` parameter by its evaluated annotation.
"""

from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentInput, AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.memory.chat_memory_buffer import DEFAULT_TOKEN_LIMIT
from llama_index.core.tools import FunctionTool
from workflows import Context

from llamaindex_ctxbudget import BudgetedMemory

from .conftest import BOTH, FRAMEWORK, installed_fails

EARLY_STOP = "0.14's _generate_early_stopping_response reads memory.aget() only, without the run's scratchpad"


def memory_for(impl: str) -> ChatMemoryBuffer | BudgetedMemory:
    if impl == FRAMEWORK:
        return ChatMemoryBuffer.from_defaults()
    return BudgetedMemory.from_defaults(token_limit=DEFAULT_TOKEN_LIMIT)


def _response_generator_from_list(responses: list[ChatMessage]) -> Any:
    """Helper to create a response generator from a list of responses."""
    index = 0

    def generator(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        nonlocal index
        if not responses:
            return ChatMessage(role=MessageRole.ASSISTANT, content=None)
        msg = responses[index]
        index = (index + 1) % len(responses)
        return msg

    return generator


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def subtract(a: int, b: int) -> int:
    """Subtract two numbers."""
    return a - b


def _calculator(responses: list[str]) -> ReActAgent:
    return ReActAgent(
        name="calculator",
        description="Performs basic arithmetic operations",
        system_prompt="You are a calculator assistant.",
        tools=[FunctionTool.from_defaults(fn=add), FunctionTool.from_defaults(fn=subtract)],
        llm=MockFunctionCallingLLM(
            response_generator=_response_generator_from_list(
                [ChatMessage(role=MessageRole.ASSISTANT, content=text) for text in responses]
            )
        ),
    )


@pytest.fixture
def calculator_agent() -> ReActAgent:
    return _calculator(
        [
            'Thought: I need to add these numbers\nAction: add\nAction Input: {"a": 5, "b": 3}\n',
            r"Thought: The result is 8\Answer: The sum is 8",
        ]
    )


@pytest.fixture
def retry_calculator_agent() -> ReActAgent:
    return _calculator(
        [
            'Thought: I need to add these numbers\nAction: add\n{"a": 5 "b": 3}\n',
            'Thought: I need to add these numbers\nAction: add\nAction Input: {"a": 5, "b": 3}\n',
            r"Thought: The result is 8\nAnswer: The sum is 8",
        ]
    )


@pytest.fixture
def retry_empty_calculator_agent() -> ReActAgent:
    return _calculator(
        [
            "",
            'Thought: I need to add these numbers\nAction: add\nAction Input: {"a": 7, "b": 23}\n',
            r"Thought: The result is 30\nAnswer: The sum is 30",
        ]
    )


@pytest.mark.parametrize("impl", BOTH)
async def test_empty_calculator_agent(impl: str, retry_empty_calculator_agent: ReActAgent) -> None:
    """Test agent for empty messages"""
    memory = memory_for(impl)
    handler = retry_empty_calculator_agent.run(user_msg="Can you add 7 and 23?", memory=memory)
    contains_error_message = False
    async for event in handler.stream_events():
        if isinstance(event, AgentInput) and "FAILURE: Your previous response was empty" in event.input[-1].content:
            contains_error_message = True

    assert contains_error_message

    response = await handler

    assert "30" in str(response.response)


@pytest.mark.parametrize("impl", BOTH)
async def test_single_react_agent(impl: str, calculator_agent: ReActAgent) -> None:
    """Verify execution of basic ReAct single agent."""
    memory = memory_for(impl)
    handler = calculator_agent.run(user_msg="Can you add 5 and 3?", memory=memory)

    events = []
    async for event in handler.stream_events():
        events.append(event)

    response = await handler

    assert "8" in str(response.response)


@pytest.mark.parametrize("impl", BOTH)
async def test_single_react_agent_retry(impl: str, retry_calculator_agent: ReActAgent) -> None:
    """Verify execution of basic ReAct single agent with retry due to a output parsing error."""
    memory = memory_for(impl)
    handler = retry_calculator_agent.run(user_msg="Can you add 5 and 3?", memory=memory)

    events = []
    contains_error_message = False
    async for event in handler.stream_events():
        events.append(event)
        if isinstance(event, AgentInput) and "Error while parsing the output" in event.input[-1].content:
            contains_error_message = True

    assert contains_error_message

    response = await handler

    assert "8" in str(response.response)


@pytest.mark.parametrize("impl", installed_fails(EARLY_STOP))
async def test_early_stopping_method_generate_includes_tool_results(impl: str) -> None:
    """The generated final response must see the observations gathered during the run."""
    tool_output = "SECRET_TOOL_OUTPUT_12345"
    llm_inputs: list[list[ChatMessage]] = []
    num_calls = 0

    def get_info() -> str:
        """Get some info."""
        return tool_output

    def generator(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        nonlocal num_calls
        num_calls += 1
        llm_inputs.append(list(messages))
        return ChatMessage(
            role=MessageRole.ASSISTANT,
            content="calling tool",
            additional_kwargs={
                "tool_calls": [ToolSelection(tool_id=f"call_{num_calls}", tool_name="get_info", tool_kwargs={})]
            },
        )

    agent = FunctionAgent(
        name="agent",
        description="test",
        tools=[get_info],
        llm=MockFunctionCallingLLM(response_generator=generator),
        early_stopping_method="generate",
    )

    _ = await agent.run(user_msg="please gather info", max_iterations=2, memory=memory_for(impl))

    early_stopping_input = llm_inputs[-1]
    assert any(
        message.role == MessageRole.SYSTEM and "maximum number of iterations" in (message.content or "")
        for message in early_stopping_input
    ), "the last LLM call was not the early stopping one"
    assert any(tool_output in (message.content or "") for message in early_stopping_input), (
        "the early stopping response was generated without the tool results"
    )

    answered = {
        message.additional_kwargs.get("tool_call_id")
        for message in early_stopping_input
        if message.role == MessageRole.TOOL
    }
    requested = [
        tool_call.tool_id
        for message in early_stopping_input
        for tool_call in message.additional_kwargs.get("tool_calls", [])
    ]
    assert set(requested) <= answered, "the early stopping response was generated with a tool call that has no result"


@pytest.mark.parametrize("impl", BOTH)
async def test_function_agent_with_mock_function_calling_llm(impl: str) -> None:
    """Test that FunctionAgent works with MockFunctionCallingLLM."""

    def multiply(a: int, b: int) -> int:
        """Multiply two numbers."""
        return a * b

    # Create a MockFunctionCallingLLM that will return a simple response
    llm = MockFunctionCallingLLM(max_tokens=200)

    agent = FunctionAgent(
        name="test_agent",
        description="A test agent",
        system_prompt="You are a helpful assistant.",
        tools=[FunctionTool.from_defaults(fn=multiply)],
        llm=llm,
    )

    memory = memory_for(impl)
    handler = agent.run(user_msg="Hello, can you help me?", memory=memory)

    events = []
    async for event in handler.stream_events():
        events.append(event)

    response = await handler

    # Verify the agent ran successfully with MockFunctionCallingLLM
    assert response.response is not None
    # Verify that we got some events during execution
    assert len(events) > 0


# -- tests/agent/workflow/test_multi_agent_workflow.py: the cases with a memory, and the state case -----------------
@pytest.fixture
def retriever_agent() -> FunctionAgent:
    return FunctionAgent(
        name="retriever",
        description="Manages data retrieval",
        system_prompt="You are a retrieval assistant.",
        llm=MockFunctionCallingLLM(
            response_generator=_response_generator_from_list(
                [
                    ChatMessage(
                        role=MessageRole.ASSISTANT,
                        content="Let me help you with that calculation. I'll hand this off to the calculator.",
                        additional_kwargs={
                            "tool_calls": [
                                ToolSelection(
                                    tool_id="one",
                                    tool_name="handoff",
                                    tool_kwargs={
                                        "to_agent": "calculator",
                                        "reason": "This requires arithmetic operations.",
                                    },
                                )
                            ]
                        },
                    ),
                ]
            )
        ),
    )


@pytest.fixture
def empty_calculator_agent() -> ReActAgent:
    return ReActAgent(
        name="calculator",
        description="Performs basic arithmetic operations",
        system_prompt="You are a calculator assistant.",
        tools=[FunctionTool.from_defaults(fn=add), FunctionTool.from_defaults(fn=subtract)],
        llm=MockFunctionCallingLLM(response_generator=_response_generator_from_list([])),
    )


@pytest.fixture
def empty_retriever_agent() -> FunctionAgent:
    return FunctionAgent(
        name="retriever",
        description="Manages data retrieval",
        system_prompt="You are a retrieval assistant.",
        llm=MockFunctionCallingLLM(response_generator=_response_generator_from_list([])),
    )


@pytest.mark.parametrize("impl", BOTH)
async def test_workflow_execution(impl: str, calculator_agent: ReActAgent, retriever_agent: FunctionAgent) -> None:
    """Test basic workflow execution with agent handoff."""
    workflow = AgentWorkflow(agents=[calculator_agent, retriever_agent], root_agent="retriever")

    memory = memory_for(impl)
    handler = workflow.run(user_msg="Can you add 5 and 3?", memory=memory)

    events = []
    async for event in handler.stream_events():
        events.append(event)

    response = await handler

    # Verify we got events indicating handoff and calculation
    assert any(ev.current_agent_name == "retriever" if hasattr(ev, "current_agent_name") else False for ev in events)
    assert any(ev.current_agent_name == "calculator" if hasattr(ev, "current_agent_name") else False for ev in events)
    assert "8" in str(response.response)


@pytest.mark.parametrize("impl", BOTH)
async def test_workflow_execution_empty(
    impl: str, empty_calculator_agent: ReActAgent, retriever_agent: FunctionAgent
) -> None:
    """Test basic workflow execution with agent handoff."""
    workflow = AgentWorkflow(agents=[empty_calculator_agent, retriever_agent], root_agent="retriever")

    memory = memory_for(impl)
    handler = workflow.run(user_msg="Can you add 5 and 3?", memory=memory)

    contains_error_message = False
    async for event in handler.stream_events():
        if isinstance(event, AgentInput) and "FAILURE: Your previous response was empty" in event.input[-1].content:
            contains_error_message = True

    assert contains_error_message


@pytest.mark.parametrize("impl", BOTH)
async def test_workflow_handoff_empty(
    impl: str, calculator_agent: ReActAgent, empty_retriever_agent: FunctionAgent
) -> None:
    """Test basic workflow execution with agent handoff."""
    workflow = AgentWorkflow(agents=[calculator_agent, empty_retriever_agent], root_agent="retriever")

    memory = memory_for(impl)
    handler = workflow.run(user_msg="Can you add 5 and 3?", memory=memory)

    events = []
    async for event in handler.stream_events():
        events.append(event)

    response = await handler
    assert response.response.content is None


@pytest.mark.parametrize("impl", BOTH)
async def test_workflow_with_state(impl: str) -> None:
    """Test workflow with state management (upstream runs it on the default memory; each memory is passed here)."""

    async def modify_state(random_arg: str, ctx_val: Context) -> str:
        state = await ctx_val.store.get("state")
        state["counter"] += 1
        await ctx_val.store.set("state", state)
        return f"State updated to {state}"

    agent = FunctionAgent(
        name="agent",
        description="test",
        tools=[modify_state],
        llm=MockFunctionCallingLLM(
            response_generator=_response_generator_from_list(
                [
                    ChatMessage(
                        role=MessageRole.ASSISTANT,
                        content="handing off",
                        additional_kwargs={
                            "tool_calls": [
                                ToolSelection(
                                    tool_id="one", tool_name="modify_state", tool_kwargs={"random_arg": "hello"}
                                )
                            ]
                        },
                    ),
                    ChatMessage(role=MessageRole.ASSISTANT, content="Current state processed"),
                ]
            )
        ),
    )

    workflow = AgentWorkflow(
        agents=[agent],
        initial_state={"counter": 0},
        state_prompt="Current state: {state}. User message: {msg}",
    )

    handler = workflow.run(user_msg="test", memory=memory_for(impl))
    async for ev in handler.stream_events():
        if isinstance(ev, AgentInput):
            for msg in ev.input:
                if msg.role == MessageRole.USER:
                    # ensure we've only formatted the input once
                    assert len(msg.content.split("Current state:")) == 2

    response = await handler
    assert response is not None

    state = await handler.ctx.store.get("state")
    assert state["counter"] == 1
