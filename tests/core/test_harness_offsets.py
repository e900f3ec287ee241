"""Stripping harness blocks keeps every word around them, whatever the text before them lower-cases to.

"İ" lower-cases to two characters, so offsets found in a lower-cased copy are not the text's own: a block's end
found there once cut the first letters of the words after it ("hello world" became "llo world").
"""

from __future__ import annotations

from ctxbudget.compaction.harness import strip_examples, strip_harness
from hypothesis import given, settings
from hypothesis import strategies as st

_PIECES = ["\u0130", "\u1e9e", "\u00df", "\u212a", "\u017f", "\u00e9", "a", " ", "note", "\u65e5\u672c"]
prefixes = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)
words = st.lists(st.sampled_from(["hello", "world", "Keep", "the", "port", "5434"]), min_size=1, max_size=6).map(
    " ".join
)


@settings(max_examples=200)
@given(prefixes, words)
def test_the_words_after_a_harness_block_are_kept_whole(prefix: str, after: str) -> None:
    text = f"{prefix}\n<system-reminder>the harness's note</system-reminder>\n{after}"
    kept = strip_harness(text)
    assert kept.endswith(after)
    assert "harness's note" not in kept


@settings(max_examples=200)
@given(prefixes, words)
def test_the_words_after_an_example_are_kept_whole(prefix: str, after: str) -> None:
    kept = strip_examples(f"{prefix}\n<Example>a sample reply</EXAMPLE>\n{after}")
    assert kept.endswith(after)
    assert "sample reply" not in kept


def test_a_subagents_usage_block_is_the_harness_and_its_id_is_the_report() -> None:
    # Twenty-seventh held-out round (Claude Code, an Agent subagent): "Agent: tool_uses = 19" and
    # "Agent: duration_ms = 138602</usage>" were Commands bullets, read as the call's figures.
    report = (
        "All changes are in place and uncommitted, as required.\n"
        "agentId: a7368f2ec33ce56b5 (for resuming to continue this agent's work if needed)\n"
        "<usage>total_tokens: 41234\ntool_uses: 19\nduration_ms: 138602</usage>"
    )
    kept = strip_harness(report)
    assert "agentId: a7368f2ec33ce56b5" in kept
    assert "duration_ms" not in kept
    assert "tool_uses" not in kept
    pasted = "The config has a block:\n<usage>quota: 5</usage>"  # an XML the work wrote or read stays
    assert strip_harness(pasted) == pasted
