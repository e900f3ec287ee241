"""Retrieved documents into a token budget, and a retriever over an exact cognitive package binding.

:class:`BudgetDocumentCompressor` is a ``BaseDocumentCompressor`` (use it in a contextual-compression retriever or
call ``compress_documents`` from a chain): it ranks, dedupes and fits documents with the core planner
(:func:`ctxbudget.context.planner.plan_context`): a total token budget, a cap on items, per-source item and token caps.
Relevance is the document's ``relevance_score`` metadata when the retriever set one (0..1), else its retrieval
rank. Kept documents are copies with ``metadata["ctxbudget"] = {"rank", "score", "tokens"}``; every dropped one is
reported, with the reason and the numbers, in :class:`CompressionReport` (:meth:`~BudgetDocumentCompressor.plan`,
and :attr:`~BudgetDocumentCompressor.last_report` for the most recent call).

:class:`CognitiveRetriever` answers queries from a :class:`ctxbudget.cognitive.CognitiveContextSession`; every
failure (provider down, drifted response, invalid request) raises its ``CognitiveContextError``: it fails closed
and never falls back to other retrieval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ctxbudget.cognitive import CognitiveContextSession
from ctxbudget.context.items import ContextItem
from ctxbudget.context.planner import DropReason, PlannerConfig, plan_context
from ctxbudget.errors import InvalidPolicyError
from ctxbudget.messages._validation import to_usage_error
from ctxbudget.messages.tokens import TiktokenCounter, TokenCounter
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
    Callbacks,
)
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.retrievers import BaseRetriever
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

__all__ = ["BudgetDocumentCompressor", "CognitiveRetriever", "CompressionReport", "DroppedDocument"]


class DroppedDocument(BaseModel):
    """A document left out: why, and the numbers behind it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    document: Document
    reason: DropReason
    detail: str


class CompressionReport(BaseModel):
    """What one compression kept (in order) and what it dropped."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    documents: list[Document]
    dropped: list[DroppedDocument]
    tokens: int = Field(description="Tokens of the kept documents' envelopes, by the planner's counter.")


def _relevance(document: Document, rank: int, total: int, key: str) -> float:
    value = document.metadata.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0:
        return float(value)
    return (total - rank) / total


class BudgetDocumentCompressor(BaseDocumentCompressor):
    """Rank, dedupe and fit documents into a token budget with per-source caps (the core planner).

    ``None`` means no limit for every cap. Defaults are the planner's ``balanced`` preset.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    max_tokens: int | None = 4000
    """Total token budget of the kept documents (rendered as prompt-safe envelopes)."""
    max_items: int | None = 12
    """Most documents kept."""
    max_items_per_source: int | None = 6
    """Most documents from one source."""
    max_tokens_per_source: int | None = 2500
    """Most tokens from one source."""
    dedupe_content: bool = True
    """Drop documents whose whitespace-normalized text repeats a better-ranked one, across sources."""
    source_key: str = "source"
    """Metadata key naming a document's source (documents without one share the source ``unknown``)."""
    relevance_key: str = "relevance_score"
    """Metadata key of a 0..1 relevance score; absent: the retrieval rank decides."""
    counter: TokenCounter = Field(default_factory=TiktokenCounter, exclude=True)
    """Counts the rendered documents."""
    _last: CompressionReport | None = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        """Validate every field up front; a mistake raises :class:`InvalidPolicyError` naming the field."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise to_usage_error(exc, InvalidPolicyError, "BudgetDocumentCompressor") from None
        self._config()  # the planner's limits (>= 0), checked now rather than at the first retrieval

    @property
    def last_report(self) -> CompressionReport | None:
        """The report of the most recent :meth:`compress_documents` call (use :meth:`plan` when concurrent)."""
        return self._last

    def _config(self) -> PlannerConfig:
        return PlannerConfig(
            max_items=self.max_items,
            max_tokens=self.max_tokens,
            max_items_per_source=self.max_items_per_source,
            max_tokens_per_source=self.max_tokens_per_source,
            dedupe_content=self.dedupe_content,
        )

    def _item(self, document: Document, rank: int, total: int) -> ContextItem:
        source = str(document.metadata.get(self.source_key) or "unknown")
        digest = hashlib.sha256(document.page_content.encode()).hexdigest()[:16]
        return ContextItem(
            id=f"doc-{rank}",
            source=source,
            type="document",
            content=document.page_content,
            relevance=_relevance(document, rank, total, self.relevance_key),
            source_key=document.id or f"{source}\x00{digest}",
        )

    def plan(self, documents: Sequence[Document]) -> CompressionReport:
        """Plan without side effects: the kept documents (copies, in rank order) and the dropped ones."""
        items = [self._item(d, i, len(documents)) for i, d in enumerate(documents)]
        by_id = {item.id: documents[i] for i, item in enumerate(items)}
        result = plan_context(items, self._config(), counter=self.counter)
        kept = [
            Document(
                page_content=planned.item.content,
                metadata={
                    **by_id[planned.item.id].metadata,
                    "ctxbudget": {"rank": rank, "score": planned.score, "tokens": planned.tokens},
                },
                id=by_id[planned.item.id].id,
            )
            for rank, planned in enumerate(result.included)
        ]
        dropped = [DroppedDocument(document=by_id[d.item.id], reason=d.reason, detail=d.detail) for d in result.dropped]
        return CompressionReport(documents=kept, dropped=dropped, tokens=result.budget_tokens)

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """Fit ``documents`` (as the retriever ranked them for ``query``) into the budget."""
        report = self.plan(documents)
        self._last = report
        return report.documents


class CognitiveRetriever(BaseRetriever):
    """Documents from one exact cognitive package generation; fails closed on any binding error.

    Args:
        session: a bound :class:`~ctxbudget.cognitive.CognitiveContextSession`.
        session_id: the conversation id sent with every request.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    session: CognitiveContextSession
    session_id: str

    @staticmethod
    def _documents(items: list[ContextItem]) -> list[Document]:
        return [
            Document(
                page_content=item.content,
                metadata={
                    **item.metadata,
                    "source": item.source,
                    "type": item.type,
                    "trust": item.trust,
                    "relevance_score": item.relevance,
                },
                id=item.id,
            )
            for item in items
        ]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return self._documents(self.session.retrieve(query, session_id=self.session_id))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        return self._documents(await self.session.aretrieve(query, session_id=self.session_id))
