"""Chat engines over a VectorStoreIndex with BudgetedMemory + BudgetNodePostprocessor; LLM summarizer; events."""

from __future__ import annotations

import asyncio

import pytest
from ctxbudget.cognitive import CognitiveContextSession, FolderKnowledgeProvider, example_package_path
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import CognitiveExclusivityError, InvalidPolicyError
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.chat_engine import CondensePlusContextChatEngine, ContextChatEngine
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.llms import ChatMessage
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from pydantic import Field

from llamaindex_ctxbudget import (
    BudgetedMemory,
    BudgetNodePostprocessor,
    CognitiveBindingPostprocessor,
    CognitiveRetriever,
    ContextCompactedEvent,
    FakeReply,
    LlamaIndexSummarizer,
    StrictFakeLLM,
)

from .conftest import assert_all_requests_valid

HISTORY, CONTEXT, WINDOW = 2000, 1200, 4200


def _index() -> VectorStoreIndex:
    docs = [
        Document(
            text=f"Section {i}. " + f"Fact {i} about the system, stated in full. " * 30,
            metadata={"file_name": f"d{i % 3}.md"},
        )
        for i in range(12)
    ]
    return VectorStoreIndex.from_documents(docs, embed_model=MockEmbedding(embed_dim=8))


class _Compactions(BaseEventHandler):
    seen: list[ContextCompactedEvent] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "Compactions"

    def handle(self, event: object, **kwargs: object) -> None:
        if isinstance(event, ContextCompactedEvent):
            self.seen.append(event)


@pytest.mark.parametrize("engine_cls", [ContextChatEngine, CondensePlusContextChatEngine])
def test_context_chat_engines_stay_valid_and_in_budget(engine_cls: type) -> None:
    handler = _Compactions()
    get_dispatcher().add_event_handler(handler)
    llm = StrictFakeLLM(context_window=WINDOW, script=[FakeReply(text="an answer with several words " * 6)])
    memory = BudgetedMemory.from_defaults(max_tokens=HISTORY, system_prompt="Answer from the context.")
    post = BudgetNodePostprocessor(max_tokens=CONTEXT, max_nodes_per_source=2)
    engine = engine_cls.from_defaults(
        retriever=_index().as_retriever(similarity_top_k=12), llm=llm, memory=memory, node_postprocessors=[post]
    )
    for turn in range(80):
        engine.chat(f"question {turn}: what is fact {turn % 12}?")
    assert_all_requests_valid(llm, WINDOW)
    assert memory.session.summary is not None
    assert len(memory.get_all()) == 160
    assert handler.seen
    assert handler.seen[-1].tokens_after < handler.seen[-1].tokens_before


def test_llm_summarizer_sync_and_async_with_fallback() -> None:
    summary_llm = StrictFakeLLM(context_window=50_000, script=[FakeReply(text="## Goal\n- keep facts")])
    memory = BudgetedMemory.from_defaults(
        max_tokens=1200, summarizer=LlamaIndexSummarizer(summary_llm), policy=CompactionPolicy(keep_recent_messages=4)
    )
    for turn in range(40):
        memory.put(ChatMessage(role="user", content=f"fact {turn} " * 10))
        memory.get()
    assert summary_llm.requests  # the LLM summarized
    assert summary_llm.requests[0].messages[0].role == "system"
    assert "<transcript>" in summary_llm.requests[0].messages[1].text
    assert "keep facts" in (memory.session.summary or "")

    broken = StrictFakeLLM(context_window=10)  # every summary request is over its window: the LLM call fails
    fallback = BudgetedMemory.from_defaults(max_tokens=1200, summarizer=LlamaIndexSummarizer(broken))

    async def run() -> None:
        for turn in range(40):
            await fallback.aput(ChatMessage(role="user", content=f"fact {turn} " * 10))
            await fallback.aget()

    asyncio.run(run())
    assert fallback.session.summary is not None  # extractive fallback, nothing lost
    assert len(fallback.get_all()) == 40


def test_cognitive_retriever_and_postprocessor_fail_closed() -> None:
    provider = FolderKnowledgeProvider(example_package_path())
    bound = CognitiveContextSession(provider.binding(), provider, timeout=None)  # no clock to race
    retriever = CognitiveRetriever(bound, session_id="s1")
    nodes = retriever.retrieve("how does compaction work?")
    assert nodes
    llm = StrictFakeLLM(context_window=20_000)
    response = RetrieverQueryEngine.from_args(retriever, llm=llm).query("how does compaction work?")
    assert response.source_nodes
    post = CognitiveBindingPostprocessor(session=bound, session_id="s1")
    served = post.postprocess_nodes([], query_bundle=QueryBundle("how does compaction work?"))
    assert [n.node.node_id for n in served] == [n.node.node_id for n in nodes]
    foreign = NodeWithScore(node=TextNode(id_="web", text="from a general retriever"), score=1.0)
    with pytest.raises(CognitiveExclusivityError, match="1 of 1 node"):
        post.postprocess_nodes([foreign], query_bundle=QueryBundle("q"))
    with pytest.raises(CognitiveExclusivityError):
        CognitiveRetriever(object(), session_id="s1")  # type: ignore[arg-type]


def test_cognitive_retriever_k_keeps_the_best_nodes() -> None:
    provider = FolderKnowledgeProvider(example_package_path())
    bound = CognitiveContextSession(provider.binding(), provider, timeout=None)  # no clock to race
    every = CognitiveRetriever(bound, session_id="s1").retrieve("how does compaction work?")
    assert len(every) > 1
    top = CognitiveRetriever(bound, session_id="s1", k=1).retrieve("how does compaction work?")
    assert [n.node.node_id for n in top] == [every[0].node.node_id]
    with pytest.raises(InvalidPolicyError, match="k: must be an int >= 1 or None, got 0"):
        CognitiveRetriever(bound, session_id="s1", k=0)
