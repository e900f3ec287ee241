"""Which earlier statement of the user's a later one corrects, read from sessions nobody here wrote.

The natural billing session corrects a port inside a host ("actually use port 5434"), and mentions "the new refund
flow" without changing anything; tau-bench task 46 gives three passengers' dates of birth, then a departure date; the
compaction-conformance-kit's paraphrased updates say "New ceiling for trip costs: ..." and "X now owns the pager".
"""

from __future__ import annotations

from ctxbudget import Message, SummaryRequest
from ctxbudget.compaction.summarize import ExtractiveSummarizer
from ctxbudget.compaction.supersession import subject_of
from ctxbudget.providers import counter_for_model

COUNTER = counter_for_model("gpt-4o")


def summary_of(*said: str, role: str = "user") -> str:
    """The offline summary of ``said``, each one message of ``role``."""
    messages = tuple(Message(role=role, content=text) for text in said)
    return ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages))


def facts(*said: str) -> list[str]:
    """The bullets of the summary of ``said`` (user messages), in order."""
    return [line.removeprefix("- ") for line in summary_of(*said).splitlines() if line.startswith("- ")]


def test_a_corrected_port_marks_the_host_statement_superseded_instead_of_losing_the_host() -> None:
    kept = facts(
        "The staging db lives at db-stg-4.internal:5433, you can use it for the repro.",
        "Actually use port 5434 for staging, 5433 is the old replica that lags behind.",
    )
    assert kept == [
        "(superseded) The staging db lives at db-stg-4.internal:5433, you can use it for the repro.",
        "Actually use port 5434 for staging, 5433 is the old replica that lags behind.",
    ]


def test_a_statement_naming_something_new_changes_nothing_said_before() -> None:
    marta = "Marta from finance signs off on anything that touches refunds, so keep her in the loop before we merge."
    flag = "The feature flag for the new refund flow is refunds_v2_enabled; keep it off in prod until Marta agrees."
    assert not subject_of(flag).cue
    assert facts(marta, flag) == [marta, flag]


def test_a_departure_date_does_not_correct_a_passengers_date_of_birth() -> None:
    passenger = "Passenger Three: First Name - Sarah, Last Name - Johnson, Date of Birth - 1995-07-15"
    departure = "Actually, May 17, 2024, would be a good date for the departure."
    assert facts(passenger, departure) == [passenger, departure]


def test_paraphrased_updates_still_replace_what_they_update() -> None:
    # Two of the kit's sessions: each update replaces the one statement it updates.
    assert facts(
        "HARD CONSTRAINT: Field-trip expenses must stay at or below $300.",
        "FACT: Lisa Park is handling support escalation this week.",
        "New ceiling for trip costs: keep them below seven hundred dollars.",
        "Support duty now belongs to Tom Wu.",
    ) == ["New ceiling for trip costs: keep them below seven hundred dollars.", "Support duty now belongs to Tom Wu."]
    assert facts(
        "HARD CONSTRAINT: Project budget cap is $420 total. Never exceed without explicit approval.",
        "FACT: The on-call rotation owner this week is Ana Silva.",
        "Quick update: keep project spend under nine hundred dollars from now on.",
        "Bo Chen now owns the pager this week.",
    ) == [
        "Quick update: keep project spend under nine hundred dollars from now on.",
        "Bo Chen now owns the pager this week.",
    ]


def test_new_announces_a_change_only_where_a_clause_starts_with_it() -> None:
    assert subject_of("The new budget is $700.").cue
    assert subject_of("New budget cap: $700.").cue
    assert subject_of("Heads up. The new on-call lead = Priya").cue
    assert not subject_of("Use the new endpoint.").cue
    assert not subject_of("The feature flag for the new parser is called parse_v2.").cue


def test_the_correct_value_said_later_replaces_the_earlier_total() -> None:
    # tau-bench task 46: the agent's own findings, the first total wrong.
    summary = summary_of(
        "The correct total cost for the booking is indeed $957, as initially calculated.",
        "The correct total, including any additional fees, is $1,002.",
        role="assistant",
    )
    assert "$1,002" in summary
    assert "$957" not in summary


def test_the_assistants_next_step_does_not_revise_its_earlier_decision() -> None:
    # tau-bench airline task 2 (the quality workload's trajectory): two steps of one plan, not a revision.
    said = (
        "I understand your situation. I will proceed with downgrading all your reservations from business to economy.",
        "I will now proceed with updating the reservations and processing the refunds to the original payment methods.",
    )
    assert not subject_of(said[1]).cue
    summary = summary_of(*said, role="assistant")
    assert "downgrading all your reservations" in summary
    assert "processing the refunds" in summary
