"""What a user message is read for: not its examples, and a list that finishes its lead-in as one sentence with it.

Prompt templates (mini-swe-agent's, and prompts written in the style model vendors recommend) show the reply they
want inside ``<example>`` or ``<example_response>`` blocks. "I need to understand the Builder-related code. Let me
find relevant files" there is what a reply could say, not something the user said.
"""

from __future__ import annotations

from ctxbudget.compaction.agent_statements import assistant_statements
from ctxbudget.compaction.harness import strip_examples
from ctxbudget.compaction.statements import user_statements
from ctxbudget.compaction.textscan import sentences

TEMPLATE = """Fix the username validator so it rejects a trailing newline.
- DO NOT MODIFY: tests or configuration files.

Example of a CORRECT response:
<example_response>
I need to understand the Builder-related code. Let me find relevant files and check the project structure.
</example_response>

Never commit your changes."""


def test_the_sentences_of_an_example_block_are_not_statements() -> None:
    said = [statement.text for statement in user_statements(TEMPLATE)]
    assert any("DO NOT MODIFY" in text for text in said)
    assert any("Never commit your changes" in text for text in said)
    assert not any("Builder-related" in text or "Let me find" in text for text in said)


def test_a_format_example_is_an_example_too() -> None:
    # mini-swe-agent's instructions show the reply's form in <format_example>: "THOUGHT: Here I explain my reasoning
    # process, analysis of the current situation," was a user fact of the held-out psf/requests run.
    template = (
        "Fix the method conversion in sessions.py.\n<format_example>\nTHOUGHT: Here I explain my reasoning process, "
        "analysis of the current situation.\n```bash\nyour_command_here\n```\n</format_example>\n"
        "Never commit your changes."
    )
    said = [statement.text for statement in user_statements(template)]
    assert any("Never commit your changes" in text for text in said)
    assert not any("THOUGHT" in text or "your_command_here" in text for text in said)


def test_a_tag_quoted_inside_a_sentence_is_the_person_s_words() -> None:
    text = "Wrap the reply in <example> tags, the parser expects them."
    assert strip_examples(text) == text
    assert strip_examples("<EXAMPLE>a reply</EXAMPLE>\nThe deadline is Friday.") == "The deadline is Friday."


def test_a_paste_is_noted_as_it_was_sent() -> None:
    """The note of a long paste gives its own size, examples included: what was sent, not what was read."""
    paste = "\n".join(f"line {n}: value {n}" for n in range(200)) + "\n<example>\nsample reply\n</example>"
    notes = [s.text for s in user_statements(paste) if s.kind == "paste"]
    assert notes == [f"pasted 203 lines, {len(paste):,} chars, starting: line 0: value 0"]


LEAD_IN = """You are operating in an environment where

1. You issue at least one command
2. You see the result(s)

Constraints:
- Budget cap is $500 total.
- Never exceed without approval.

Check the deploy script for
- hardcoded hosts
- missing retries"""


def test_a_list_that_finishes_its_lead_in_is_one_statement_with_it() -> None:
    said = [statement.text for statement in user_statements(LEAD_IN)]
    assert "You are operating in an environment where You issue at least one command; You see the result(s)." in said
    assert not any(text in ("You issue at least one command", "You see the result(s)") for text in said)
    assert "Check the deploy script for hardcoded hosts; missing retries." in said


def test_a_list_after_a_label_keeps_each_item_apart() -> None:
    """A label ("Constraints:") names what follows; each rule stands alone, so a later one can replace it."""
    said = [statement.text for statement in user_statements(LEAD_IN)]
    assert "Budget cap is $500 total." in said
    assert "Never exceed without approval." in said


def test_a_sentence_whose_quote_runs_onto_the_next_line_is_one_statement() -> None:
    """Claude Code (entire explain): '... it should say "No associated' and 'Entire checkpoint"' are one sentence."""
    text = (
        "2. yes, entire explain --commit <sha> should return its checkpoint - or if there is no trailer it should say "
        '"No associated \nEntire checkpoint"\n3. not sure what the current behaviour is, but I would like a filter.'
    )
    said = [statement.text for statement in user_statements(text)]
    assert any(s.endswith('say "No associated Entire checkpoint"') for s in said), said
    assert not [s for s in said if s.startswith("Entire checkpoint")]


def test_a_finding_keeps_the_label_of_its_list_item() -> None:
    """Claude Code: "- Too long: `a1b2c3d4e5f6789` (15 chars) → returns `found=false`" without "Too long:" says
    nothing of which case it is."""
    text = "**2. Added test cases** in `trailers.go`:\n- Too long: `a1b2c3d4e5f6789` (15 chars) → returns `found=false`"
    found = [statement.text for statement in assistant_statements(text) if statement.kind == "finding"]
    assert "Too long: `a1b2c3d4e5f6789` (15 chars) → returns `found=false`" in found


def test_a_sentence_ending_in_a_curly_quote_ends_there_with_its_quote() -> None:
    """tau-bench retail: 'The reason is “ordered by mistake.” Please go ahead and cancel it.' was one statement, a
    fact, and the request in it was lost."""
    said = [
        (s.kind, s.text) for s in user_statements("The reason is “ordered by mistake.” Please go ahead and cancel it.")
    ]
    assert said == [("fact", "The reason is “ordered by mistake.”"), ("request", "Please go ahead and cancel it.")]


def test_paragraphs_run_together_with_no_space_are_still_two_sentences() -> None:
    """SWE-agent EnIGMA (held-out): the agent's paragraphs arrive joined ("a static message.Next, I'll check ..."),
    and the narration after the seam was kept as part of a finding. A name with a capital after its dot is no seam."""
    text = (
        "It simply returns a static message.Next, I'll check the `/cgi-bin/forms.pl` script. "
        "The inner field is fields.DateTime (see web.chal.csaw.io and os.Path)."
    )
    assert sentences(text) == [
        "It simply returns a static message.",
        "Next, I'll check the `/cgi-bin/forms.pl` script.",
        "The inner field is fields.DateTime (see web.chal.csaw.io and os.Path).",
    ]


def test_a_sentence_saying_only_that_the_conversation_went_wrong_is_no_fact() -> None:
    """tau-bench airline task 13: four of the user's fourteen facts were "I think there might be some mix-up." and its
    like; what was mixed up is in the sentences around them, which stay."""
    said = (
        "I think we're encountering some confusion regarding my itinerary. "
        "My focus is on changing my flight from Atlanta to Las Vegas. I believe there is some confusion."
    )
    assert [s.text for s in user_statements(said)] == ["My focus is on changing my flight from Atlanta to Las Vegas."]
    for specific in (
        "There is some confusion about HAT052, the 03:00 EST flight from Atlanta to Las Vegas.",
        "There is a problem with my card ending 1234.",
    ):
        assert [s.text for s in user_statements(specific)] == [specific]


def test_a_numbered_items_marker_stays_with_its_item() -> None:
    """Held-out (entireio/git-sync): a pasted review finding "*2. (Medium) On failure, the cleanup defer deletes ...*"
    put "*2." in the summary as a statement of its own, and the finding without its number after it."""
    assert sentences("*2. (Medium) On failure, the defer deletes the target.*") == [
        "*2. (Medium) On failure, the defer deletes the target.*"
    ]
    assert sentences("2. Run it again. Then stop.") == ["2. Run it again.", "Then stop."]
    assert sentences("We shipped version 3. Then it broke.") == ["We shipped version 3.", "Then it broke."]
    said = [s.text for s in user_statements("**3.** Keep the staging db on port 5434.")]
    assert said == ["**3.** Keep the staging db on port 5434."]


def test_what_you_can_only_do_is_a_constraint() -> None:
    """SWE-agent (thirty-first held-out round): "Remember, YOU CAN ONLY ENTER ONE COMMAND AT A TIME." was a fact,
    and the goal's list of the harness's rules left it out."""
    said = [(s.kind, s.text) for s in user_statements("Remember, YOU CAN ONLY ENTER ONE COMMAND AT A TIME.")]
    assert said == [("constraint", "Remember, YOU CAN ONLY ENTER ONE COMMAND AT A TIME.")]
    assert [s.kind for s in user_statements("I can only find two config files in the repo.")] == ["fact"]


def test_a_stop_inside_inline_code_ends_no_sentence() -> None:
    """Held-out (a Claude Code session fixing a README generator): the agent's "the `%%. Use *` split point, so after
    the split ..." became bullets starting "Use` split point" and "Use *}`: ...", cut at the ". " inside backticks."""
    text = "It splits at the `${desc%%. Use *}` point. Then `foo.` + `.` = `foo..`. Next we fix it."
    assert sentences(text) == [
        "It splits at the `${desc%%. Use *}` point.",
        "Then `foo.` + `.` = `foo..`.",
        "Next we fix it.",
    ]
    # an unpaired backtick opens no span: the sentences after it still split
    assert sentences("Run `make. Then stop. Done.") == ["Run `make.", "Then stop.", "Done."]
