"""An example in a user message states nothing: its sentences are not the user's facts, constraints or requests.

Prompt templates (mini-swe-agent's, and prompts written in the style model vendors recommend) show the reply they
want inside ``<example>`` or ``<example_response>`` blocks. "I need to understand the Builder-related code. Let me
find relevant files" there is what a reply could say, not something the user said.
"""

from __future__ import annotations

from ctxbudget.compaction.harness import strip_examples
from ctxbudget.compaction.statements import user_statements

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


def test_a_tag_quoted_inside_a_sentence_is_the_person_s_words() -> None:
    text = "Wrap the reply in <example> tags, the parser expects them."
    assert strip_examples(text) == text
    assert strip_examples("<EXAMPLE>a reply</EXAMPLE>\nThe deadline is Friday.") == "The deadline is Friday."


def test_a_paste_is_noted_as_it_was_sent() -> None:
    """The note of a long paste gives its own size, examples included: what was sent, not what was read."""
    paste = "\n".join(f"line {n}: value {n}" for n in range(200)) + "\n<example>\nsample reply\n</example>"
    notes = [s.text for s in user_statements(paste) if s.kind == "paste"]
    assert notes == [f"pasted 203 lines, {len(paste):,} chars, starting: line 0: value 0"]
