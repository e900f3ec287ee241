"""The same call failing the same way again is counted, not folded away: a model that sees one failure retries it.

tau-bench airline (task 9): ``book_reservation`` failed four times with ``payment amount does not add up, total
price is 1203, but paid 833``; the summary showed it once, and the agent tried a fifth time.
"""

from __future__ import annotations

from ctxbudget import Message, ToolCall
from ctxbudget.compaction._ledger_text import NOTHING_LISTED, render_ledger
from ctxbudget.compaction.summarize import ExtractiveSummarizer, SummaryRequest
from ctxbudget.messages import TiktokenCounter

ARGS = {"user_id": "mohamed_silva_9265", "cabin": "business", "payment_methods": [{"id": "gift_card_8020792"}]}
ERROR = "Error: payment amount does not add up, total price is 1203, but paid 833"


def _called(call: ToolCall, result: str) -> tuple[Message, Message]:
    """An assistant turn making ``call`` and the tool's ``result``."""
    return (
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", tool_call_id=call.id, name=call.name, content=result),
    )


def _attempt(n: int, error: str = ERROR) -> tuple[Message, Message]:
    return _called(ToolCall(id=f"c{n}", name="book_reservation", args=ARGS), error)


def _errors(summary: str) -> list[str]:
    section = summary.split("## Errors\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


def test_a_failure_repeated_is_one_bullet_with_its_count_across_summaries() -> None:
    summarizer = ExtractiveSummarizer(TiktokenCounter())
    first = summarizer.summarize(SummaryRequest(messages=(*_attempt(1), *_attempt(2), *_attempt(3)), max_tokens=800))
    (bullet,) = _errors(first)
    assert bullet.endswith(f"{ERROR} (failed 3 times)")
    again = summarizer.summarize(SummaryRequest(messages=_attempt(4), previous_summary=first, max_tokens=800))
    (bullet,) = _errors(again)
    assert bullet.endswith(f"{ERROR} (failed 4 times)")


def test_another_failure_of_the_call_is_not_counted_with_it_and_the_first_is_named() -> None:
    """mini-swe-agent: ``python reproduce_issue.py`` failed with ``No module named 'marshmallow'``, then (installed)
    with an ``AttributeError``: the bullet says both, what the work got past and where it stands."""
    other = "Error: flight HAT045 is not available on 2024-05-24"
    summarizer = ExtractiveSummarizer(TiktokenCounter())
    summary = summarizer.summarize(
        SummaryRequest(messages=(*_attempt(1), *_attempt(2), *_attempt(3, other)), max_tokens=800)
    )
    (bullet,) = _errors(summary)
    assert bullet.endswith(f"-> {other} (first: {ERROR})")
    again = summarizer.summarize(SummaryRequest(messages=_attempt(4, other), previous_summary=summary, max_tokens=800))
    (bullet,) = _errors(again)
    assert bullet.endswith(f"-> {other} (first: {ERROR}) (failed 2 times)")


def _run(n: int, printed: str) -> tuple[Message, Message]:
    return _called(ToolCall(id=f"r{n}", name="bash", args={"command": "python3 reproduce_issue.py"}), printed)


def _commands(summary: str) -> list[str]:
    section = summary.split("## Commands and results\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


def test_a_script_run_before_and_after_a_fix_says_what_it_printed_first_across_summaries() -> None:
    # Held-out round 4 (requests, Gemini 3 Pro): the reproduction printed `Method in send: "B'GET'"`, then, fixed,
    # `Method in send: 'GET'`; the summary kept the second only, and so did not say the bug had reproduced.
    summarizer = ExtractiveSummarizer(TiktokenCounter())
    before, after = "Method in send: \"B'GET'\"", "Method in send: 'GET'"
    first = summarizer.summarize(SummaryRequest(messages=(*_run(1, before), *_run(2, after)), max_tokens=800))
    (bullet,) = _commands(first)
    assert bullet.endswith(f"-> ok: {after} (first: {before})")
    again = summarizer.summarize(SummaryRequest(messages=_run(3, after), previous_summary=first, max_tokens=800))
    assert _commands(again) == [bullet]  # the first run is carried, once
    same = summarizer.summarize(SummaryRequest(messages=(*_run(1, after), *_run(2, after)), max_tokens=800))
    assert "(first: " not in same


def test_different_calls_that_failed_the_same_way_are_one_bullet_naming_each() -> None:
    # Held-out round 12 (sympy, Gemini 3 Pro): three debug scripts hit the same PolynomialError, shown three times.
    error = "PolynomialError: Piecewise generators do not make sense"
    messages: list[Message] = []
    for n, script in enumerate(("reproduce_issue.py", "debug_subs.py", "debug_subs_piecewise.py")):
        call = ToolCall(id=f"s{n}", name="bash", args={"command": f"python {script}"})
        traceback = f'Traceback (most recent call last):\n  File "{script}", line 4, in <module>\n{error}'
        messages += _called(call, traceback)
    other = ToolCall(id="x", name="bash", args={"command": "python -c '" + "import sympy; " * 10 + "'"})
    messages += _called(other, f"Traceback (most recent call last):\n{error}")
    summary = ExtractiveSummarizer(TiktokenCounter()).summarize(SummaryRequest(messages=tuple(messages)))
    first, second = _errors(summary)  # the inline script, too long to name beside the others, keeps its own
    assert first.startswith("- bash: python reproduce_issue.py; python debug_subs.py; python debug_subs_piecewise.py")
    assert error in first
    assert second.startswith("- bash: python -c ")


def test_calls_of_one_tool_failing_the_same_way_are_one_bullet_each_later_call_by_what_it_changes() -> None:
    # Twenty-ninth held-out round (tau-bench retail, task 28): three returns failed with "non-delivered order cannot
    # be returned"; their calls (over 70 characters of JSON each) were three bullets, and at 10% none was kept.
    error = "Error: non-delivered order cannot be returned"
    messages: list[Message] = []
    for n, (order, items) in enumerate((("#W379", ["4293"]), ("#W718", ["5753", "9851"]), ("#W556", ["9570"]))):
        args = {"order_id": order, "item_ids": items, "payment_method_id": "paypal_3024827"}
        messages += _called(ToolCall(id=f"r{n}", name="return_delivered_order_items", args=args), error)
    summary = ExtractiveSummarizer(TiktokenCounter()).summarize(SummaryRequest(messages=tuple(messages)))
    (bullet,) = _errors(summary)
    assert bullet == (
        '- return_delivered_order_items {"order_id":"#W379","item_ids":["4293"],"payment_method_id":"paypal_3024827"}; '
        '{"order_id":"#W718","item_ids":["5753","9851"]}; {"order_id":"#W556","item_ids":["9570"]} -> ' + error
    )


def test_a_ledger_with_no_room_says_nothing_is_listed_not_that_nothing_is_open() -> None:
    # Held-out round 13 (pylint): a newest turn that filled the window left the ledger no room, and it read
    # "## Open items - (none)", which says the work has nothing open.
    assert render_ledger([], None, None) == f"## Notes\n- {NOTHING_LISTED}"
    summarizer = ExtractiveSummarizer(TiktokenCounter())
    again = summarizer.summarize(
        SummaryRequest(messages=_attempt(1), previous_summary=f"## Notes\n- {NOTHING_LISTED}", max_tokens=800)
    )
    assert NOTHING_LISTED not in again  # read back, the line is nothing: it is not carried as a note
    assert ERROR in again


def test_a_later_call_that_drops_or_retypes_an_argument_is_shown_whole() -> None:
    # Hostile review 5: {"qty": true} (confirm dropped) and {"qty": 1.0} after {"confirm": true, "qty": 1} read "{}".
    error = "Error: non-delivered order cannot be returned"
    calls = (
        {"order_id": "#W1", "confirm": True, "qty": 1},
        {"order_id": "#W1", "qty": True},
        {"order_id": "#W1", "confirm": True, "qty": 1.0},
    )
    messages: list[Message] = []
    for n, args in enumerate(calls):
        messages += _called(ToolCall(id=f"q{n}", name="return_items", args=args), error)
    summary = ExtractiveSummarizer(TiktokenCounter()).summarize(SummaryRequest(messages=tuple(messages)))
    (bullet,) = _errors(summary)
    assert bullet == (
        '- return_items {"order_id":"#W1","confirm":true,"qty":1}; {"order_id":"#W1","qty":true}; {"qty":1.0} -> '
        + error
    )


def test_a_summary_whose_calls_nest_past_what_json_reads_is_read_back_as_it_stands() -> None:
    # Hostile review 5: two same-tool errors in a previous summary, one nested 5,000 deep, raised RecursionError on
    # every later compaction.
    deep = "[" * 5_000 + "]" * 5_000
    previous = f'## Errors\n- lookup {{"a":{deep}}} -> Error: not found\n- lookup {{"a":1}} -> Error: not found\n'
    summary = ExtractiveSummarizer(TiktokenCounter()).summarize(
        SummaryRequest(messages=_attempt(1), previous_summary=previous, max_tokens=4_000)
    )
    assert "lookup" in summary
