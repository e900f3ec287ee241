"""How a user's sentence is read: assent is no statement, a polite request is a request whatever its verb."""

from __future__ import annotations

import pytest
from ctxbudget.compaction.statements import classify


@pytest.mark.parametrize(
    "sentence",
    [
        "Yes, that sounds good.",
        "Okay, thanks again!",
        "Sure, that works.",
        "Great, that's perfect.",
        # tau-bench airline (eighth held-out round): gratitude and approval filled "User facts"
        "That sounds perfect!",
        "Thank you for finding this solution.",
        "Thank you for making these changes.",
        # tau-bench airline (ninth held-out round): reactions to a quote
        "That's much more reasonable!",
        "All of those options are more expensive than I was expecting.",
    ],
)
def test_assent_is_no_statement(sentence: str) -> None:
    assert classify(sentence) is None


@pytest.mark.parametrize(
    "sentence",
    [
        "Please proceed with changing to flight HAT052 and upgrade to economy.",
        "Yes, please proceed with upgrading to economy class.",
        "Could you proceed with changing my reservation to that flight?",
        # tau-bench retail (third held-out round): the task stayed the request this one replaced
        "In that case, please cancel that skateboard order for me, so I can reorder when it is available.",
    ],
)
def test_a_polite_request_is_a_request_whatever_its_verb(sentence: str) -> None:
    assert classify(sentence) == "request"


@pytest.mark.parametrize(
    "sentence",
    [
        "Yes, my user ID is james_lee_6136.",
        "That works for the staging db at 5434.",
        "Thanks, the refund should go to gift card 1646646.",
        "Those tests are flaky.",
        "It was Marta from finance who signs off.",
        "That is more than the $200 cap.",
    ],
)
def test_a_statement_after_an_assent_is_still_a_fact(sentence: str) -> None:
    assert classify(sentence) == "fact"
