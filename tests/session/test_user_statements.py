"""How a user's sentence is read: assent is no statement, a polite request is a request whatever its verb."""

from __future__ import annotations

import pytest
from ctxbudget.compaction.statements import classify, user_statements


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
        # tau-bench retail (twenty-second held-out round): acknowledging an error before the next request
        "I see, thanks for letting me know.",
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
        # tau-bench airline (thirty-second held-out round): the change of plan after a refusal, asked after its reason
        "Since I can't remove just Sophia, can we downgrade all passengers to economy instead?",
        "If that's not possible, could you cancel the whole order?",
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


def test_a_sentence_after_a_list_number_starts_its_line_and_joins_nothing() -> None:
    # Tenth held-out round (mini-swe-agent, scikit-learn): "1. Combine them in one block using && or ||" was split
    # into "1." and the rule, and the rule joined the unrelated line before it ("... from files Combine them ...").
    said = user_statements(
        "- However, you can prefix any action with `MY_ENV_VAR=MY_VALUE cd /path/to/dir && ...` or write/load "
        "environment variables from files\nIf you need to run multiple commands, either:\n"
        "1. Combine them in one block using && or ||\n2. Wait for the first command to complete"
    )
    texts = [statement.text for statement in said]
    assert texts[0].endswith("write/load environment variables from files")
    assert not any("from files Combine" in text for text in texts)


def test_a_templates_comments_are_no_ones_statements() -> None:
    """An issue template's guidance sits in HTML comments its author never saw once rendered."""
    text = (
        "<!-- Please be sure to check out our contributing guidelines,\nand have a search for similar issues. -->\n"
        "The nightly export fails with status 503 after 3 retries.\n<!-- Provide a general description. -->"
    )
    said = [statement.text for statement in user_statements(text)]
    assert said == ["The nightly export fails with status 503 after 3 retries."]


def test_a_title_between_paragraphs_is_no_statement_but_a_short_order_or_reply_is() -> None:
    # Twenty-fourth held-out round (Claude Code): a pasted review finding's "Medium Severity" stood as a user fact
    finding = "--agent path ignores the ENTIRE_SKIP_AGENT_CHECK bypass\n\nMedium Severity\n\nThe --agent path calls it."
    assert "Medium Severity" not in [statement.text for statement in user_statements(finding)]
    assert next(s.text for s in user_statements("Use PostgreSQL\n\nand keep the API stable.")) == "Use PostgreSQL"
    assert [statement.text for statement in user_statements("Mia Kim")] == ["Mia Kim"]


@pytest.mark.parametrize(
    "sentence",
    ["By the way, what time does the flight leave?", "For the record, is the refund already processed?"],
)
def test_a_question_after_a_clause_is_still_a_question(sentence: str) -> None:
    assert classify(sentence) == "question"
