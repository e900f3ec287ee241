"""Ports of llama-index-core ``tests/chat_engine/test_simple.py``, ``test_condense_question.py`` and
``test_context.py``: each engine runs with LlamaIndex's default memory and with ``BudgetedMemory``.

The memory is chosen the way a user swaps it in: ``memory_cls=`` where the engine takes it (SimpleChatEngine,
CondenseQuestionChatEngine), else ``memory=<cls>.from_defaults(token_limit=<what the engine's default uses>)``.
Upstream drives CondenseQuestionChatEngine with ``Mock(spec=BaseQueryEngine)`` and a patched ``LLM.predict``; here
a real ``CustomQueryEngine`` that records its queries and a ``MockLLM`` whose ``predict`` answers like upstream's
``patch_llm_predictor`` (the condense prompt's arguments) stand in, so no LlamaIndex class is mocked.
Cases without a memory (streaming a multi-block message into a hand-written ``MockMemory``) are not ported.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
from llama_index.core import MockEmbedding
from llama_index.core.base.llms.types import ChatMessage, CompletionResponse, CompletionResponseGen, MessageRole
from llama_index.core.base.response.schema import Response
from llama_index.core.chat_engine.condense_question import CondenseQuestionChatEngine
from llama_index.core.chat_engine.context import ContextChatEngine
from llama_index.core.chat_engine.simple import SimpleChatEngine
from llama_index.core.indices import VectorStoreIndex
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.mock import MockLLM
from llama_index.core.memory import ChatMemoryBuffer, Memory
from llama_index.core.prompts import BasePromptTemplate
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.schema import Document, QueryBundle

from llamaindex_ctxbudget import BudgetedMemory

from .conftest import BOTH, FRAMEWORK, installed_fails, ours_differs

EMPTY_HISTORY = "0.14's engine reads `chat_history or memory.get()`, so chat_history=[] uses the memory"


def buffer_cls(impl: str) -> Any:
    return ChatMemoryBuffer if impl == FRAMEWORK else BudgetedMemory


# -- test_simple.py -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("impl", BOTH)
def test_simple_chat_engine(impl: str) -> None:
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory_cls=buffer_cls(impl))

    engine.reset()
    response = engine.chat("Test message 1")
    assert str(response) == "user: Test message 1\nassistant: "

    response = engine.chat("Test message 2")
    assert str(response) == (
        "user: Test message 1\nassistant: user: Test message 1\nassistant: \nuser: Test message 2\nassistant: "
    )

    engine.reset()
    response = engine.chat("Test message 3")
    assert str(response) == "user: Test message 3\nassistant: "


@pytest.mark.parametrize("impl", BOTH)
def test_simple_chat_engine_with_init_history(impl: str) -> None:
    engine = SimpleChatEngine.from_defaults(
        llm=MockLLM(),
        memory_cls=buffer_cls(impl),
        chat_history=[
            ChatMessage(role=MessageRole.USER, content="test human message"),
            ChatMessage(role=MessageRole.ASSISTANT, content="test ai message"),
        ],
    )

    response = engine.chat("new human message")
    assert str(response) == (
        "user: test human message\nassistant: test ai message\nuser: new human message\nassistant: "
    )


@pytest.mark.parametrize("impl", BOTH)
async def test_simple_chat_engine_astream(impl: str) -> None:
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory_cls=buffer_cls(impl))
    response = await engine.astream_chat("Hello World!")

    num_iters = 0
    async for _response_part in response.async_response_gen():
        num_iters += 1

    assert num_iters > 10

    assert "Hello World!" in response.unformatted_response
    assert len(engine.chat_history) == 2

    response = await engine.astream_chat("What is the capital of the moon?")

    num_iters = 0
    async for _ in response.async_response_gen():
        num_iters += 1

    assert num_iters > 10
    assert "Hello World!" in response.unformatted_response
    assert "What is the capital of the moon?" in response.unformatted_response


@pytest.mark.parametrize("impl", BOTH)
async def test_simple_chat_engine_astream_response_text_without_draining(impl: str) -> None:
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory_cls=buffer_cls(impl))
    response = await engine.astream_chat("Hello World!")
    await response.awrite_response_to_history_task

    assert response.response != ""
    assert str(response) == response.response
    assert "Hello World!" in str(response)


class ExceptionThrownInTest(Exception):
    pass


class ExceptionMockLLM(MockLLM):
    """Raises an exception while streaming back the mocked LLM response."""

    @classmethod
    def class_name(cls) -> str:
        return "ExceptionMockLLM"

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        def gen_prompt() -> CompletionResponseGen:
            for ch in prompt:
                yield CompletionResponse(text=prompt, delta=ch)
            raise ExceptionThrownInTest("Exception thrown for testing purposes")

        return gen_prompt()


@pytest.mark.parametrize(
    "impl", ours_differs("from_defaults() with no token_limit/llm: ctxbudget never guesses a window (issue 16)")
)
def test_simple_chat_engine_astream_exception_handling(impl: str) -> None:
    """An exception raised while streaming reaches the user, not an un-awaited task collected later."""

    async def async_part() -> None:
        engine = SimpleChatEngine.from_defaults(llm=ExceptionMockLLM(), memory=buffer_cls(impl).from_defaults())
        response = await engine.astream_chat("Hello World!")

        with pytest.raises(ExceptionThrownInTest):
            async for _response_part in response.async_response_gen():
                pass

    not_retrieved_exception = False

    def custom_exception_handler(loop: Any, context: dict[str, Any]) -> None:
        if context.get("message") == "Task exception was never retrieved":
            nonlocal not_retrieved_exception
            not_retrieved_exception = True

    loop = asyncio.new_event_loop()
    loop.set_exception_handler(custom_exception_handler)
    loop.run_until_complete(async_part())
    loop.close()
    gc.collect()
    if not_retrieved_exception:
        pytest.fail("Exception was not correctly handled - ended up in asyncio cleanup during garbage collection")


# -- test_condense_question.py ------------------------------------------------------------------------------------
class PromptArgsLLM(MockLLM):
    """``predict`` answers with the prompt's arguments, as upstream's ``patch_llm_predictor`` does."""

    def predict(self, prompt: BasePromptTemplate, **prompt_args: Any) -> str:
        return str(prompt_args)

    async def apredict(self, prompt: BasePromptTemplate, **prompt_args: Any) -> str:
        return str(prompt_args)


class RecordingQueryEngine(CustomQueryEngine):
    """Answers each query with its own text and records it (upstream: a Mock with ``side_effect``)."""

    queries: list[str] = []  # noqa: RUF012 - a pydantic field, copied per instance

    def custom_query(self, query_str: str) -> Response:
        self.queries.append(query_str)
        return Response(response=query_str)

    async def acustom_query(self, query_str: str) -> Response:
        return self.custom_query(query_str)


def _make_engine_with_history(impl: str) -> tuple[CondenseQuestionChatEngine, RecordingQueryEngine]:
    query_engine = RecordingQueryEngine()
    engine = CondenseQuestionChatEngine.from_defaults(
        query_engine=query_engine,
        chat_history=[
            ChatMessage(role=MessageRole.USER, content="old question"),
            ChatMessage(role=MessageRole.ASSISTANT, content="old answer"),
        ],
        llm=MockLLM(),
        memory_cls=buffer_cls(impl),
    )
    return engine, query_engine


@pytest.mark.parametrize("impl", BOTH)
def test_condense_question_chat_engine(impl: str) -> None:
    query_engine = RecordingQueryEngine()
    engine = CondenseQuestionChatEngine.from_defaults(
        query_engine=query_engine, llm=PromptArgsLLM(), memory_cls=buffer_cls(impl)
    )

    engine.reset()
    response = engine.chat("Test message 1")
    assert str(response) == "Test message 1"

    response = engine.chat("Test message 2")
    assert str(response) == (
        "{'question': 'Test message 2', 'chat_history': 'user: Test message 1\\nassistant: Test message 1'}"
    )

    engine.reset()
    response = engine.chat("Test message 3")
    assert str(response) == "Test message 3"


@pytest.mark.parametrize("impl", BOTH)
def test_condense_question_chat_engine_with_init_history(impl: str) -> None:
    query_engine = RecordingQueryEngine()
    engine = CondenseQuestionChatEngine.from_defaults(
        query_engine=query_engine,
        llm=PromptArgsLLM(),
        memory_cls=buffer_cls(impl),
        chat_history=[
            ChatMessage(role=MessageRole.USER, content="test human message"),
            ChatMessage(role=MessageRole.ASSISTANT, content="test ai message"),
        ],
    )

    response = engine.chat("new human message")
    assert str(response) == (
        "{'question': 'new human message', 'chat_history': 'user: test human message\\nassistant: test ai message'}"
    )


@pytest.mark.parametrize("impl", installed_fails(EMPTY_HISTORY))
def test_chat_honors_explicit_empty_history(impl: str) -> None:
    engine, query_engine = _make_engine_with_history(impl)

    engine.chat("fresh question", chat_history=[])

    assert query_engine.queries[-1] == "fresh question"


@pytest.mark.parametrize("impl", installed_fails(EMPTY_HISTORY))
async def test_achat_honors_explicit_empty_history(impl: str) -> None:
    engine, query_engine = _make_engine_with_history(impl)

    await engine.achat("fresh question", chat_history=[])

    assert query_engine.queries[-1] == "fresh question"

    engine, query_engine = _make_engine_with_history(impl)

    await engine.achat("fresh question")

    assert "old question" in query_engine.queries[-1]


# -- test_context.py ----------------------------------------------------------------------------------------------
SYSTEM_PROMPT = "Talk like a pirate."


def context_engine(impl: str) -> ContextChatEngine:
    index = VectorStoreIndex.from_documents([Document.example()], embed_model=MockEmbedding(embed_dim=3))
    retriever = index.as_retriever()
    llm = MockLLM()
    limit = llm.metadata.context_window - 256  # what ContextChatEngine.from_defaults gives its default Memory
    memory = (
        Memory.from_defaults(token_limit=limit)
        if impl == FRAMEWORK
        else BudgetedMemory.from_defaults(token_limit=limit)
    )
    return ContextChatEngine.from_defaults(retriever, llm=llm, system_prompt=SYSTEM_PROMPT, memory=memory)


@pytest.mark.parametrize("impl", BOTH)
def test_chat(impl: str) -> None:
    chat_engine = context_engine(impl)
    response = chat_engine.chat("Hello World!")
    assert SYSTEM_PROMPT in str(response)
    assert "Hello World!" in str(response)
    assert len(chat_engine.chat_history) == 2

    response = chat_engine.chat("What is the capital of the moon?")
    assert SYSTEM_PROMPT in str(response)
    assert "Hello World!" in str(response)
    assert "What is the capital of the moon?" in str(response)
    assert len(chat_engine.chat_history) == 4

    chat_engine.reset()
    q = QueryBundle("Hello World through QueryBundle")
    response = chat_engine.chat(q)
    assert str(q) in str(response)
    assert len(chat_engine.chat_history) == 2
    assert str(q) in str(chat_engine.chat_history[0])


@pytest.mark.parametrize("impl", BOTH)
def test_chat_stream(impl: str) -> None:
    chat_engine = context_engine(impl)
    response = chat_engine.stream_chat("Hello World!")

    num_iters = 0
    for _ in response.response_gen:
        num_iters += 1

    assert num_iters > 10
    assert SYSTEM_PROMPT in str(response)
    assert "Hello World!" in str(response)
    assert len(chat_engine.chat_history) == 2

    response = chat_engine.stream_chat("What is the capital of the moon?")

    num_iters = 0
    for _ in response.response_gen:
        num_iters += 1

    assert num_iters > 10
    assert SYSTEM_PROMPT in str(response)
    assert "Hello World!" in str(response)
    assert "What is the capital of the moon?" in str(response)
    assert len(chat_engine.chat_history) == 4

    chat_engine.reset()
    q = QueryBundle("Hello World through QueryBundle")
    response = chat_engine.stream_chat(q)
    num_iters = 0
    for _ in response.response_gen:
        num_iters += 1
    assert num_iters > 10
    assert str(q) in str(response)
    assert len(chat_engine.chat_history) == 2
    assert str(q) in str(chat_engine.chat_history[0])


@pytest.mark.parametrize("impl", BOTH)
async def test_achat(impl: str) -> None:
    chat_engine = context_engine(impl)
    response = await chat_engine.achat("Hello World!")
    assert SYSTEM_PROMPT in str(response)
    assert "Hello World!" in str(response)
    assert len(chat_engine.chat_history) == 2

    response = await chat_engine.achat("What is the capital of the moon?")
    assert SYSTEM_PROMPT in str(response)
    assert "Hello World!" in str(response)
    assert "What is the capital of the moon?" in str(response)
    assert len(chat_engine.chat_history) == 4

    chat_engine.reset()
    q = QueryBundle("Hello World through QueryBundle")
    response = await chat_engine.achat(q)
    assert str(q) in str(response)
    assert len(chat_engine.chat_history) == 2
    assert str(q) in str(chat_engine.chat_history[0])


@pytest.mark.parametrize("impl", BOTH)
async def test_chat_astream(impl: str) -> None:
    chat_engine = context_engine(impl)
    response = await chat_engine.astream_chat("Hello World!")

    num_iters = 0
    async for _ in response.async_response_gen():
        num_iters += 1

    assert num_iters > 10
    assert SYSTEM_PROMPT in str(response)
    assert "Hello World!" in str(response)
    assert len(chat_engine.chat_history) == 2

    response = await chat_engine.astream_chat("What is the capital of the moon?")

    num_iters = 0
    async for _ in response.async_response_gen():
        num_iters += 1

    assert num_iters > 10
    assert SYSTEM_PROMPT in str(response)
    assert "Hello World!" in str(response)
    assert "What is the capital of the moon?" in str(response)
    assert len(chat_engine.chat_history) == 4

    chat_engine.reset()
    q = QueryBundle("Hello World through QueryBundle")
    response = await chat_engine.astream_chat(q)
    num_iters = 0
    async for _ in response.async_response_gen():
        num_iters += 1
    assert num_iters > 10
    assert str(q) in str(response)
    assert len(chat_engine.chat_history) == 2
    assert str(q) in str(chat_engine.chat_history[0])
