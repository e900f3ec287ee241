"""``BudgetNodePostprocessor``: rank, dedupe and fit retrieved nodes into a token budget, reporting every drop.

A drop-in ``node_postprocessors=[...]`` entry for query engines and chat engines::

    post = BudgetNodePostprocessor(max_tokens=2000, max_nodes=8, max_nodes_per_source=3)
    engine = index.as_query_engine(similarity_top_k=20, node_postprocessors=[post])

Steps, over the nodes it is given:

1. **Relevance** is the node score, scaled to 0..1 (kept as is when already in 0..1, else min-max over the batch).
2. **Exact duplicates** (same node id, or the same whitespace-normalized text, metadata aside, from any source)
   keep the best-ranked one.
3. **Near duplicates**: texts whose word-shingle Jaccard similarity reaches ``near_duplicate_threshold`` keep the
   best-ranked one.
4. **Budget** by :func:`ctxbudget.context.planner.plan_context`: greedy in rank order within ``max_tokens``,
``max_nodes``
   and the per-source caps (source from ``source_metadata_keys`` of the node metadata, else the document id); a
   node that does not fit is skipped and a smaller later one may still fit.

Token costs are each node's text as the LLM will see it (``MetadataMode.LLM``) in its prompt-safe envelope, by
the postprocessor's own counter. Every dropped node is listed in :attr:`BudgetNodePostprocessor.last_report` with
its reason and numbers, and a :class:`~llamaindex_ctxbudget.instrumentation.NodesBudgetedEvent` is dispatched.
"""

from __future__ import annotations

import hashlib
import re
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

from .instrumentation import NodesBudgetedEvent, dispatch

__all__ = ["BudgetNodePostprocessor", "BudgetReport", "DroppedNode", "jaccard", "shingles"]

_WORD = re.compile(r"\w+", re.UNICODE)


def shingles(text: str, size: int = 5) -> frozenset[int]:
    """Hashes of the ``size``-word shingles of ``text`` (lower-cased words; short texts give one shingle)."""
    words = [w.lower() for w in _WORD.findall(text)]
    if len(words) <= size:
        return frozenset({hash(" ".join(words))})
    return frozenset(hash(" ".join(words[i : i + size])) for i in range(len(words) - size + 1))


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """``|a & b| / |a | b|`` (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


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
    scores = [n.score for n in nodes]
    known = [s for s in scores if s is not None]
    if not known:
        return [0.5] * len(nodes)
    low, high = min(known), max(known)
    if low >= 0.0 and high <= 1.0:
        return [0.5 if s is None else float(s) for s in scores]
    span = high - low
    return [0.5 if s is None else (1.0 if span == 0 else (s - low) / span) for s in scores]


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
        items = [self._item(node, relevance) for node, relevance in zip(nodes, _relevances(nodes), strict=True)]
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

    def _item(self, node: NodeWithScore, relevance: float) -> ContextItem:
        return ContextItem(
            id=f"{node.node.node_id}#{id(node)}",
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

    def _duplicates(self, items: list[ContextItem], texts: list[str]) -> dict[str, tuple[ContextItem, float]]:
        """Item id -> (the better-ranked item it duplicates, similarity): 1.0 for the same normalized text."""
        order = sorted(range(len(items)), key=lambda i: (-items[i].relevance, i))
        kept: list[tuple[ContextItem, frozenset[int], str]] = []
        found: dict[str, tuple[ContextItem, float]] = {}
        for index in order:
            item, text = items[index], texts[index]
            digest = hashlib.sha256(" ".join(text.split()).encode()).hexdigest()
            grams = shingles(text, self.shingle_size) if self.near_duplicate_threshold is not None else frozenset()
            match = self._best_match(grams, digest, kept)
            if match is None:
                kept.append((item, grams, digest))
            else:
                found[item.id] = match
        return found

    def _best_match(
        self, grams: frozenset[int], digest: str, kept: list[tuple[ContextItem, frozenset[int], str]]
    ) -> tuple[ContextItem, float] | None:
        threshold = self.near_duplicate_threshold
        for other, other_grams, other_digest in kept:
            if digest == other_digest:
                return other, 1.0
            if threshold is not None and jaccard(grams, other_grams) >= threshold:
                return other, jaccard(grams, other_grams)
        return None

    def _report(
        self, plan: PlanResult, near: dict[str, tuple[ContextItem, float]], items: list[ContextItem]
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
                other, similarity = near[item.id]
                exact = similarity == 1.0
                dropped.append(
                    DroppedNode(
                        node_id=node_id[item.id],
                        source=item.source,
                        reason="duplicate_of" if exact else "near_duplicate_of",
                        detail=(
                            f"node {node_id[item.id]!r} has the same text as {node_id[other.id]!r}, which ranked higher"
                            if exact
                            else f"node {node_id[item.id]!r} is {similarity:.0%} similar (shingle Jaccard) to "
                            f"{node_id[other.id]!r}, which ranked higher; threshold {self.near_duplicate_threshold}"
                        ),
                        duplicate_of=node_id[other.id],
                        similarity=round(similarity, 4),
                    )
                )
        kept = [node_id[item.id] for item in plan.items]
        return BudgetReport(kept=kept, dropped=dropped, tokens=plan.budget_tokens, max_tokens=self.max_tokens)
