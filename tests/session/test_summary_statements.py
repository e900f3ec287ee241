"""What a summary keeps of the user's words and of a lookup's result, read from the real set's transcripts.

mini-swe-agent's task lists its rules one per line ("- MODIFY: ...", "- DO NOT MODIFY: ..."); the kit labels its
canaries in capitals ("HARD CONSTRAINT:", "GOAL STATE:"); tau-bench searches return ``[]`` when no flight matches,
and an issue tracker's record is fetched again after an update.
"""

from __future__ import annotations

import json

from ctxbudget import Message, SummaryRequest, ToolCall
from ctxbudget.compaction.statements import user_statements
from ctxbudget.compaction.summarize import ExtractiveSummarizer
from ctxbudget.providers import counter_for_model

COUNTER = counter_for_model("gpt-4o")

RULES = """## Boundaries
- MODIFY: Regular source code files in /testbed (this is the working directory for all your commands)
- DO NOT MODIFY: Tests, configuration files (pyproject.toml, setup.cfg, etc.)

You have a full Linux shell environment
Always use non-interactive flags (-y, -f) for commands
HARD CONSTRAINT: Budget cap is $500 total. Never exceed without explicit approval."""


def test_each_line_of_a_list_is_its_own_statement_and_a_qualifier_on_its_line_joins_it() -> None:
    said = [statement.text for statement in user_statements(RULES)]
    assert said == [
        "MODIFY: Regular source code files in /testbed (this is the working directory for all your commands)",
        "DO NOT MODIFY: Tests, configuration files (pyproject.toml, setup.cfg, etc.)",
        "You have a full Linux shell environment",
        "Always use non-interactive flags (-y, -f) for commands",
        "HARD CONSTRAINT: Budget cap is $500 total. Never exceed without explicit approval.",
    ]


def test_over_budget_a_label_naming_the_kind_goes_but_one_that_says_the_rule_stays() -> None:
    statements = [RULES, "GOAL STATE: Current task is migrating auth to OAuth, steps 1-3 of 5 are done."]
    messages = tuple(Message(role="user", content=text) for text in statements)
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages, max_tokens=120))
    assert "DO NOT MODIFY: Tests" in summary  # without its label the rule reads the other way
    assert "HARD CONSTRAINT:" not in summary
    assert "Budget cap is $500 total" in summary
    assert "GOAL STATE:" not in summary


def lookup(*pairs: tuple[ToolCall, object]) -> list[str]:
    messages: list[Message] = []
    for call, result in pairs:
        messages.append(Message(role="assistant", tool_calls=(call,)))
        messages.append(Message(role="tool", tool_call_id=call.id, content=json.dumps(result)))
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=tuple(messages)))
    return [line[2:] for line in summary.splitlines() if line.startswith("- ")]


def test_a_search_says_how_many_results_it_returned_or_that_it_found_none() -> None:
    def search(call_id: str, date: str) -> ToolCall:
        return ToolCall(id=call_id, name="search_direct_flight", args={"origin": "SFO", "date": date})

    flights = [{"flight_number": "HAT082", "price": 158}, {"flight_number": "HAT025", "price": 161}]
    bullets = lookup((search("a", "2024-05-15"), []), (search("b", "2024-05-17"), flights))
    assert any(b.endswith('"2024-05-15"} -> ok: no results') for b in bullets), bullets
    (found,) = [b for b in bullets if "2024-05-17" in b]
    assert found.endswith("-> ok: 2 results")  # what it found is in the archived original (search_archive)


def test_the_same_lookup_run_again_shows_the_latest_value_of_each_field_once() -> None:
    call = ToolCall(id="a", name="get_issue", args={"id": "ENT-212"})
    again = ToolCall(id="b", name="get_issue", args={"id": "ENT-212"})
    first = {"identifier": "ENT-212", "updatedAt": "2026-02-04T01:28:32Z", "priority": {"value": 2}}
    later = {"identifier": "ENT-212", "updatedAt": "2026-02-04T01:51:29Z", "priority": {"value": 2}}
    (bullet,) = [b for b in lookup((call, first), (again, later)) if b.startswith("get_issue")]
    assert bullet.count('"updatedAt": ') == 1
    assert "01:51:29" in bullet
    assert bullet.count('"identifier": "ENT-212"') == 1
    assert '"priority.value": 2' in bullet  # a generic field keeps its record's name


def test_a_value_each_record_of_a_tool_shares_is_shown_once_on_the_latest() -> None:
    # tau-bench retail task 54: six orders of one customer, each repeating the shipping address beside its own ids.
    def order(call_id: str, order_id: str) -> ToolCall:
        return ToolCall(id=call_id, name="get_order_details", args={"order_id": order_id})

    def body(order_id: str, price: float) -> dict[str, object]:
        return {"order_id": order_id, "address": {"address1": "182 Elm Avenue", "zip": "19117"}, "price": price}

    bullets = lookup(
        (order("a", "#W2586676"), body("#W2586676", 208.07)), (order("b", "#W5400801"), body("#W5400801", 188.92))
    )
    assert sum(b.count('"address1": "182 Elm Avenue"') for b in bullets) == 1
    (latest,) = [b for b in bullets if "#W5400801" in b and '"order_id": ' in b]
    assert '"address1": "182 Elm Avenue"' in latest
    assert any('"order_id": "#W2586676"' in b and '"price": 208.07' in b for b in bullets)  # its own fields stay


def test_a_shared_value_leaves_each_record_its_own_id_and_numbers() -> None:
    def call(call_id: str, name: str, order_id: str) -> ToolCall:
        return ToolCall(id=call_id, name=name, args={"order_id": order_id})

    order = {"order_id": "#W4597054", "amount": 1186.47, "payment_method_id": "gift_card_3491931", "city": "Elm 182"}
    bullets = lookup(
        (call("a", "get_order_details", "#W4597054"), order), (call("b", "return_items", "#W4597054"), order)
    )
    (fetched,) = [b for b in bullets if b.startswith("get_order_details")]
    assert '"order_id": "#W4597054"' in fetched  # which record it is, though the return's record says the same
    assert '"amount": 1186.47' in fetched
    assert '"payment_method_id": "gift_card_3491931"' in fetched


def test_a_field_whose_name_holds_a_space_is_one_field_of_its_records_bullet() -> None:
    call = ToolCall(id="a", name="get_product_details", args={"product_id": "7363354090"})
    bullets = lookup((call, {"product_id": "7363354090", "options": {"battery life": "8 hours", "price": 53}}))
    (bullet,) = [b for b in bullets if b.startswith("get_product_details")]
    assert '"battery life": "8 hours"' in bullet  # one bullet, not a second "-> ok: ..." line


def test_a_newer_request_asked_as_a_question_leaves_no_stale_current_task() -> None:
    said = (
        "yeah check what's triggering gc on this machine",
        "ok, so can you document it in known_limitations for the next release?",
    )
    messages = tuple(Message(role="user", content=text) for text in said)
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages))
    assert "- Now: yeah check" not in summary  # what is asked now is the newer request ("can you ...": a request)
    assert "- Now: ok, so can you document it in known_limitations for the next release?" in summary
    assert "- Asked: yeah check what's triggering gc" in summary


def test_a_request_the_conversation_went_on_from_is_earlier_and_one_nothing_answered_is_still_asked() -> None:
    # tau-bench task 46: the user asks, the agent looks it up; only the newest question is left unanswered.
    lookup = ToolCall(id="c1", name="get_reservation_details", args={"reservation_id": "4OG6T3"})
    messages = (
        Message(role="user", content="Could you check the passengers on my last reservation?"),
        Message(role="assistant", content="", tool_calls=[lookup]),
        Message(role="tool", tool_call_id="c1", content='{"reservation_id": "4OG6T3", "passengers": 1}'),
        Message(role="assistant", content="The reservation 4OG6T3 has one passenger."),
        Message(role="user", content="ok thanks. And can you check whether the certificate was issued?"),
        Message(role="user", content="Please also tell me the refund policy for delayed flights."),
    )
    summarizer = ExtractiveSummarizer(COUNTER)
    first = summarizer.summarize(SummaryRequest(messages=messages))
    assert "- Earlier: Could you check the passengers on my last reservation?" in first
    assert line_of(first, "certificate was issued?").startswith("- Asked: ")
    # Read back and merged with a span of the user's words only, the open question stays open ...
    more = (Message(role="user", content="Also, what is the baggage allowance for economy on this route?"),)
    second = summarizer.summarize(SummaryRequest(messages=more, previous_summary=first))
    assert line_of(second, "certificate was issued?").startswith("- Asked: ")
    assert "- Earlier: Could you check the passengers" in second
    # ... until work follows it.
    answer = (Message(role="assistant", content="The certificate certificate_3221322 of $50 was issued."),)
    third = summarizer.summarize(SummaryRequest(messages=answer, previous_summary=second))
    assert "- Asked: " not in third
    assert line_of(third, "certificate was issued?").startswith("- Earlier: ")


def line_of(summary: str, words: str) -> str:
    """The one line of ``summary`` that holds ``words``."""
    (line,) = [line for line in summary.splitlines() if words in line]
    return line


def test_a_reply_choosing_what_was_offered_is_the_users_decision() -> None:
    chosen = ("ok, option 2, detail view only for now", "yes mutually exclusive is fine", "I'll go with Option 1.")
    for text in chosen:
        assert [s.kind for s in user_statements(text)] == ["decision"], text
    for text in ("Option 2 looks risky to me because of the cache", "The deploy region is fine", "no, write the plan"):
        assert "decision" not in [s.kind for s in user_statements(text)], text
    messages = tuple(Message(role="user", content=text) for text in chosen)
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages))
    decisions = summary.split("## Decisions\n", 1)[1].split("\n## ", 1)[0]
    assert "- User chose: ok, option 2, detail view only for now" in decisions


def test_a_short_reply_that_says_nothing_alone_is_the_users_choice_on_the_question_before_it() -> None:
    # Claude Code (held-out, git-sync User-Agent): "yes for both, go ahead" approved the plan and skipping the spec
    # document; read alone it said nothing, and the summary lost the user's go-ahead.
    plan = (
        "Two notes for your call:\n\n1. **Override knob**: I'm not adding `Options.UserAgent`. OK?\n"
        "2. **Spec doc**: this is small enough I'd rather just implement. Want me to skip the formal write-up?\n\n"
        "If both yes, I'll proceed."
    )
    messages = (
        Message(role="user", content="Add a User-Agent string for requests coming from git-sync."),
        Message(role="assistant", content=plan),
        Message(role="user", content="yes for both, go ahead"),
        Message(role="assistant", content="Thanks for the update."),
        Message(role="user", content="thanks"),  # no question before it: nothing chosen
    )
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages))
    assert "- User chose: yes for both, go ahead (to: Want me to skip the formal write-up?)" in summary
    assert "User chose: thanks" not in summary


def test_an_action_that_found_nothing_to_act_on_failed_and_a_search_that_found_nothing_did_not() -> None:
    book = ToolCall(id="b", name="book_excursion", args={"recommendation_id": 11})
    search = ToolCall(id="s", name="search_hotels", args={"location": "Basel"})
    messages = (
        Message(role="assistant", tool_calls=(book, search)),
        Message(role="tool", tool_call_id="b", content="No trip recommendation found with ID 11."),
        Message(role="tool", tool_call_id="s", content="No hotels found."),
    )
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages))
    errors = summary.split("## Errors\n", 1)[1].split("\n## ", 1)[0]
    assert 'book_excursion {"recommendation_id":11} -> No trip recommendation found with ID 11.' in errors
    assert "search_hotels" not in errors


def test_a_table_row_of_the_assistants_plan_is_no_finding() -> None:
    from ctxbudget.compaction.agent_statements import assistant_statements

    plan = (
        "| File | Change |\n|---|---|\n| `checkpoint/committed.go` | Add author to `CommittedInfo` struct |\n"
        "The key insight is that `ListCommitted` reads from the tree, not from commit history."
    )
    assert [s.text for s in assistant_statements(plan)] == [
        "The key insight is that `ListCommitted` reads from the tree, not from commit history."
    ]


def test_a_message_reporting_finished_work_says_what_changed_once() -> None:
    from ctxbudget.compaction.agent_statements import assistant_statements

    said = assistant_statements("Done! Now both flows use the dynamic agent name:\n\n1. **Interactive prompt** shows")
    assert [s.text for s in said] == ["Done: Now both flows use the dynamic agent name"]
    said = assistant_statements("Done! The `StripIDEContextTags` function now also strips system tags.")
    assert [s.text for s in said] == ["Done: The `StripIDEContextTags` function now also strips system tags."]
    shown = assistant_statements("Done! Now the editor flow will show:\n\n```\n# Prompt: x\n```")
    assert not [s for s in shown if s.text.startswith("Done:")]  # it stands for the block after it
    assert [s.text for s in assistant_statements("Fixed the parser so that empty lines are kept.")] == [
        "Fixed the parser so that empty lines are kept."
    ]


def test_a_cleared_records_marker_keeps_its_fields_whatever_its_calls_arguments_hold() -> None:
    call = ToolCall(id="a", name="lookup", args={"q": "status: open"})
    result = Message(
        role="tool", tool_call_id="a", content=json.dumps({"identifier": "ENT-212", "priority": {"value": 2}})
    )
    lines = ExtractiveSummarizer(COUNTER).key_lines(result, 6, {"a": call})
    assert lines == ['"identifier": "ENT-212"', '"priority.value": 2']


def test_a_value_given_alone_and_then_corrected_is_shown_once_the_corrected_one() -> None:
    # tau-bench retail task 54: the first email finds no user; the user corrects it.
    said = ("Sure, it's silva7872@example.com.", "My bad, try amelia.silva7872@example.com.")
    messages = tuple(Message(role="user", content=text) for text in said)
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages))
    assert "amelia.silva7872@example.com" in summary
    assert "Sure, it's silva7872@example.com." not in summary  # not shown as a fact still standing


def test_a_second_value_of_a_kind_without_a_correction_does_not_replace_the_first() -> None:
    said = ("Sure, it's silva7872@example.com.", "Also cc amelia.silva7872@example.com.")
    messages = tuple(Message(role="user", content=text) for text in said)
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages))
    assert "Sure, it's silva7872@example.com." in summary


def test_what_one_message_said_is_summarized_in_the_order_it_was_said() -> None:
    # Claude Code (held-out gitsync_user_agent): "A for all calls via go-git. Direct HTTP requests should do B
    # instead." came out as "Direct HTTP requests should do B instead." then "A for all calls via go-git.": the
    # order the ledger ranked them, which reads as the opposite choice.
    answer = "A for all calls via go-git. Direct HTTP requests should do B instead."
    said = (Message(role="user", content="Add a User-Agent."), Message(role="user", content=answer))
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=said))
    assert summary.index("A for all calls via go-git.") < summary.index("Direct HTTP requests should do B instead.")


def test_a_sentence_that_introduces_a_paste_is_kept_without_its_colon() -> None:
    # Fifteenth held-out round (duet): "copy pasting claude output leaves weird line breaks:" over an indented
    # example was listed with its colon, reading as a line that stands for what follows.
    said = "copy pasting claude output leaves weird line breaks:\n\n    The curation gap.\n\nbetter way?"
    first, *_ = user_statements(said)
    assert first.text == "copy pasting claude output leaves weird line breaks"


def test_a_pasted_claude_code_screen_is_not_the_users_words_but_what_they_typed_is() -> None:
    # Fifteenth held-out round (duet): a screen pasted from Claude Code ("⏺ You renamed this session ...", "⎿ Catch
    # you later!", the input box and its status bar) filled "User facts and constraints" line by line.
    screen = (
        "i see a concerning pattern...\n\n\u276f interesting... i resumed elton but now i see kiki?\n\n"
        '⏺ You renamed this session to "kiki" with /rename kiki earlier. The rename stuck — so when you resumed,\n'
        "  it loaded this same session under its renamed label.\n\n\u276f /exit\n  ⎿  Catch you later!\n\n"
        + "─" * 40
        + " kiki ──\n\u276f\n"
        + "─" * 40
        + "\n   duet main | ctx:30%        1 MCP server failed · /mcp\n  -- INSERT -- accept edits on\n"
    )
    said = [s.text for s in user_statements(screen)]
    assert said == ["i see a concerning pattern...", "interesting... i resumed elton but now i see kiki?"]


def test_a_polite_request_after_a_yes_is_a_request() -> None:
    # Sixteenth held-out round (tau-bench retail): "Yes, can you cancel just that item?" read as a question.
    (asked,) = user_statements("Yes, can you cancel just that item?")
    assert asked.kind == "request"
    (question,) = user_statements("Yes, is that the cheapest one?")
    assert question.kind == "question"


def test_a_statement_of_two_words_and_no_value_says_nothing_alone() -> None:
    # Eighteenth held-out round (git-sync): "I already removed" stood as a user fact, a fragment without what it
    # answered; "Marta signs off" and "Use port 5434" still say something.
    assert user_statements("I already removed") == []
    assert [s.text for s in user_statements("Marta signs off")] == ["Marta signs off"]
    assert [s.kind for s in user_statements("Use port 5434")] == ["constraint"]
