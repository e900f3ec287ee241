"""Merging a ledger takes two shortcuts, and each gives what the pairwise rule it replaces gives.

* A statement another one of its section holds whole is found by one count over the section's texts joined, not by
  comparing every pair.
* A later statement meets as candidates for replacement only the earlier ones it could replace: none when it has no
  value, change cue, numbered label or slot; only those sharing enough subject words when it can only restate one
  (and, where a bare number is no new value, naming the same values but their figures); a numbered one, only those
  of its own number and the unnumbered ones.
"""

from __future__ import annotations

from ctxbudget.compaction import _ledger_merge
from ctxbudget.compaction._ledger_text import SECTION_OF
from ctxbudget.compaction.salience import Salient
from ctxbudget.compaction.supersession import SupersessionIndex, subject_of
from ctxbudget.compaction.textscan import informative_tokens
from hypothesis import given, settings
from hypothesis import strategies as st

_WORDS = ["port", "5434", "staging", "db", "now", "uses", "the", "api", "key", "v2", "Marta", "signs", "off", "$500"]
_KINDS = ["fact", "constraint", "decision", "finding", "request"]

texts = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map(" ".join)
items = st.lists(st.tuples(st.sampled_from(_KINDS), texts), min_size=1, max_size=14)


def _salient(entries: list[tuple[str, str]]) -> list[Salient]:
    return [
        Salient(kind, text, None, order, informative_tokens(text))  # type: ignore[arg-type]  # kinds listed above
        for order, (kind, text) in enumerate(entries)
    ]


@settings(max_examples=200, deadline=None)
@given(items)
def test_containment_by_one_count_is_the_pairwise_rule(entries: list[tuple[str, str]]) -> None:
    unique: dict[tuple[str, str], Salient] = {}
    for item in _salient(entries):  # the exact repeats go first in the merge: the shortcut sees distinct texts
        unique[(SECTION_OF[item.kind], _ledger_merge.normal(item.text))] = item
    spoken = list(unique.values())
    padded = [(SECTION_OF[i.kind], f" {_ledger_merge.normal(i.text)} ") for i in spoken]
    pairwise = {
        id(item)
        for item, (section, text) in zip(spoken, padded, strict=True)
        if any(other != text and where == section and text in other for where, other in padded)
    }
    assert _ledger_merge._contained(spoken) == pairwise


_SUBJECT = ["the", "staging", "db", "budget", "cap", "is", "uses", "release", "team", "nightly", "export", "limit"]
_VALUES = ["$500", "$300", "v2.1", "v3.0", "db-1.internal", "5434", "2026-03-01", "Marta"]
restatements = st.tuples(
    st.lists(st.sampled_from(_SUBJECT), min_size=2, max_size=9, unique=True),
    st.sampled_from(_VALUES),
    st.sampled_from(["", "now", "actually", "from now on", "reply tone"]),
).map(lambda parts: " ".join([*parts[0], parts[1], parts[2]]).strip())


labelled = st.tuples(st.sampled_from(["FACT-1: ", "FACT-2: ", "Turn 3: ", "note: FACT-1 update: "]), restatements).map(
    "".join
)
"""Statements with a numbered label: one replaces another of its own number, and meets the unnumbered ones."""


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(texts, restatements, labelled), min_size=2, max_size=12), st.booleans())
def test_candidates_keep_every_statement_a_later_one_replaces(statements: list[str], counters: bool) -> None:
    read = [(subject_of(text), _ledger_merge.posting_keys(subject_of(text))) for text in statements]
    index = SupersessionIndex([subject for subject, _ in read], counters_change=counters)
    postings = _ledger_merge.Postings(index)
    for position, (_, keys) in enumerate(read):
        every = list(range(position))  # every earlier statement: the candidates found must lose none it replaces
        found = postings.candidates(position, keys)
        assert found <= set(every)
        assert index.replaced_by(position, sorted(found)) == (index.replaced_by(position, every) if every else None)
        postings.add(position, keys)


def test_a_restatement_sharing_five_of_six_words_is_still_a_candidate() -> None:
    statements = ["staging budget cap nightly export is $500", "staging budget cap nightly export limit is $300"]
    read = [(subject_of(text), _ledger_merge.posting_keys(subject_of(text))) for text in statements]
    index = SupersessionIndex([subject for subject, _ in read])
    postings = _ledger_merge.Postings(index)
    postings.add(0, read[0][1])
    assert index.restatements_only(1)
    assert postings.candidates(1, read[1][1]) == {0}
    assert index.replaced_by(1, [0]) == 0
