"""BudgetDocumentCompressor over a real retriever, and CognitiveRetriever over the example package."""

from __future__ import annotations

import pytest
from ctxbudget.cognitive import CognitiveContextSession, FolderKnowledgeProvider, example_package_path
from ctxbudget.context.render import SEPARATOR, render_envelope
from ctxbudget.errors import CognitiveContextError, ProviderFailure
from ctxbudget.messages.tokens import TiktokenCounter
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import RunnableLambda
from langchain_core.vectorstores import InMemoryVectorStore

from langchain_ctxbudget import BudgetDocumentCompressor, CognitiveRetriever


def _corpus() -> list[Document]:
    docs = [
        Document(page_content=f"wiki fact {i}: " + "context " * (40 + 10 * i), metadata={"source": "wiki"})
        for i in range(10)
    ]
    docs += [Document(page_content=f"blog post {i}: " + "opinion " * 60, metadata={"source": "blog"}) for i in range(4)]
    docs.append(Document(page_content=docs[0].page_content, metadata={"source": "mirror"}))  # same text elsewhere
    return docs


def test_compressor_fits_budget_caps_sources_dedupes_and_reports() -> None:
    counter = TiktokenCounter()
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents(_corpus())
    retriever = store.as_retriever(search_kwargs={"k": 15})
    compressor = BudgetDocumentCompressor(max_tokens=900, max_items_per_source=3, max_tokens_per_source=600)
    chain = retriever | RunnableLambda(lambda docs: compressor.compress_documents(docs, "facts"))
    kept = chain.invoke("facts")
    rendered = SEPARATOR.join(
        render_envelope(source=d.metadata["source"], type="document", content=d.page_content) for d in kept
    )
    assert counter.count_text(rendered) <= 900
    by_source: dict[str, int] = {}
    for doc in kept:
        by_source[doc.metadata["source"]] = by_source.get(doc.metadata["source"], 0) + 1
        assert set(doc.metadata["ctxbudget"]) == {"rank", "score", "tokens"}
    assert max(by_source.values()) <= 3
    report = compressor.last_report
    assert report is not None
    assert len(report.documents) + len(report.dropped) == 15
    reasons = {d.reason for d in report.dropped}
    assert "duplicate_of" in reasons
    assert reasons & {"over_budget", "source_item_cap", "source_token_cap"}
    assert all(d.detail for d in report.dropped)
    texts = [d.page_content for d in kept]
    assert len(texts) == len(set(texts))


def test_relevance_score_metadata_orders_documents() -> None:
    docs = [
        Document(page_content="low", metadata={"source": "a", "relevance_score": 0.1}),
        Document(page_content="high", metadata={"source": "b", "relevance_score": 0.9}),
    ]
    report = BudgetDocumentCompressor().plan(docs)
    assert [d.page_content for d in report.documents] == ["high", "low"]
    assert docs[0].metadata == {"source": "a", "relevance_score": 0.1}  # inputs are never mutated


def test_cognitive_retriever_returns_cited_documents() -> None:
    provider = FolderKnowledgeProvider(example_package_path())
    retriever = CognitiveRetriever(session=CognitiveContextSession(provider.binding(), provider), session_id="s1")
    docs = retriever.invoke("how does compaction work?")
    assert docs
    assert all(d.metadata["source"] and d.page_content for d in docs)
    compressed = BudgetDocumentCompressor(max_tokens=400).compress_documents(docs, "compaction")
    assert len(compressed) <= len(docs)


class _BrokenProvider(FolderKnowledgeProvider):
    def query(self, request):  # type: ignore[no-untyped-def]
        raise RuntimeError("index offline")


def test_cognitive_retriever_fails_closed() -> None:
    provider = _BrokenProvider(example_package_path())
    retriever = CognitiveRetriever(session=CognitiveContextSession(provider.binding(), provider), session_id="s1")
    with pytest.raises(CognitiveContextError) as info:
        retriever.invoke("anything")
    assert isinstance(info.value, ProviderFailure)


async def test_cognitive_retriever_async() -> None:
    provider = FolderKnowledgeProvider(example_package_path())
    retriever = CognitiveRetriever(session=CognitiveContextSession(provider.binding(), provider), session_id="s2")
    assert await retriever.ainvoke("compaction")
