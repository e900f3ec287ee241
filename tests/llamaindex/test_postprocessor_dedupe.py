"""What ``BudgetNodePostprocessor`` reports as a duplicate, and what finding duplicates costs.

* A node duplicates the first better-ranked kept node that has the same whitespace-normalized text (``duplicate_of``,
  "the same text") or whose shingle Jaccard similarity reaches the threshold (``near_duplicate_of``, with the
  similarity). The decisions are exactly those of comparing every node with every kept node.
* The number of similarity computations grows linearly with the number of nodes, not with its square.
* The same ``NodeWithScore`` object given twice is kept once.
* Texts without word characters are compared on their characters: only equal ones are "the same text".
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_index.core.schema import NodeWithScore, TextNode

from llamaindex_ctxbudget import BudgetNodePostprocessor, BudgetReport
from llamaindex_ctxbudget import _dedupe as dedupe
from llamaindex_ctxbudget.postprocessor import jaccard, shingles

Decision = tuple[str, str, float]
"""(reason, duplicate_of, similarity) of one dropped duplicate."""


def _nodes(texts: list[str], scores: list[float] | None = None) -> list[NodeWithScore]:
    scores = scores or [1.0 - i / (2 * len(texts)) for i in range(len(texts))]  # best first, all distinct
    pairs = enumerate(zip(texts, scores, strict=True))
    return [NodeWithScore(node=TextNode(id_=f"n{i}", text=text), score=score) for i, (text, score) in pairs]


def _run(post: BudgetNodePostprocessor, nodes: list[NodeWithScore]) -> tuple[list[str], BudgetReport]:
    kept = [n.node.node_id for n in post.postprocess_nodes(nodes)]
    assert post.last_report is not None
    return kept, post.last_report


def _duplicates(report: BudgetReport) -> dict[str, Decision]:
    return {
        d.node_id: (d.reason, d.duplicate_of or "", d.similarity or 0.0)
        for d in report.dropped
        if d.reason in {"duplicate_of", "near_duplicate_of"}
    }


def _every_pair(texts: list[str], scores: list[float], threshold: float, size: int) -> dict[str, Decision]:
    """The reference: best-ranked first, each node against every node kept so far, the first match wins."""
    order = sorted(range(len(texts)), key=lambda i: (-scores[i], i))
    kept: list[int] = []
    found: dict[str, Decision] = {}
    for i in order:
        for k in kept:
            if " ".join(texts[i].split()) == " ".join(texts[k].split()):
                found[f"n{i}"] = ("duplicate_of", f"n{k}", 1.0)
                break
            similarity = jaccard(shingles(texts[i], size), shingles(texts[k], size))
            if similarity >= threshold:
                found[f"n{i}"] = ("near_duplicate_of", f"n{k}", round(similarity, 4))
                break
        else:
            kept.append(i)
    return found


_WORDY = st.lists(st.sampled_from(["red", "Red", "blue", "green", "gold"]), max_size=10).map(" ".join)
_SYMBOLS = st.text(alphabet="-=!→🔥 ", max_size=8)


@settings(max_examples=300)
@given(
    texts=st.lists(st.one_of(_WORDY, _WORDY.map(lambda t: t + "!"), _SYMBOLS), min_size=1, max_size=14),
    data=st.data(),
    threshold=st.one_of(st.sampled_from([0.2, 1 / 3, 0.5, 2 / 3, 0.85, 1.0]), st.floats(0.01, 1.0)),
    size=st.integers(1, 3),
)
def test_duplicates_are_exactly_those_of_comparing_every_pair(
    texts: list[str], data: st.DataObject, threshold: float, size: int
) -> None:
    scores = data.draw(st.lists(st.sampled_from([0.1, 0.5, 0.9]), min_size=len(texts), max_size=len(texts)))
    post = BudgetNodePostprocessor(max_tokens=None, near_duplicate_threshold=threshold, shingle_size=size)
    kept, report = _run(post, _nodes(texts, scores))
    expected = _every_pair(texts, scores, threshold, size)
    assert _duplicates(report) == expected
    assert sorted(kept) == sorted(f"n{i}" for i in range(len(texts)) if f"n{i}" not in expected)


@pytest.fixture
def comparisons(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts every shingle-similarity computation the duplicate pass makes."""
    count = [0]
    real = dedupe.jaccard

    def counted(a: frozenset[int], b: frozenset[int]) -> float:
        count[0] += 1
        return real(a, b)

    monkeypatch.setattr(dedupe, "jaccard", counted)
    return count


def _random_texts(n: int, *, header: str = "", seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(5000)]
    return [header + " ".join(rng.choice(vocab) for _ in range(25)) for _ in range(n)]


@pytest.mark.parametrize("n", [250, 500, 1000])
def test_distinct_nodes_cost_at_most_one_comparison_each(n: int, comparisons: list[int]) -> None:
    kept, _ = _run(BudgetNodePostprocessor(max_tokens=None), _nodes(_random_texts(n)))
    assert len(kept) == n
    assert comparisons[0] <= n  # comparing every pair: n * (n - 1) / 2


@pytest.mark.parametrize("n", [250, 500, 1000])
def test_a_header_every_node_shares_costs_no_comparison_per_pair(n: int, comparisons: list[int]) -> None:
    header = "Source: the company handbook, section on policies and procedures, revision twelve of the year. "
    kept, _ = _run(BudgetNodePostprocessor(max_tokens=None), _nodes(_random_texts(n, header=header)))
    assert len(kept) == n
    assert comparisons[0] <= n


@pytest.mark.parametrize("n", [250, 500, 1000])
def test_each_near_duplicate_is_compared_once(n: int, comparisons: list[int]) -> None:
    rng = random.Random(1)
    base = [f"word{i}" for i in range(100)]
    variants = []
    for _ in range(n - 1):
        words = list(base)
        words[rng.randrange(100)] = f"changed{rng.randrange(10**9)}"
        variants.append(" ".join(words))
    kept, report = _run(BudgetNodePostprocessor(max_tokens=None), _nodes([" ".join(base), *variants]))
    assert kept == ["n0"]
    assert {d.reason for d in report.dropped} == {"near_duplicate_of"}
    assert {d.duplicate_of for d in report.dropped} == {"n0"}
    assert comparisons[0] == n - 1


def test_the_same_node_object_given_twice_is_kept_once() -> None:
    hit = NodeWithScore(node=TextNode(text="The refund window is 30 days.", id_="policy-1"), score=0.9)
    other = NodeWithScore(node=TextNode(text="Shipping takes 5 business days.", id_="ship-1"), score=0.5)
    post = BudgetNodePostprocessor(max_tokens=3000)
    out = post.postprocess_nodes([hit, other, hit])
    assert [n.node.node_id for n in out] == ["policy-1", "ship-1"]
    assert out[0] is hit
    report = post.last_report
    assert report is not None
    assert report.kept == ["policy-1", "ship-1"]
    [again] = report.dropped
    assert (again.node_id, again.reason, again.duplicate_of) == ("policy-1", "duplicate_of", "policy-1")
    assert "given again" in again.detail


def test_different_texts_without_words_are_all_kept() -> None:
    texts = ["=> {} <=", "🔥🔥 !!!", "→ ≠ ∅ ∑", "---"]
    kept, report = _run(BudgetNodePostprocessor(max_tokens=3000), _nodes(texts))
    assert kept == ["n0", "n1", "n2", "n3"]
    assert report.dropped == []


def test_equal_texts_without_words_are_the_same_text() -> None:
    kept, report = _run(BudgetNodePostprocessor(max_tokens=3000), _nodes(["🔥🔥 !!!", "  🔥🔥\n!!!  "]))
    assert kept == ["n0"]
    [copy] = report.dropped
    assert (copy.reason, copy.duplicate_of, copy.similarity) == ("duplicate_of", "n0", 1.0)
    assert "has the same text (whitespace aside) as 'n0'" in copy.detail


def test_texts_without_words_are_near_duplicates_by_their_character_shingles() -> None:
    rule = "-=" * 40
    kept, report = _run(BudgetNodePostprocessor(max_tokens=3000), _nodes([rule, rule + "-", "~~~ *** ~~~"]))
    assert kept == ["n0", "n2"]
    [near] = report.dropped
    assert (near.node_id, near.reason, near.duplicate_of, near.similarity) == ("n1", "near_duplicate_of", "n0", 1.0)
    assert "same text" not in near.detail
    assert "100% similar (shingle Jaccard)" in near.detail


def test_different_texts_with_the_same_words_are_near_duplicates_not_the_same_text() -> None:
    texts = ["Refunds take 30 days.", "refunds: TAKE 30 days!"]
    kept, report = _run(BudgetNodePostprocessor(max_tokens=3000), _nodes(texts))
    assert kept == ["n0"]
    [near] = report.dropped
    assert (near.reason, near.duplicate_of, near.similarity) == ("near_duplicate_of", "n0", 1.0)
    assert "same text" not in near.detail


def test_wordless_texts_share_no_shingle_with_texts_of_words() -> None:
    assert shingles("---") != shingles("")
    assert shingles("   ") == frozenset()
    assert not shingles("- - -") & shingles("a b c", size=1)
    assert jaccard(shingles("=> {} <="), shingles("---")) == 0.0


def test_mutated_copies_of_real_length_texts_are_decided_as_comparing_every_pair() -> None:
    rng = random.Random(2)
    vocab = [f"w{i}" for i in range(400)]
    bases = [[rng.choice(vocab) for _ in range(rng.randrange(5, 60))] for _ in range(30)]
    texts = []
    for _ in range(300):
        words = list(rng.choice(bases))
        for _ in range(rng.randrange(4)):
            words[rng.randrange(len(words))] = rng.choice(vocab)
        texts.append(" ".join(words))
    scores = [rng.choice([0.2, 0.4, 0.6, 0.8]) for _ in texts]
    kept, report = _run(BudgetNodePostprocessor(max_tokens=None), _nodes(texts, scores))
    expected = _every_pair(texts, scores, 0.85, 5)
    assert {reason for reason, _, _ in expected.values()} == {"duplicate_of", "near_duplicate_of"}
    assert _duplicates(report) == expected
    assert len(kept) == len(texts) - len(expected)
