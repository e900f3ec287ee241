"""Issue 13 (LlamaIndex half): ToolSelection ids, block sizes, a pasted first message, engines' memory_cls, errors.

Each test drives LlamaIndex's real classes (FunctionAgent, SimpleChatEngine, CondenseQuestionChatEngine) with
fake LLMs that check requests as strict providers do.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Sequence
from typing import Any

import pytest
from ctxbudget.errors import ContextOverflowError
from ctxbudget.messages.tokens import TiktokenCounter, count_request
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import (
    AudioBlock,
    CitationBlock,
    DocumentBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from llama_index.core.chat_engine import CondenseQuestionChatEngine, SimpleChatEngine
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.tools import FunctionTool

from llamaindex_ctxbudget import BudgetedMemory, FakeReply, StrictFakeLLM, from_chat_message
from llamaindex_ctxbudget.errors import LlamaIndexContextOverflowError

COUNT = TiktokenCounter().count_text  # the bundled o200k_base encoding: offline


# -- 1. ToolSelection ids --------------------------------------------------------------------------------------
def _call_ids(chat: ChatMessage) -> list[str]:
    """Call ids as a provider reads them: ToolCallBlock ids and additional_kwargs tool calls (any shape)."""
    ids = [b.tool_call_id or "" for b in chat.blocks if isinstance(b, ToolCallBlock)]
    for item in chat.additional_kwargs.get("tool_calls") or []:
        ids.append(getattr(item, "tool_id", None) or (item.get("id") if isinstance(item, dict) else "") or "")
    return ids


def orphans(messages: Sequence[ChatMessage]) -> list[str]:
    """Tool results that answer no call of the assistant turn before them, and calls left unanswered."""
    problems: list[str] = []
    open_calls: set[str] = set()
    for index, chat in enumerate(messages):
        role = chat.role.value
        if role == "tool":
            call_id = chat.additional_kwargs.get("tool_call_id")
            if call_id not in open_calls:
                problems.append(f"messages[{index}]: result for {call_id!r} answers no open call")
            open_calls.discard(call_id)
            continue
        if open_calls:
            problems.append(f"messages[{index}]: calls {sorted(open_calls)} left unanswered")
        open_calls = set(_call_ids(chat)) if role == "assistant" else set()
    return problems


class OrphanRejectingMockLLM(MockFunctionCallingLLM):
    """LlamaIndex's own MockFunctionCallingLLM, refusing orphaned tool pairs as a provider's 400 would."""

    sent: list[list[ChatMessage]] = []  # noqa: RUF012 - a pydantic field (a fresh list per instance)

    def _get_response_generator(self) -> Any:  # every chat path (chat, achat, streams) answers through it
        respond = super()._get_response_generator()

        def checked(messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
            problems = orphans(messages)
            if problems:
                raise ValueError(f"400 invalid_request_error: {problems}")
            self.sent.append(list(messages))
            return respond(messages, **kwargs)

        return checked


def _scripted(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """Like upstream's agent tests: ToolSelection objects in additional_kwargs, then an answer after a result."""
    if messages[-1].role.value == "tool":
        return ChatMessage(role="assistant", content="the listing is done")
    turn = sum(1 for m in messages if m.role.value == "user")
    calls = [ToolSelection(tool_id=f"sel-{turn}-{i}", tool_name="ls", tool_kwargs={"path": f"d{i}"}) for i in (0, 1)]
    return ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": calls})


def ls(path: str) -> str:
    """List a directory."""
    return "\n".join(f"{path}/file_{i}.py  {i * 137} bytes" for i in range(40))


async def test_function_agent_with_upstream_mock_llm_never_sends_orphans() -> None:
    llm = OrphanRejectingMockLLM(response_generator=_scripted)
    memory = BudgetedMemory.from_defaults(max_tokens=2_500)
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(ls)], llm=llm)
    for turn in range(8):
        await agent.run(f"turn {turn}: list both directories", memory=memory)
    assert len(llm.sent) == 16
    assert memory.session.archive.entries()  # compaction ran: the pairs survived it
    kept = memory.get()
    assert orphans(kept) == []
    results = [c.additional_kwargs["tool_call_id"] for c in kept if c.role.value == "tool"]
    assert results
    assert all(r.startswith("sel-") for r in results)  # the real results, never placeholders for invented ids


def test_tool_selection_ids_are_read() -> None:
    chat = ChatMessage(
        role="assistant",
        content="",
        additional_kwargs={"tool_calls": [ToolSelection(tool_id="one", tool_name="mul", tool_kwargs={"a": 2})]},
    )
    (call,) = from_chat_message(chat).tool_calls
    assert (call.id, call.name, call.args) == ("one", "mul", {"a": 2})


# -- 2. block sizes ----------------------------------------------------------------------------------------------
REASONING = "Consider the failing test, then the fixture it loads, then the path it writes. " * 76


def test_thinking_document_audio_and_citation_blocks_are_counted_by_size() -> None:
    counter = TiktokenCounter()
    thinking = ChatMessage(role="assistant", blocks=[ThinkingBlock(content=REASONING), TextBlock(text="done")])
    assert COUNT(REASONING) > 1_200
    assert counter.count_message(from_chat_message(thinking)) >= COUNT(REASONING)
    doc = DocumentBlock(data=REASONING.encode(), document_mimetype="text/plain")
    cited = CitationBlock(
        cited_content=TextBlock(text=REASONING), source="s.md", title="S", additional_location_info={}
    )
    audio = AudioBlock(audio=b"\x00\x01" * 3_000, format="wav")
    for block in (doc, cited):
        chat = ChatMessage(role="user", blocks=[block])
        assert counter.count_message(from_chat_message(chat)) >= COUNT(REASONING)
    sent = len(base64.b64encode(b"\x00\x01" * 3_000)) // 4
    assert counter.count_message(from_chat_message(ChatMessage(role="user", blocks=[audio]))) >= sent


def test_a_memory_with_thinking_blocks_stays_inside_its_budget() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=1_000)
    for turn in range(6):
        memory.put(ChatMessage(role="user", content=f"question {turn}"))
        memory.put(
            ChatMessage(role="assistant", blocks=[ThinkingBlock(content=REASONING[:2_000]), TextBlock(text="a")])
        )
    sent = memory.get()
    thinking = sum(COUNT(b.content or "") for c in sent for b in c.blocks if isinstance(b, ThinkingBlock))
    assert thinking + sum(COUNT(c.content or "") for c in sent) <= 1_000  # what is sent, by an independent count
    assert count_request(TiktokenCounter(), [from_chat_message(c) for c in sent], []) <= 1_000  # framing included


# -- 3. a pasted document as the first message ------------------------------------------------------------------
def test_a_huge_first_message_does_not_break_later_turns() -> None:
    llm = StrictFakeLLM(context_window=4_000, script=[FakeReply(text="Read it.")])
    memory = BudgetedMemory.from_defaults(max_tokens=4_000)
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    pasted = "Please review this design document.\n" + "\n".join(f"Section {i}: " + "text " * 40 for i in range(300))
    # the newest message alone is 13k tokens: compaction folds it into the summary (archived whole, shown as an
    # excerpt beside its handle) and the request fits, instead of refusing it
    assert str(engine.chat(pasted)) == "Read it."
    for turn in range(5):
        assert str(engine.chat(f"question {turn} about the document")) == "Read it."
    summary = next(c.content or "" for c in memory.get() if "[Context Summary]" in (c.content or ""))
    assert "ctx://archive/" in summary  # the goal is an excerpt naming where its full text is
    assert max(r.tokens for r in llm.requests) <= 4_000


# -- 4. engines building the memory from memory_cls --------------------------------------------------------------
def test_simple_chat_engine_memory_cls() -> None:
    llm = StrictFakeLLM(context_window=3_000)
    engine = SimpleChatEngine.from_defaults(llm=llm, memory_cls=BudgetedMemory)
    for turn in range(40):
        engine.chat(f"turn {turn} " + "words " * 40)
    memory = engine._memory
    assert isinstance(memory, BudgetedMemory)
    assert memory.token_limit == 3_000 - 256  # what the engine passed as token_limit
    assert max(r.tokens for r in llm.requests) <= 3_000


class _Echo(CustomQueryEngine):
    def custom_query(self, query_str: str) -> str:
        return f"answer to {query_str}"


def test_condense_question_chat_engine_memory_cls() -> None:
    llm = StrictFakeLLM(context_window=3_000)
    engine = CondenseQuestionChatEngine.from_defaults(query_engine=_Echo(), llm=llm, memory_cls=BudgetedMemory)
    for turn in range(5):
        assert str(engine.chat(f"turn {turn}")).startswith("answer to")
    assert isinstance(engine._memory, BudgetedMemory)
    assert len(engine._memory.get_all()) == 10


def test_from_defaults_token_limit_and_llm_mean_what_chat_memory_buffer_says() -> None:
    llm = StrictFakeLLM(context_window=8_000)
    assert BudgetedMemory.from_defaults(llm=llm).token_limit == 6_000  # 75% of the LLM's window
    assert BudgetedMemory.from_defaults(llm=llm, token_limit=1_000).token_limit == 1_000
    with pytest.raises(ValueError, match="token_limit: 1000 disagrees with max_tokens=2000"):
        BudgetedMemory.from_defaults(token_limit=1_000, max_tokens=2_000)


# -- the hard stop is a ValueError too; to_string / from_string -------------------------------------------------
def test_overflow_from_the_memory_is_also_a_value_error() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=1_000)
    memory.put(ChatMessage(role="user", content="hi"))
    with pytest.raises(ValueError, match="over the hard stop") as caught:
        memory.get(initial_token_count=5_000)
    assert isinstance(caught.value, LlamaIndexContextOverflowError)
    assert isinstance(caught.value, ContextOverflowError)
    assert caught.value.max_tokens == 1_000


def test_to_string_from_string_resumes_the_session() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=800)
    for turn in range(30):
        memory.put(ChatMessage(role="user", content=f"turn {turn} " + "words " * 20))
    before = memory.get()
    again = BudgetedMemory.from_string(memory.to_string())
    assert again.token_limit == 800
    assert [c.content for c in again.get()] == [c.content for c in before]
    assert len(again.get_all()) == 30


def test_the_summary_is_a_system_message_after_the_system_prompt_so_no_two_user_turns_touch() -> None:
    memory = BudgetedMemory.from_defaults(max_tokens=1_200, system_prompt="Be brief.")
    for turn in range(40):
        memory.put(ChatMessage(role="user", content=f"question {turn} " + "detail " * 20))
        memory.put(ChatMessage(role="assistant", content=f"answer {turn} " + "words " * 20))
    sent = memory.get()
    assert memory.session.summary is not None  # compaction ran
    assert [c.role.value for c in sent[:2]] == ["system", "system"]
    assert sent[0].content == "Be brief."
    assert "[Context Summary]" in (sent[1].content or "")
    roles = [c.role.value for c in sent]
    assert all(not (a == b == "user") for a, b in itertools.pairwise(roles))
