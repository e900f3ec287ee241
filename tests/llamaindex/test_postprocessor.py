"""BudgetNodePostprocessor alone and inside a real query engine over a VectorStoreIndex."""

from __future__ import annotations

import pytest
from ctxbudget.context.render import SEPARATOR, render_envelope
from ctxbudget.errors import InvalidPolicyError
from ctxbudget.messages.tokens import TiktokenCounter
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from pydantic import Field

from llamaindex_ctxbudget import BudgetNodePostprocessor, NodesBudgetedEvent, StrictFakeLLM

from .conftest import assert_all_requests_valid


def _node(node_id: str, text: str, score: float, file_name: str) -> NodeWithScore:
    return NodeWithScore(node=TextNode(id_=node_id, text=text, metadata={"file_name": file_name}), score=score)


PARAGRAPH = (
    "The compaction pipeline first bounds oversized tool outputs to a head and tail excerpt, then clears older "
    "tool results outside the protected budget, and only then summarizes the older safe prefix of the history "
    "while keeping a recent tail of messages, pulling the cut back so that no tool result is separated from the "
    "call that produced it, merging the previous summary so that nothing is nested or trimmed away. "
)


def test_ranks_dedupes_and_caps_with_a_report() -> None:
    nodes = [
        _node("a", PARAGRAPH, 0.9, "x.md"),
        _node("a-copy", "  " + PARAGRAPH.replace(" ", "   "), 0.5, "y.md"),  # same text, other spacing
        _node("a-near", PARAGRAPH + "One extra sentence.", 0.8, "z.md"),
        _node("b", "Unrelated text about tokenizers " * 10, 0.7, "x.md"),
        _node("c", "Another unrelated text on planners " * 10, 0.6, "x.md"),
        _node("d", "Notes on persistence and snapshots " * 10, 0.4, "w.md"),
    ]
    post = BudgetNodePostprocessor(max_tokens=10_000, max_nodes_per_source=2)
    kept = post.postprocess_nodes(nodes)
    assert [n.node.node_id for n in kept] == ["a", "b", "d"]
    report = post.last_report
    assert report is not None
    reasons = {d.node_id: (d.reason, d.duplicate_of) for d in report.dropped}
    assert reasons == {
        "a-copy": ("duplicate_of", "a"),
        "a-near": ("near_duplicate_of", "a"),
        "c": ("source_item_cap", None),
    }
    assert "2 already used of 2" in next(d.detail for d in report.dropped if d.node_id == "c")


def test_budget_is_exact_by_the_counter_and_smaller_nodes_still_fit() -> None:
    counter = TiktokenCounter()
    big = _node("big", "word " * 900, 0.9, "a.md")
    small = _node("small", "tiny note", 0.1, "b.md")
    medium = _node("medium", "medium text " * 100, 0.5, "c.md")
    post = BudgetNodePostprocessor(max_tokens=400, counter=counter)
    kept = post.postprocess_nodes([big, medium, small])
    assert [n.node.node_id for n in kept] == ["medium", "small"]
    report = post.last_report
    assert report is not None
    cost = sum(
        counter.count_text(
            render_envelope(
                source=n.node.metadata["file_name"], type="document", content=n.node.get_content(MetadataMode.LLM)
            )
            + SEPARATOR
        )
        for n in kept
    )
    assert report.tokens == cost <= 400
    assert [d.reason for d in report.dropped] == ["over_budget"]


def test_scores_outside_unit_range_are_scaled_and_none_is_neutral() -> None:
    nodes = [
        _node("low", "alpha " * 5, -3.0, "a"),
        _node("high", "beta " * 5, 12.0, "b"),
        _node("none", "gamma", 0, "c"),
    ]
    nodes[2].score = None
    kept = BudgetNodePostprocessor(max_tokens=1000).postprocess_nodes(nodes)
    assert [n.node.node_id for n in kept] == ["high", "none", "low"]


def test_invalid_limits_raise_naming_the_field() -> None:
    with pytest.raises(InvalidPolicyError, match="max_tokens"):
        BudgetNodePostprocessor(max_tokens=0)
    with pytest.raises(InvalidPolicyError, match="near_duplicate_threshold"):
        BudgetNodePostprocessor(near_duplicate_threshold=1.5)


class _Collect(BaseEventHandler):
    seen: list[NodesBudgetedEvent] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "Collect"

    def handle(self, event: object, **kwargs: object) -> None:
        if isinstance(event, NodesBudgetedEvent):
            self.seen.append(event)


def _documents() -> list[Document]:
    docs = []
    for file_index in range(4):
        for part in range(8):
            text = (
                f"File {file_index} part {part}. " + f"Detail {part} of topic {file_index} explained at length. " * 40
            )
            docs.append(Document(text=text, metadata={"file_name": f"f{file_index}.md"}))
    docs.append(Document(text=docs[0].text, metadata={"file_name": "mirror.md"}))  # an exact mirror
    return docs


def test_query_engine_over_vector_index_stays_in_budget() -> None:
    handler = _Collect()
    get_dispatcher().add_event_handler(handler)
    index = VectorStoreIndex.from_documents(_documents(), embed_model=MockEmbedding(embed_dim=8))
    post = BudgetNodePostprocessor(max_tokens=1500, max_nodes=6, max_nodes_per_source=2)
    llm = StrictFakeLLM(context_window=2600)
    engine = index.as_query_engine(llm=llm, similarity_top_k=33, node_postprocessors=[post])
    response = engine.query("What does part 3 explain?")
    assert str(response)
    assert_all_requests_valid(llm, 2600)
    report = post.last_report
    assert report is not None
    assert 0 < len(response.source_nodes) <= 6
    assert report.tokens <= 1500
    per_source: dict[str, int] = {}
    for node in response.source_nodes:
        source = node.node.metadata["file_name"]
        per_source[source] = per_source.get(source, 0) + 1
    assert max(per_source.values()) <= 2
    assert len(report.kept) + len(report.dropped) == 33
    assert any(d.reason == "duplicate_of" for d in report.dropped)  # the mirror
    assert handler.seen
    assert handler.seen[-1].kept_node_ids == report.kept
