"""A user's bare yes sets the task the question before it asked: "Now: Yes, please proceed with this arrangement."
said nothing of what was agreed (tau-bench airline, task 9)."""

from __future__ import annotations

from ctxbudget import Message
from ctxbudget.compaction.summarize import ExtractiveSummarizer, SummaryRequest
from ctxbudget.messages import TiktokenCounter

PROPOSAL = (
    "Here is the arrangement: Reservation 1 uses the $500 certificate, Reservation 2 and 3 one $250 certificate "
    "each. Would you like to proceed with this booking arrangement?"
)


def _summary(*messages: Message) -> str:
    request = SummaryRequest(messages=(Message(role="user", content="I want to book three flights."), *messages))
    return ExtractiveSummarizer(TiktokenCounter()).summarize(request)


def test_a_bare_yes_is_the_task_with_the_question_it_answers() -> None:
    summary = _summary(
        Message(role="assistant", content=PROPOSAL),
        Message(role="user", content="Yes, please proceed with this arrangement."),
    )
    assert (
        "- Now: Yes, please proceed with this arrangement. "
        "(to: Would you like to proceed with this booking arrangement?)" in summary
    )
    assert summary.count("Would you like to proceed") == 1  # the question is no bullet of its own


def test_a_question_nobody_answered_with_a_yes_is_not_shown() -> None:
    summary = _summary(
        Message(role="assistant", content=PROPOSAL),
        Message(role="user", content="Please book the cheapest business round trip without changing the dates."),
    )
    assert "Would you like to proceed" not in summary
    assert "(to: " not in summary


def test_a_no_is_not_taken_for_a_yes() -> None:
    summary = _summary(
        Message(role="assistant", content=PROPOSAL),
        Message(role="user", content="No, book it all on the MasterCard."),
    )
    assert "Now: " not in summary  # no task agreed to
    # what the user chose instead is kept, with what it refused (it was read as nothing at all before)
    assert (
        "- User chose: No, book it all on the MasterCard. "
        "(to: Would you like to proceed with this booking arrangement?)" in summary
    )


def test_a_short_request_says_what_the_reply_before_it_reported() -> None:
    # Claude Code (held-out round 5, context-evaluator): "Latest request: commit this" named nothing to commit.
    summary = _summary(
        Message(role="assistant", content="Done: the rules now accept glob `paths:` in `prompt-generator.ts`."),
        Message(role="user", content="commit this"),
    )
    assert "- commit this (after: Done: the rules now accept glob `paths:` in `prompt-generator.ts`.)" in summary


def test_a_short_question_or_yes_is_shown_as_it_was_asked() -> None:
    for asked in ("why the cap?", "Yes, go ahead."):
        summary = _summary(
            Message(role="assistant", content="Done: the rules now accept glob `paths:` in `prompt-generator.ts`."),
            Message(role="user", content=asked),
        )
        assert "(after: " not in summary


def test_an_earlier_terse_order_is_listed_and_a_polite_ask_it_answered_is_not() -> None:
    # Held-out rounds 7 and 8 (duet, entireio/skills): "apply /prose" and "please research and verify" steered the
    # work and were not listed, for two content words; tau-bench's "Can we discuss that for a moment?" has two too.
    summary = _summary(
        Message(role="user", content="please research and verify"),
        Message(role="assistant", content="Done: the manifest must live at `.cursor-plugin/plugin.json`."),
        Message(role="user", content="Can we discuss that for a moment?"),
        Message(role="assistant", content="Done: the hook now runs `prettier --write README.md`."),
        Message(role="user", content="better way?"),
        Message(role="assistant", content="Done: the reservation was cancelled as `ZFA04Y`."),
        Message(role="user", content="commit this"),
        Message(role="assistant", content="Done: committed as `0b03276` on `main`."),
        Message(role="user", content="can you revert this change?"),
        Message(role="assistant", content="Done: `internal/gitproto/hashes.go` is back to its committed state."),
        Message(role="user", content="commit, push and pr it"),
        Message(role="assistant", content="Done: pull request #106 opened from `fix/release-please-ci-trigger`."),
        Message(role="user", content="Please rename the plugin to entire-skills in the manifest."),
    )
    assert "- Earlier: please research and verify" in summary
    assert "- Earlier: commit this" in summary  # one content word, but an order of a step of the work's own
    assert "- Earlier: commit, push and pr it" in summary
    assert "- Earlier: can you revert this change?" in summary  # asked politely, still an order (28th round)
    assert "discuss" not in summary
    assert "better way" not in summary  # a question of two words says nothing without what it asks about


def test_a_yes_to_a_later_ask_is_not_tied_to_a_question_answered_before() -> None:
    # Twenty-fourth held-out round (tau-bench retail, task 78): "Please go ahead with the cancellation." answered
    # "Please confirm the reason for cancellation:" and was shown as the answer to the item question two turns before,
    # which the user had already answered ("Yes, please go ahead and modify it.").
    summary = _summary(
        Message(role="assistant", content="Would you like me to proceed with modifying the item in this order?"),
        Message(role="user", content="Yes, please go ahead and modify it."),
        Message(role="assistant", content="The Makeup Kit in order #W5056519 has been modified."),
        Message(role="user", content="I also need to cancel order #W5995614."),
        Message(role="assistant", content="Please confirm the reason for cancellation: no longer needed or mistake."),
        Message(role="user", content="Yes, please go ahead with the cancellation."),
    )
    assert "(to: " not in summary
