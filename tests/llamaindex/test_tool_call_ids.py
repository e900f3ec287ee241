"""Tool calls without ids (issue 14 item 7): the ChatMessage sent and its (real or synthesized) result share one id.

LlamaIndex allows ``ToolCallBlock(tool_call_id=None)`` and OpenAI-shaped ``additional_kwargs["tool_calls"]`` entries
without an id; a real provider rejects such a call, and a result that answers no call. The strict fake does too.
"""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget.errors import InvalidMessageError
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock

from llamaindex_ctxbudget import BudgetedMemory, StrictFakeLLM, tool_calls_of


def _block_call(name: str = "grep", call_id: str | None = None) -> ChatMessage:
    return ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs={})])


def _kwargs_call(name: str = "ls", call_id: Any = None) -> ChatMessage:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
    return ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [call]})


def _result(call_id: str | None) -> ChatMessage:
    kwargs = {"tool_call_id": call_id} if call_id is not None else {}
    return ChatMessage(role="tool", content="r", additional_kwargs=kwargs)


def _sent_ids(chats: list[ChatMessage]) -> tuple[list[str | None], list[str | None]]:
    calls: list[str | None] = []
    for chat in chats:
        calls.extend(b.tool_call_id for b in chat.blocks if isinstance(b, ToolCallBlock))
        calls.extend(item.get("id") for item in chat.additional_kwargs.get("tool_calls") or [])
    results = [chat.additional_kwargs.get("tool_call_id") for chat in chats if chat.role.value == "tool"]
    return calls, results


@pytest.mark.parametrize(
    "messages",
    [
        [ChatMessage(role="user", content="q"), _block_call(), _result("call_0_grep")],
        [ChatMessage(role="user", content="q"), _kwargs_call(), _result("call_0_ls")],
        [ChatMessage(role="user", content="q"), _kwargs_call(call_id=""), _result("call_0_ls")],
        [ChatMessage(role="user", content="q"), _result("nobody")],
        [ChatMessage(role="user", content="q"), _block_call(call_id="c1"), _result(None)],
        [ChatMessage(role="user", content="q"), _result(None), ChatMessage(role="user", content="q")],
    ],
    ids=[
        "block-id-none",
        "kwargs-id-none",
        "kwargs-id-empty",
        "result-answers-no-call",
        "result-without-id",
        "lone-result-without-id",
    ],
)
def test_strict_fake_rejects_missing_ids_and_unmatched_results(messages: list[ChatMessage]) -> None:
    with pytest.raises(InvalidMessageError):
        StrictFakeLLM().chat(messages)


@pytest.mark.parametrize("unanswered", [_block_call, _kwargs_call], ids=["block", "kwargs"])
def test_memory_sends_the_id_its_synthesized_result_answers(unanswered: Any) -> None:
    original = unanswered()
    memory = BudgetedMemory.from_defaults(max_tokens=8_000)
    memory.put(ChatMessage(role="user", content="q"))
    memory.put(original)
    memory.put(ChatMessage(role="user", content="next"))
    sent = memory.get()
    calls, results = _sent_ids(sent)
    assert calls == results
    assert all(calls)
    assert tool_calls_of(sent[1]) == tool_calls_of(original)  # what is counted is what is sent
    assert _sent_ids([original])[0] == [None]  # the caller's message is not modified
    StrictFakeLLM().chat(sent)


def test_memory_keeps_an_answered_idless_call_paired() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=8_000)
    memory.put(ChatMessage(role="user", content="q"))
    memory.put(_block_call())
    memory.put(_result("call_0_grep"))  # a result naming the id ctxbudget gives the call
    sent = memory.get()
    assert _sent_ids(sent) == (["call_0_grep"], ["call_0_grep"])
    StrictFakeLLM().chat(sent)
