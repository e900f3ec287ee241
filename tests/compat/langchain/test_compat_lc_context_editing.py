"""Ports of LangChain's ``ContextEditingMiddleware`` tests, run on it and on ``ContextBudgetMiddleware``.

Upstream (langchain 1.5.2): ``libs/langchain_v1/tests/unit_tests/agents/middleware/implementations/
test_context_editing.py``: ``wrap_model_call`` called directly with a ``ModelRequest`` and a handler, sync and async.
The installed middleware edits a deep copy and hands it to the handler (the request given is left as it was), so
the assertions read the messages the handler received. The ``ClearToolUsesEdit`` options map onto ours: ``trigger``
is where our compaction starts and what it aims for (threshold and target, in a 100,000-token window, since the fake
model has none), ``exclude_tools``, ``clear_tool_inputs`` and ``placeholder`` are ours too. Not ported: the
``trigger``/``keep`` tuple and list forms, which the installed ``ClearToolUsesEdit`` does not take (ints only).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from langchain.agents.middleware.context_editing import ClearToolUsesEdit, ContextEditingMiddleware
from langchain.agents.middleware.types import AgentState, ModelRequest
from langchain_core.language_models.fake_chat_models import FakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, MessageLikeRepresentation, ToolMessage
from langgraph.runtime import Runtime

from langchain_ctxbudget import ContextBudgetMiddleware

from .conftest import impls

SMALL = (
    "budget semantics: a tool output is cleared only when it is longer than the marker replacing it (these are a "
    "few dozen tokens), so ours summarizes the older turns instead"
)
SMALL_FAILS = (AssertionError, IndexError)  # an expected message missing (summarized) or not cleared


WINDOW = 100_000


class _TokenCountingChatModel(FakeChatModel):
    """Fake chat model that counts tokens deterministically for tests."""

    def get_num_tokens_from_messages(
        self,
        messages: list[MessageLikeRepresentation],
        tools: Iterable[Any] | None = None,
    ) -> int:
        return sum(_count_message_tokens(message) for message in messages)


def _count_message_tokens(message: MessageLikeRepresentation) -> int:
    if isinstance(message, (AIMessage, ToolMessage)):
        return _count_content(message.content)
    if isinstance(message, str):
        return len(message)
    return len(str(message))


def _count_content(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(_count_content(block) for block in content)
    return len(str(content))


def _make_state_and_request(messages: list[AIMessage | ToolMessage]) -> tuple[AgentState[Any], ModelRequest[Any]]:
    conversation: list[Any] = list(messages)
    state = cast("AgentState[Any]", {"messages": conversation})
    request = ModelRequest(
        model=_TokenCountingChatModel(),
        system_prompt=None,
        messages=conversation,
        tool_choice=None,
        tools=[],
        response_format=None,
        state=state,
        runtime=cast("Runtime[Any]", object()),
        model_settings={},
    )
    return state, request


def _middleware(impl: str, edit: ClearToolUsesEdit, **kwargs: Any) -> Any:
    if impl == "langchain":
        return ContextEditingMiddleware(edits=[edit], **kwargs)
    fraction = edit.trigger / WINDOW  # compaction starts (and aims) at the trigger, in a window with room
    return ContextBudgetMiddleware(
        max_tokens=WINDOW,
        policy=CompactionPolicy(threshold=fraction, target=fraction),
        exclude_tools=edit.exclude_tools,
        clear_tool_inputs=edit.clear_tool_inputs,
        placeholder=edit.placeholder,
        read_back_tool=False,
    )


class _Capture:
    def __init__(self) -> None:
        self.messages: list[BaseMessage] = []

    def __call__(self, req: ModelRequest[Any]) -> AIMessage:
        self.messages = list(req.messages)
        return AIMessage(content="mock response")

    async def acall(self, req: ModelRequest[Any]) -> AIMessage:
        return self(req)


def _search_call(tool_call_id: str, args: dict[str, Any] | None = None) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"id": tool_call_id, "name": "search", "args": args or {}}])


@pytest.mark.parametrize("impl", impls())
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_no_edit_when_below_trigger(impl: str, asynchronous: bool) -> None:
    tool_call_id = "call-1"
    state, request = _make_state_and_request(
        [_search_call(tool_call_id), ToolMessage(content="12345", tool_call_id=tool_call_id)]
    )
    middleware = _middleware(impl, ClearToolUsesEdit(trigger=50))
    capture = _Capture()
    if asynchronous:
        await middleware.awrap_model_call(request, capture.acall)
    else:
        middleware.wrap_model_call(request, capture)
    assert capture.messages[0].content == ""
    assert capture.messages[1].content == "12345"
    assert state["messages"] == request.messages


@pytest.mark.parametrize("impl", impls(SMALL, SMALL_FAILS))
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_clear_tool_outputs_and_inputs(impl: str, asynchronous: bool) -> None:
    tool_call_id = "call-2"
    ai_message = AIMessage(
        content=[{"type": "tool_call", "id": tool_call_id, "name": "search", "args": {"query": "foo"}}],
        tool_calls=[{"id": tool_call_id, "name": "search", "args": {"query": "foo"}}],
    )
    tool_message = ToolMessage(content="x" * 200, tool_call_id=tool_call_id)
    state, request = _make_state_and_request([ai_message, tool_message])
    edit = ClearToolUsesEdit(
        trigger=50, clear_at_least=10, clear_tool_inputs=True, keep=0, placeholder="[cleared output]"
    )
    middleware = _middleware(impl, edit)
    capture = _Capture()
    if asynchronous:
        await middleware.awrap_model_call(request, capture.acall)
    else:
        middleware.wrap_model_call(request, capture)

    cleared_ai, cleared_tool = capture.messages[0], capture.messages[1]
    assert isinstance(cleared_tool, ToolMessage)
    assert cleared_tool.content == "[cleared output]"
    assert cleared_tool.response_metadata["context_editing"]["cleared"] is True
    assert isinstance(cleared_ai, AIMessage)
    assert cleared_ai.tool_calls[0]["args"] == {}
    context_meta = cleared_ai.response_metadata.get("context_editing")
    assert context_meta is not None
    assert context_meta["cleared_tool_inputs"] == [tool_call_id]
    assert state["messages"] == request.messages


@pytest.mark.parametrize("impl", impls(SMALL, SMALL_FAILS))
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_respects_keep_last_tool_results(impl: str, asynchronous: bool) -> None:
    conversation: list[AIMessage | ToolMessage] = []
    for call_id, text in [
        ("call-a", "tool-output-a" * 5),
        ("call-b", "tool-output-b" * 5),
        ("call-c", "tool-output-c" * 5),
    ]:
        conversation.append(
            AIMessage(content="", tool_calls=[{"id": call_id, "name": "tool", "args": {"input": call_id}}])
        )
        conversation.append(ToolMessage(content=text, tool_call_id=call_id))
    _, request = _make_state_and_request(conversation)
    middleware = (
        _middleware(impl, ClearToolUsesEdit(trigger=50, keep=1, placeholder="[cleared]"), token_count_method="model")
        if impl == "langchain"
        else _middleware(impl, ClearToolUsesEdit(trigger=50, keep=1, placeholder="[cleared]"))
    )
    capture = _Capture()
    if asynchronous:
        await middleware.awrap_model_call(request, capture.acall)
    else:
        middleware.wrap_model_call(request, capture)
    cleared_messages = [m for m in capture.messages if isinstance(m, ToolMessage) and m.content == "[cleared]"]
    assert len(cleared_messages) == 2
    assert isinstance(capture.messages[-1], ToolMessage)
    assert capture.messages[-1].content != "[cleared]"


@pytest.mark.parametrize("impl", impls(SMALL, SMALL_FAILS))
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_exclude_tools_prevents_clearing(impl: str, asynchronous: bool) -> None:
    search_call, calc_call = "call-search", "call-calc"
    _, request = _make_state_and_request(
        [
            _search_call(search_call, {"query": "foo"}),
            ToolMessage(content="search-results" * 20, tool_call_id=search_call),
            AIMessage(content="", tool_calls=[{"id": calc_call, "name": "calculator", "args": {"a": 1, "b": 2}}]),
            ToolMessage(content="42", tool_call_id=calc_call),
        ]
    )
    edit = ClearToolUsesEdit(trigger=50, clear_at_least=10, keep=0, exclude_tools=("search",), placeholder="[cleared]")
    middleware = _middleware(impl, edit)
    capture = _Capture()
    if asynchronous:
        await middleware.awrap_model_call(request, capture.acall)
    else:
        middleware.wrap_model_call(request, capture)
    search_tool, calc_tool = capture.messages[1], capture.messages[3]
    assert isinstance(search_tool, ToolMessage)
    assert search_tool.content == "search-results" * 20
    assert isinstance(calc_tool, ToolMessage)
    assert calc_tool.content == "[cleared]"
