"""Tool calls without ids (issue 14 item 7): the ChatMessage sent and its (real or synthesized) result share one id.

LlamaIndex allows ``ToolCallBlock(tool_call_id=None)`` and OpenAI-shaped ``additional_kwargs["tool_calls"]`` entries
without an id; a real provider rejects such a call, and a result that answers no call. The strict fake does too.
"""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget.errors import InvalidMessageError
from hypothesis import given, settings
from hypothesis import strategies as st
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


@pytest.mark.parametrize("call_id", [["x"], 5, {"id": "x"}, ""], ids=["list", "int", "dict", "empty"])
def test_a_result_whose_id_is_not_a_string_is_never_sent(call_id: Any) -> None:
    """Issue 26 finding 6: like a string id that no call has, it is kept (chat store) but never sent."""
    memory = BudgetedMemory.from_defaults(max_tokens=8_000)
    stray = ChatMessage(role="tool", content="stray output", additional_kwargs={"tool_call_id": call_id})
    memory.put(ChatMessage(role="user", content="q"))
    memory.put(stray)
    memory.put(ChatMessage(role="user", content="next"))
    sent = memory.get()
    assert [chat.role.value for chat in sent] == ["user", "user"]
    assert stray in memory.get_all()
    StrictFakeLLM().chat(sent)


@pytest.mark.parametrize("call_id", [["x"], 5], ids=["list", "int"])
def test_a_call_whose_id_is_not_a_string_is_sent_with_the_id_its_result_answers(call_id: Any) -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=8_000)
    memory.put(ChatMessage(role="user", content="q"))
    memory.put(_kwargs_call(call_id=call_id))
    memory.put(ChatMessage(role="tool", content="r", additional_kwargs={"tool_call_id": call_id}))
    sent = memory.get()
    calls, results = _sent_ids(sent)
    assert calls == results == ["call_0_ls"]
    StrictFakeLLM().chat(sent)


@pytest.mark.parametrize("call_id", [["x"], 5], ids=["list", "int"])
def test_strict_fake_rejects_an_id_that_is_not_a_string(call_id: Any) -> None:
    with pytest.raises(InvalidMessageError):
        StrictFakeLLM().chat([ChatMessage(role="user", content="q"), _kwargs_call(call_id=call_id)])
    result = ChatMessage(role="tool", content="r", additional_kwargs={"tool_call_id": call_id})
    with pytest.raises(InvalidMessageError, match="tool_call_id: expected a string"):
        StrictFakeLLM().chat([ChatMessage(role="user", content="q"), _kwargs_call(call_id="c1"), result])


_IDS = st.sampled_from(["c1", "c2", "nobody", "", None, ["x"], 5, {"id": "c1"}])


@st.composite
def _chats(draw: st.DrawFn) -> ChatMessage:
    role = draw(st.sampled_from(["user", "assistant", "tool"]))
    if role == "user":
        return ChatMessage(role="user", content=draw(st.sampled_from(["q", "next"])))
    if role == "tool":
        call_id = draw(_IDS)
        kwargs = {} if call_id is None and draw(st.booleans()) else {"tool_call_id": call_id}
        return ChatMessage(role="tool", content="out", additional_kwargs=kwargs)
    ids = draw(st.lists(_IDS, max_size=2))
    if draw(st.booleans()):
        return ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id=i if isinstance(i, str) else None,
                                                                   tool_name=f"t{n}", tool_kwargs={})
                                                     for n, i in enumerate(ids)])  # fmt: skip
    calls = [{"id": i, "type": "function", "function": {"name": f"t{n}", "arguments": "{}"}} for n, i in enumerate(ids)]
    return ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": calls})


@settings(max_examples=150, deadline=None)
@given(chats=st.lists(_chats(), min_size=1, max_size=8))
def test_whatever_ids_were_put_what_is_sent_pairs_every_call_and_result(chats: list[ChatMessage]) -> None:
    """Any mix of calls and results, with ids of any type or none: no orphan is ever sent (issue 26 finding 6)."""
    memory = BudgetedMemory.from_defaults(max_tokens=8_000)
    memory.put(ChatMessage(role="user", content="start"))
    for chat in chats:
        try:
            memory.put(chat)
        except InvalidMessageError:  # refused, typed (two calls with one id in a message)
            continue
    memory.put(ChatMessage(role="user", content="end"))
    StrictFakeLLM().chat(memory.get())
