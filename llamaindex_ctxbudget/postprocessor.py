"""``BudgetNodePostprocessor``: rank, dedupe and fit retrieved nodes into a token budget, reporting every drop.

A drop-in ``node_postprocessors=[...]`` entry for query engines and chat engines::

    post = BudgetNodePostprocessor(max_tokens=2000, max_nodes=8, max_nodes_per_source=3)
    engine = index.as_query_engine(similarity_top_k=20, node_postprocessors=[post])

Steps, over the nodes it is given:

1. **Relevance** is the node score, scaled to 0..1: kept as is when the finite scores are all in 0..1, else
   min-max over the batch's finite scores. A node without a score (``None``) is neutral (0.5). Non-finite scores
   never disturb the others: ``+inf`` is at the top of the scale (1.0, level with the best finite score), ``-inf``
   and NaN (a failed score, not a missing one) at the bottom (0.0).
2. **Exact duplicates** (same node id, or the same whitespace-normalized text, metadata aside, from any source)
   keep the best-ranked one. The same node passed twice is kept once.
3. **Near duplicates**: texts whose shingle Jaccard similarity reaches ``near_duplicate_threshold`` keep the
   best-ranked one (shingles of ``shingle_size`` words; a text without word characters is compared on its
   characters). Each node is compared only with the kept nodes that can reach the threshold, found through an index
   of their rarest shingles (see :mod:`llamaindex_ctxbudget._dedupe`), so this step grows with the number of nodes,
   not its square, and decides exactly as comparing every pair would.
4. **Budget** by :func:`ctxbudget.context.planner.plan_context`: greedy in rank order within ``max_tokens``,
``max_nodes``
   and the per-source caps (source from ``source_metadata_keys`` of the node metadata, else the document id); a
   node that does not fit is skipped and a smaller later one may still fit.

Token costs are each node's text as the LLM will see it (``MetadataMode.LLM``) in its prompt-safe envelope, by
the postprocessor's own counter. Every dropped node is listed in :attr:`BudgetNodePostprocessor.last_report` with
its reason and numbers, and a :class:`~llamaindex_ctxbudget.instrumentation.NodesBudgetedEvent` is dispatched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ctxbudget.context.items import ContextItem
from ctxbudget.context.planner import PlannerConfig, PlanResult, plan_context
from ctxbudget.errors import InvalidPolicyError
from ctxbudget.messages.tokens import TiktokenCounter, TokenCounter
from ctxbudget.providers.counting import counter_for_model
from llama_index.core.bridge.pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from ._dedupe import Match, find_duplicates, jaccard, shingles
from .instrumentation import NodesBudgetedEvent, dispatch

__all__ = ["BudgetNodePostprocessor", "BudgetReport", "DroppedNode", "jaccard", "shingles"]


class DroppedNode(BaseModel):
    """One node left out, why, and the numbers behind it."""

    model_config = ConfigDict(frozen=True)

    node_id: str
    source: str
    reason: str = Field(description="duplicate_of, near_duplicate_of, over_budget, max_items, source_*_cap.")
    detail: str = Field(description="A readable sentence with the numbers.")
    tokens: int = 0
    duplicate_of: str | None = None
    similarity: float | None = None


class BudgetReport(BaseModel):
    """What the last call kept and dropped."""

    model_config = ConfigDict(frozen=True)

    kept: list[str] = Field(description="Node ids kept, in the order returned.")
    dropped: list[DroppedNode]
    tokens: int = Field(description="Tokens of the kept nodes, envelopes included.")
    max_tokens: int | None


def _relevances(nodes: Sequence[NodeWithScore]) -> list[float]:
    """Each node's score on the 0..1 scale (step 1 of the module docstring)."""
    scores = [n.score for n in nodes]
    finite = [float(s) for s in scores if s is not None and math.isfinite(s)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
    in_unit = low >= 0.0 and high <= 1.0
    span = high / 2 - low / 2  # halves (exact): no overflow between scores near the float limits

    def scaled(score: float | None) -> float:
        if score is None:
            return 0.5
        if math.isnan(score) or score == -math.inf:
            return 0.0
        if score == math.inf:
            return 1.0
        if in_unit:
            return float(score)
        return 1.0 if span == 0 else (score / 2 - low / 2) / span

    return [scaled(s) for s in scores]


class BudgetNodePostprocessor(BaseNodePostprocessor):
    """Fits retrieved nodes into a token budget: rank by score, dedupe (exact and near), cap per source.

    Limits are keyword-only; ``None`` means no limit.
    """

    max_tokens: int | None = Field(default=3000, ge=1)
    """Token budget for all kept nodes together."""
    max_nodes: int | None = Field(default=None, ge=1)
    """Most nodes kept."""
    max_nodes_per_source: int | None = Field(default=None, ge=1)
    """Most nodes from one source."""
    max_tokens_per_source: int | None = Field(default=None, ge=1)
    """Most tokens from one source."""
    near_duplicate_threshold: float | None = Field(default=0.85, gt=0.0, le=1.0)
    """Shingle Jaccard similarity at or above which two nodes are near duplicates; ``None`` disables it."""
    shingle_size: int = Field(default=5, ge=1)
    """Words per shingle."""
    source_metadata_keys: list[str] = Field(default_factory=lambda: ["file_name", "file_path", "source", "url"])
    """Metadata keys tried, in order, for a node's source; else its ref_doc_id, else ``"retrieved"``."""
    model: str | None = None
    """Model name for the counter (default: exact ``o200k_base``)."""

    _counter: TokenCounter = PrivateAttr()
    _last_report: BudgetReport | None = PrivateAttr(default=None)

    def __init__(self, *, counter: TokenCounter | None = None, **data: Any) -> None:
        """See the class docstring; ``counter`` overrides ``model``'s counter."""
        try:
            super().__init__(**data)
        except ValueError as exc:
            raise InvalidPolicyError(f"BudgetNodePostprocessor: {exc}", field="postprocessor") from None
        self._counter = counter or (counter_for_model(self.model) if self.model else TiktokenCounter())

    @classmethod
    def class_name(cls) -> str:
        """Name used in LlamaIndex serialization."""
        return "BudgetNodePostprocessor"

    @property
    def last_report(self) -> BudgetReport | None:
        """What the most recent call kept and dropped (``None`` before the first call)."""
        return self._last_report

    def source_of(self, node: NodeWithScore) -> str:
        """The source a node is capped under."""
        metadata = node.node.metadata
        for key in self.source_metadata_keys:
            value = metadata.get(key)
            if value:
                return str(value)
        return node.node.ref_doc_id or "retrieved"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        items = [
            self._item(node, relevance, position)
            for position, (node, relevance) in enumerate(zip(nodes, _relevances(nodes), strict=True))
        ]
        near = self._duplicates(items, [node.node.get_content(metadata_mode=MetadataMode.NONE) for node in nodes])
        candidates = [item for item in items if item.id not in near]
        plan = plan_context(candidates, self._config(), counter=self._counter)
        by_id = {item.id: node for item, node in zip(items, nodes, strict=True)}
        kept = [by_id[item.id] for item in plan.items]
        self._last_report = self._report(plan, near, items)
        dispatch(
            NodesBudgetedEvent(
                kept_node_ids=self._last_report.kept,
                dropped=[d.model_dump() for d in self._last_report.dropped],
                tokens=self._last_report.tokens,
                max_tokens=self.max_tokens,
            )
        )
        return kept

    def _item(self, node: NodeWithScore, relevance: float, position: int) -> ContextItem:
        return ContextItem(
            id=f"{node.node.node_id}#{position}",  # by position: the same node object may come twice
            source=self.source_of(node),
            type="document",
            content=node.node.get_content(metadata_mode=MetadataMode.LLM),
            relevance=min(1.0, max(0.0, relevance)),
            source_key=node.node.node_id,
            metadata={"node_id": node.node.node_id},
        )

    def _config(self) -> PlannerConfig:
        return PlannerConfig(
            max_items=self.max_nodes,
            max_tokens=self.max_tokens,
            max_items_per_source=self.max_nodes_per_source,
            max_tokens_per_source=self.max_tokens_per_source,
            dedupe_content=False,  # done before planning, on the text without metadata
        )

    def _duplicates(self, items: list[ContextItem], texts: list[str]) -> dict[str, tuple[ContextItem, Match]]:
        """Item id -> (the better-ranked item it duplicates, how)."""
        order = sorted(range(len(items)), key=lambda i: (-items[i].relevance, i))
        found = find_duplicates(texts, order, threshold=self.near_duplicate_threshold, size=self.shingle_size)
        return {items[index].id: (items[match.index], match) for index, match in found.items()}

    def _report(
        self, plan: PlanResult, near: dict[str, tuple[ContextItem, Match]], items: list[ContextItem]
    ) -> BudgetReport:
        node_id = {item.id: str(item.metadata["node_id"]) for item in items}
        dropped = [
            DroppedNode(
                node_id=node_id[d.item.id],
                source=d.item.source,
                reason=d.reason,
                detail=d.detail.replace(repr(d.item.id), repr(node_id[d.item.id])),
                tokens=d.tokens,
                duplicate_of=node_id.get(d.duplicate_of or ""),
            )
            for d in plan.dropped
        ]
        for item in items:
            if item.id in near:
                other, match = near[item.id]
                dropped.append(
                    DroppedNode(
                        node_id=node_id[item.id],
                        source=item.source,
                        reason="duplicate_of" if match.exact else "near_duplicate_of",
                        detail=self._duplicate_detail(node_id[item.id], node_id[other.id], match),
                        duplicate_of=node_id[other.id],
                        similarity=round(match.similarity, 4),
                    )
                )
        kept = [node_id[item.id] for item in plan.items]
        return BudgetReport(kept=kept, dropped=dropped, tokens=plan.budget_tokens, max_tokens=self.max_tokens)

    def _duplicate_detail(self, node: str, other: str, match: Match) -> str:
        if match.exact and node == other:
            return f"node {node!r} was given again (the same text, whitespace aside); its better-ranked copy is kept"
        if match.exact:
            return f"node {node!r} has the same text (whitespace aside) as {other!r}, which ranked higher"
        return (
            f"node {node!r} is {match.similarity:.0%} similar (shingle Jaccard) to {other!r}, which ranked higher; "
            f"threshold {self.near_duplicate_threshold}"
        )
