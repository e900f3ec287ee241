"""What an assistant message contributes to a summary: decisions with what was decided, findings with something
specific, and nothing for narration or a status ("The fix is complete.")."""

from __future__ import annotations

import pytest
from ctxbudget.compaction.agent_statements import assistant_statements
from ctxbudget.compaction.statements import Statement


@pytest.mark.parametrize(
    "text",
    [
        "The fix is confirmed.",
        "The fix is complete.",
        "The fix is correct and minimal.",
        "The bug is confirmed.",
        "The fix is in place.",
        "Let me now read the key files I'll be modifying.",
        # Held-out mini-swe-agent runs (twenty-fourth round review of the Decisions section): a commitment that names
        # nothing, and instrumenting the code for a look, are steps of the work, not what was decided
        "I'll apply this change.",
        "I'll use a safer way.",
        "I'll add a print statement in `sphinx/directives/code.py`.",
        "I'll modify `src/_pytest/unittest.py` to print `self._store` in `teardown`.",
        "I'll add some print debugging to `src/_pytest/unittest.py` to see what's happening.",
        # a guess behind a conjunction is still a guess
        "But this might cause circular imports if `dataarray.py` imports `computation.py`.",
        "Or maybe they are willing to accept 0 indentation if `dedent` leaves `prepend` alone.",
    ],
)
def test_a_status_or_narration_is_no_statement(text: str) -> None:
    assert assistant_statements(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "The fix is to rebuild the worktree index.",
        "The fix is simple: change `= 1` to `= right`.",
        "The root cause was a stale cache entry.",
        "Going with option 2.",
        "We decided to use Postgres for the ledger.",
        "I will proceed to add 3 checked bags to your reservation.",
        "I'll use your original payment method (gift card ending in 6941833) for the fare difference.",
    ],
)
def test_a_decision_says_what_was_decided(text: str) -> None:
    assert [(s.kind, s.text) for s in assistant_statements(text)] == [("decision", text)]


def test_a_summary_of_a_run_that_keeps_confirming_its_fix_has_one_decision() -> None:
    text = (
        "The fix is simple: change `cright[...] = 1` to `cright[...] = right`. The fix is confirmed. "
        "The fix is correct and minimal. The fix is in place. The fix is complete."
    )
    assert [s.kind for s in assistant_statements(text)] == ["decision"]


def test_a_question_ending_on_the_answers_it_offers_is_no_finding() -> None:
    # tau-bench retail (third held-out round): "Do you confirm? (yes/no)" stood among the findings.
    said = "Do you confirm to proceed with this modification? (yes/no)"
    assert assistant_statements(said) == []
    assert assistant_statements("The refund went to gift card 3491931 (yes: the default).") != []  # a finding


def test_a_sentence_saying_more_of_what_the_one_before_named_is_the_same_finding() -> None:
    # tau-bench retail (held-out): "This order is already in a 'cancelled' status" names no order on its own; the
    # order it is about was named by the sentence before it, which alone said only that details were retrieved.
    said = (
        "I've retrieved the details for order #W2586676. This order is already in a 'cancelled' status, so no "
        "further action is needed for this one. Let's move on to the next order, #W5400801, to check its status."
    )
    assert [(s.kind, s.text) for s in assistant_statements(said)] == [
        (
            "finding",
            "I've retrieved the details for order #W2586676. This order is already in a 'cancelled' status, so no "
            "further action is needed for this one.",
        )
    ]


@pytest.mark.parametrize(
    ("text", "findings"),
    [
        # the second sentence is a finding of its own: each stands alone
        ("The test in test_x.py fails. It fails on line 12 of conftest.py.", 2),
        # a question is not said with the finding before it
        ("The test in test_x.py fails. Is that expected here?", 1),
        # narration before it: nothing to carry it
        ("Let me check test_x.py. It should tell us what the fixture does.", 0),
    ],
)
def test_only_an_unplaceable_sentence_after_a_finding_is_carried(text: str, findings: int) -> None:
    found = assistant_statements(text)
    assert len(found) == findings
    assert all(". " not in s.text for s in found)  # one sentence each


def test_a_finding_that_cites_its_lines_as_markdown_links_is_still_a_finding() -> None:
    # Claude Code (held-out round 4, oh-my-posh): the root cause cited its lines as links, which made the sentence
    # read as code (brackets, parentheses, colons), and the cause of the whole task was dropped.
    said = (
        "**Root cause:** `linear-gradient(a, b)` needs `minGradientCellsPerStop` (2) cells per stop — "
        "[engine.go:394](src/prompt/engine.go:394),[458](src/prompt/engine.go:458). 2 stops = 4 cells minimum."
    )
    found = [s.text for s in assistant_statements(said)]
    assert found[0].startswith("Root cause: `linear-gradient(a, b)` needs `minGradientCellsPerStop` (2) cells")
    assert "[engine.go:394](src/prompt/engine.go:394)" in found[0]  # the link is kept as written


def test_a_sentence_reasoning_about_a_case_is_no_finding() -> None:
    # mini-swe-agent (held-out round 4, psf/requests): eight "If `string` is `b'GET'` (bytes), ..." steps of the
    # agent's thinking filled Findings; what it concluded was said in sentences of their own.
    said = (
        "If `string` is `b'GET'` (bytes), `isinstance(b'GET', str)` is False.\n"
        "`to_native_string` is already imported in `requests/sessions.py` on line 21!\n"
        "If I change it to `to_native_string(method)` and `method` is `None`, it will crash, so the fix is "
        "`to_native_string` with a None check."
    )
    assert [s.text for s in assistant_statements(said)] == [
        "`to_native_string` is already imported in `requests/sessions.py` on line 21!",
        "If I change it to `to_native_string(method)` and `method` is `None`, it will crash, so the fix is "
        "`to_native_string` with a None check.",  # a decision it states is still one
    ]


def test_a_change_the_agent_concluded_it_must_make_is_a_decision_not_narration() -> None:
    # Claude Code (held-out round 5, context-evaluator): why prompt-generator.ts was changed was said only here.
    said = (
        "The `prompt-generator.ts` hardcodes Claude Code rules with `alwaysApply: true`. I should update it to also "
        "support the `paths` glob pattern option, matching the updated prompt template."
    )
    assert (
        "decision",
        "I should update it to also support the `paths` glob pattern option, matching the updated prompt template.",
    ) in [(s.kind, s.text) for s in assistant_statements(said)]
    # what it is about to look at is still narration
    assert assistant_statements("I should check the prompt generator to see where the rules are built.") == []


@pytest.mark.parametrize(
    "said",
    [
        "I'll use `sed` to perform this modification.",  # mini-swe-agent, pytest-7432
        "I'll use a python script to do this.",
        "After creating the script, I will use `curl` to upload it.",  # SWE-agent EnIGMA
        "Please let me know which red option you'd like to switch to (specify the piece count and material).",
    ],
)
def test_how_the_next_step_is_done_or_a_request_to_the_user_is_no_decision(said: str) -> None:
    assert assistant_statements(said) == []


@pytest.mark.parametrize(
    "said",
    [
        "We'll use Redis for the session cache instead of memcached.",
        "I'll use `getattr` to be safe.",  # twenty-second held-out round (pytest-7236): how the fix reads the flag
    ],
)
def test_a_choice_of_what_to_use_is_still_a_decision(said: str) -> None:
    assert [(s.kind, s.text) for s in assistant_statements(said)] == [("decision", said)]


@pytest.mark.parametrize(
    "said",
    [
        # ninth held-out round (mini-swe-agent, pydicom) and eighth (Claude Code, entireio/skills)
        "This might cause issues if it's accessed before `debug()` is called.",
        "It's possible Cursor picks those up directly because it sees `.cursor-plugin/marketplace.json` at the root.",
        "I suspect the cache in `store.py` is stale.",
    ],
)
def test_a_guess_the_agent_hedges_is_no_finding(said: str) -> None:
    assert assistant_statements(said) == []


def test_a_polite_report_and_a_change_the_agent_thinks_it_should_make_are_still_statements() -> None:
    (reported,) = assistant_statements("It seems that the flight HAT030 is not available on May 13, 2024.")
    assert reported.kind == "finding"  # how a support agent reports an error, not a guess
    (planned,) = assistant_statements(
        "I think I should move the `skipped_by_mark_key` check to be evaluated even if `runxfail` is on."
    )
    assert planned.kind == "decision"


def test_bold_markers_go_but_names_written_with_underscores_or_stars_stay() -> None:
    # Eleventh held-out round (mini-swe-agent, pyvista): "`__init__` method" was read as "`init` method", and
    # ironclaw's "McpClient.__exit__" as "McpClient.exit": stripping Markdown bold took a dunder's underscores too.
    (found,) = assistant_statements(
        "So the issue is in the RectilinearGrid's `__init__` method which only checks for `np.ndarray` instances."
    )
    assert "`__init__`" in found.text
    (labelled,) = assistant_statements("- **Root cause**: `McpClient.__exit__` binds an unused `exc` variable.")
    assert labelled.text == "Root cause: `McpClient.__exit__` binds an unused `exc` variable."


@pytest.mark.parametrize(
    "said",
    [
        # tenth and thirteenth held-out rounds (Claude Code, git-sync and entireio/cli; mini-swe-agent, scikit-learn)
        "All tests pass locally.",
        "Build, tests, and lint all pass.",
        "These pass locally but fail in CI — looks like a race-related flake.",
        "The reproduction script now passes!",
    ],
)
def test_what_a_verification_gave_is_a_finding_without_any_value_in_it(said: str) -> None:
    (found,) = assistant_statements(said)
    assert (found.kind, found.text) == ("finding", said)


@pytest.mark.parametrize(
    "said",
    ["The tests should pass now.", "CI might fail on Windows too.", "Let me run the tests to see if they pass."],
)
def test_a_verification_expected_or_about_to_run_is_not(said: str) -> None:
    assert assistant_statements(said) == []


@pytest.mark.parametrize(
    "said",
    [
        # eighth, tenth and thirteenth held-out rounds (Claude Code, entireio/cli; mini-swe-agent, scikit-learn)
        "I'll add `Hidden: true` to the command definition:",
        "THOUGHT: I will modify `_wrap_in_pandas_container` to check for index length.",
    ],
)
def test_a_change_the_agent_says_it_makes_naming_what_is_a_decision(said: str) -> None:
    (decided,) = assistant_statements(said)
    assert decided.kind == "decision"
    assert said.endswith(decided.text)


@pytest.mark.parametrize("said", ["I'll update the tests.", "I'll read `foo.py` now.", "I will run `pytest -x`."])
def test_a_change_naming_nothing_or_a_step_that_changes_nothing_is_narration(said: str) -> None:
    assert assistant_statements(said) == []


def test_an_order_in_pending_status_is_a_finding_and_a_todo_label_an_open_item() -> None:
    # Fourteenth held-out round (tau-bench retail): "an order ... which is still in a pending status" was filed under
    # "Open items"; "TODO:" and a bold "**Next steps:**" label, read off before the check, made nothing open.
    (status,) = assistant_statements(
        "However, I see that you have an order for hiking boots (Order ID: #W5481803), which is still in a pending "
        "status."
    )
    assert status.kind == "finding"
    for said in ("TODO: fix the flaky test in `a_test.go`.", "- **Next steps:** rebase onto `main` and rerun CI."):
        (todo,) = assistant_statements(said)
        assert todo.kind == "open"


def test_a_bold_line_that_introduces_a_list_is_no_finding() -> None:
    # Fourteenth held-out round (entireio/cli): "**Default behavior (`entire enable`):**" stood as a finding; the
    # colon that says a list follows sat inside the bold markers.
    (found,) = assistant_statements("**Default behavior (`entire enable`):**\n- Installs hooks using `entire` directly")
    assert found.text == "Installs hooks using `entire` directly"


def test_an_interjection_before_what_the_agent_found_is_not_narration() -> None:
    # Fourteenth held-out round (entireio/cli): "Great question! `settings.local.json` overrides ... - hooks don't
    # run twice." was one sentence to the splitter, and "Great" made all of it narration.
    (found,) = assistant_statements(
        "Great question! `.claude/settings.local.json` overrides `.claude/settings.json` - hooks don't run twice."
    )
    assert found.text == "`.claude/settings.local.json` overrides `.claude/settings.json` - hooks don't run twice."
    assert assistant_statements("Great! Let me run the tests now.") == []


@pytest.mark.parametrize(
    ("block", "kept"),
    [
        ("```\nProduces the following valid xml, which is indented poorly:\n```", False),  # introduces
        ("```xml\n<plugin>\n  <groupId>...\n```", False),  # an elided tag or two
        ("```python\nif parse(reqversion) > parse(extension.version):\n```", True),  # code, though it ends in ":"
        ("```bash\npytest tests/test_config.py -k verbose\n```", True),
        ("```python\nclass Figure(FigureBase):\n```", False),  # a body's first line (27th round, matplotlib)
    ],
)
def test_a_short_block_is_a_finding_only_when_it_says_something_alone(block: str, kept: bool) -> None:
    # Twenty-third held-out round (sphinx-10323): quoted blocks became bullets that say nothing alone.
    found = [s.text for s in assistant_statements(f"The issue quotes this:\n{block}\nSo the dedent is wrong.")]
    assert any(block.split("\n")[1].strip() in text for text in found) is kept


def test_the_issue_the_task_reports_is_no_cause_found() -> None:
    found = assistant_statements("The issue is about `literalinclude` with `prepend` losing its indentation.")
    assert [s.kind for s in found] != ["decision"]
    cause = assistant_statements("The issue is that `builtin_str(method)` turns `b'GET'` into `\"b'GET'\"`.")
    assert [s.kind for s in cause] == ["decision"]


def test_a_figure_the_agent_quotes_in_a_few_words_is_a_finding() -> None:
    """tau-bench agents quote what a change costs as a short labelled line: what the user is asked to agree to."""
    text = (
        "Here are the details:\n\n- **Flight Number:** HAT229\n- **Departure:** 11:00 AM from DEN\n"
        "- **Total Cost:** $239\n- Total new cost: $469\n- Price difference: $499 - $139 = $360 per person\n"
        "- Baggage: 0 total bags\n- **Economy Price:** $125\n\nPlease confirm."
    )
    findings = [st.text for st in assistant_statements(text) if st.kind == "finding"]
    assert findings == ["Total Cost: $239", "Total new cost: $469", "Price difference: $499 - $139 = $360 per person"]


def test_a_heading_is_a_title_unless_it_says_what_was_found() -> None:
    # Twenty-seventh held-out round (Claude Code, oh-my-posh): "### What changed since the issue was filed (March 2026)"
    # was a decision ("the issue was" reads as a cause found); "## Root Cause: ..." headings state a finding.
    assert assistant_statements("### What changed since the issue was filed (March 2026)\n\nIt is in `omp.zsh`.") == [
        Statement("finding", "It is in `omp.zsh`.")
    ]
    (found,) = assistant_statements("## Root Cause: `gh auth setup-git` is never run before git push\n")
    assert "`gh auth setup-git` is never run before git push" in found.text


@pytest.mark.parametrize(
    "sentence",
    [
        # Held-out tau-bench tasks (thirty-second round and earlier): what the agent said cannot be done, which the
        # rest of the conversation keeps to, carried no value and was dropped as narration
        "Unfortunately, I'm not able to remove just one passenger from an existing reservation.",
        "It is not possible to exchange a bookshelf for a camera.",
        "I\u2019m unable to make exceptions to the exchange policy.",
        "Exchanges can only be made for orders that have already been delivered.",
        "Our system only allows modifying passenger information but not removing passengers entirely.",
        "I cannot run the tests here because pytest is missing.",
    ],
)
def test_what_the_agent_says_cannot_be_done_is_a_finding(sentence: str) -> None:
    assert assistant_statements(sentence) == [Statement("finding", sentence)]


@pytest.mark.parametrize(
    "sentence",
    [
        "I can't find the config file anywhere.",  # a search that came back empty, not a limit
        "If the order is delivered, it cannot be cancelled anymore.",  # a case reasoned about
        "Maybe we cannot change it after all.",
        "I cannot do that.",  # says nothing without the sentence before it
    ],
)
def test_a_search_a_case_or_a_bare_refusal_is_no_limit(sentence: str) -> None:
    assert assistant_statements(sentence) == []
