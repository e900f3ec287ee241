"""How ``BudgetNodePostprocessor`` ranks nodes by score, missing and non-finite scores included.

* Finite scores keep their order, whatever other scores are in the batch.
* ``None`` (no score) is neutral: 0.5 on the 0..1 scale.
* ``+inf`` ranks at the top (level with the best finite score), ``-inf`` and NaN at the bottom.
* Scores near the float limits are scaled without overflowing.
"""

from __future__ import annotations

import math

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from llamaindex_ctxbudget import BudgetNodePostprocessor

NAN, INF = math.nan, math.inf


def _nodes(scores: list[float | None]) -> list[NodeWithScore]:
    return [
        NodeWithScore(node=TextNode(text=f"distinct passage number {i} about topic{i}", id_=f"n{i}"), score=s)
        for i, s in enumerate(scores)
    ]


def _kept(scores: list[float | None], **limits: int) -> list[str]:
    post = BudgetNodePostprocessor(max_tokens=limits.pop("max_tokens", 3000), **limits)
    return [n.node.node_id for n in post.postprocess_nodes(_nodes(scores))]


@pytest.mark.parametrize(
    ("scores", "best_two"),
    [
        ([NAN, 0.1, 0.2, 0.99], ["n3", "n2"]),
        ([0.1, 0.2, 0.99, NAN], ["n2", "n1"]),
        ([0.1, 0.2, INF, 0.99], ["n2", "n3"]),
        ([5.0, 1.0, -INF, 9.0], ["n3", "n0"]),
        ([-INF, 0.3, NAN, 0.7, INF], ["n4", "n3"]),
    ],
)
def test_a_non_finite_score_does_not_cancel_the_ranking(scores: list[float], best_two: list[str]) -> None:
    assert _kept(scores, max_nodes=2) == best_two


@pytest.mark.parametrize(
    "scores",
    [
        [0.3, NAN, 0.9, 0.1, -INF, 0.5, INF, 0.7],
        [30.0, NAN, -4.0, 12.5, -INF, 7.0, INF, 0.0],
        [NAN, NAN, 0.4, 0.6, 0.2],
    ],
)
def test_finite_scores_keep_their_order(scores: list[float]) -> None:
    finite = sorted((s, f"n{i}") for i, s in enumerate(scores) if math.isfinite(s))
    kept = _kept(scores, max_tokens=None)
    assert [node for node in kept if node in {n for _, n in finite}] == [n for _, n in reversed(finite)]


def test_inf_ranks_first_none_is_neutral_and_nan_and_minus_inf_rank_last() -> None:
    kept = _kept([0.2, NAN, 0.9, None, -INF, INF, 0.6], max_tokens=None)
    assert kept[:5] == ["n5", "n2", "n6", "n3", "n0"]
    assert set(kept[5:]) == {"n1", "n4"}


def test_plus_inf_is_level_with_the_best_finite_score() -> None:
    assert set(_kept([5.0, INF, 9.0, 7.0], max_nodes=2)) == {"n1", "n2"}


def test_scores_near_the_float_limits_are_ranked() -> None:
    assert _kept([-1e308, 1e308, 0.0, 5e307], max_tokens=None) == ["n1", "n3", "n2", "n0"]


def test_a_batch_of_only_non_finite_scores_is_kept_whole() -> None:
    assert sorted(_kept([NAN, -INF, NAN], max_tokens=None)) == ["n0", "n1", "n2"]
