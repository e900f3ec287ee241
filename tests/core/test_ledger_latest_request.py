"""The latest request is shown once: its message's questions are not listed again under Task (held-out tau-bench
airline task 15, thirty-second round: "Earlier: And will I receive any email confirmation about these changes?" sat
above the Latest request that ended on the same question)."""

from __future__ import annotations

from ctxbudget import Message
from ctxbudget.compaction.summarize import ExtractiveSummarizer, SummaryRequest
from ctxbudget.messages import TiktokenCounter

LATEST = (
    "Just to confirm, the refund of $4,956 has already been processed to my gift card? How long will it take for "
    "the funds to reflect in my gift card balance? And will I receive any email confirmation about these changes?"
)


def test_a_question_of_the_latest_request_is_not_listed_again_as_an_earlier_one() -> None:
    request = SummaryRequest(
        messages=(
            Message(role="user", content="I need to downgrade reservation GV1N64 to economy for all passengers."),
            Message(role="assistant", content="The refund of $4,956 has been processed to your gift card."),
            Message(role="user", content=LATEST),
        )
    )
    summary = ExtractiveSummarizer(TiktokenCounter()).summarize(request)
    assert "## Latest request" in summary
    assert summary.count("email confirmation about these changes") == 1
    assert summary.count("funds to reflect in my gift card balance") == 1


def test_an_earlier_request_that_only_shares_words_with_the_latest_is_still_listed() -> None:
    request = SummaryRequest(
        messages=(
            Message(role="user", content="I need to change reservation GV1N64."),
            Message(role="user", content="Please cancel order W123 today."),
            Message(role="assistant", content="Order W123 is cancelled; the refund of $30 goes to your card."),
            Message(role="user", content="Please cancel order W1234 too, and tell me when the refund arrives?"),
        )
    )
    summary = ExtractiveSummarizer(TiktokenCounter()).summarize(request)
    assert "cancel order W123 today" in summary
