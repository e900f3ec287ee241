"""A change the user asked to undo: the decisions that made it read as reverted, not as the code that stands.

Held-out (entireio/git-sync, "can you revert this change?"): after the revert the summary still listed "Made
`TestTranslator_RewritesCrossBranchReferences` robust" under Decisions, as if the reverted heuristic stood.
"""

from __future__ import annotations

import pytest
from ctxbudget import Message
from ctxbudget.compaction._reverts import REVERTED, mark_reverted, revert_order
from ctxbudget.compaction._salient import Salient
from ctxbudget.compaction.summarize import ExtractiveSummarizer, SummaryRequest
from ctxbudget.messages import TiktokenCounter


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("can you revert this change?", ()),
        ("Please undo that.", ()),
        ("ok, roll back src/app.py please", ("src/app.py",)),
        ("could you please back out the `cache_ttl` change?", ("cache_ttl",)),
        ("I do not want you to revert it", None),  # no order to revert
        ("Keep the revert script in tools/", None),
        # hostile review 5: a sentence about undo is no order to undo
        ("Undo doesn't work anymore, please fix it.", None),
        ("Rollback is broken on staging", None),
        ("Undo/redo is broken", None),
        ("Please revert the config changes.", ()),
    ],
)
def test_an_order_to_revert_and_what_it_names(text: str, named: tuple[str, ...] | None) -> None:
    assert revert_order(text) == named


def _item(kind: str, text: str, order: int) -> Salient:
    return Salient(kind, text, None, order, frozenset())  # type: ignore[arg-type]


def test_only_the_decisions_since_the_request_before_the_order_are_marked() -> None:
    items = [
        _item("decision", "Use PostgreSQL for the store.", 0),
        _item("request", "Add a letter guard to the hash pattern.", 1),
        _item("decision", "Require an a-f letter in abbreviated prefixes.", 2),
        _item("decision", "User chose: the heuristic, for now.", 3),
        _item("request", "can you revert this change?", 4),
        _item("decision", "Return whether ensureEmptyTarget created the directory.", 5),
    ]
    texts = [item.text for item in mark_reverted(items)]
    assert texts == [
        "Use PostgreSQL for the store.",
        "Add a letter guard to the hash pattern.",
        f"{REVERTED}Require an a-f letter in abbreviated prefixes.",
        "User chose: the heuristic, for now.",  # the user's own choice is theirs to restate
        "can you revert this change?",
        "Return whether ensureEmptyTarget created the directory.",
    ]


def test_an_order_that_names_what_to_revert_marks_only_the_decisions_naming_it() -> None:
    items = [
        _item("request", "Tune the cache and the retries.", 0),
        _item("decision", "Set `cache_ttl` to 600 seconds.", 1),
        _item("decision", "Retry three times with backoff.", 2),
        _item("request", "please roll back the cache_ttl change", 3),
    ]
    assert [item.text.startswith(REVERTED) for item in mark_reverted(items)] == [False, True, False, False]


def test_an_earlier_summarys_order_marks_nothing_again() -> None:
    items = [_item("decision", "Require a letter.", -3), _item("request", "revert this", -2)]
    assert mark_reverted(items) == items  # marked (or not) when that summary was built


def test_the_summary_shows_the_reverted_decision_as_reverted() -> None:
    messages = (
        Message(role="user", content="Make abbreviated hash prefixes need at least one a-f letter."),
        Message(
            role="assistant",
            content="Made `TestCrossBranch` robust — it picks a letter-bearing prefix instead of `cAHex[:8]`.",
        ),
        Message(role="user", content="not sure I like the heuristic though"),
        Message(role="user", content="can you revert this change?"),
        Message(role="assistant", content="Reverted: the guard and its test are gone, and the build passes."),
    )
    summary = ExtractiveSummarizer(TiktokenCounter()).summarize(SummaryRequest(messages=messages))
    assert f"- {REVERTED}Made `TestCrossBranch` robust" in summary


def test_a_name_is_matched_as_a_whole_word() -> None:
    # Hostile review 5: "can you revert a.py?" marked the decision about data.py as reverted.
    items = [
        _item("request", "Speed up the loader and add retries to the client.", 0),
        _item("decision", "I decided to cache parsed rows in data.py instead of parsing twice.", 1),
        _item("decision", "I decided to add retries in a.py instead of failing at once.", 2),
        _item("request", "can you revert a.py?", 3),
    ]
    assert [item.text.startswith(REVERTED) for item in mark_reverted(items)] == [False, False, True, False]
