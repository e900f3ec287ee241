"""Reading a tool output faster reads the same: each shortcut equals the plain reading it stands for.

The plain readings are kept here: a figure line is what ``_FIGURE_LOWER`` finds in it, a text's edge lines are its
bounded text's first and last non-blank lines, a word known absent is one ``str.find`` does not find.
"""

from __future__ import annotations

import ctxbudget.compaction._edges as edges
import ctxbudget.compaction._figure_lines as figures_module
import ctxbudget.compaction.outcomes as outcomes_module
import ctxbudget.compaction.outputs as outputs_module
from ctxbudget.compaction.textscan import MAX_RUN, bounded, bounded_line, may_occur, word_lines
from hypothesis import given, settings
from hypothesis import strategies as st

_PIECES = (
    *outputs_module._WORDS,
    *(word.upper() for word in outputs_module._WORDS[:12]),
    "12", "3.5", "1,024", "0", "95", "$1", "€3", "£", "x", "p", "9", "5", "#", ".", ",", ":", "=", "/", "-", "_",
    "src/a.py", "a.py:12", "total 48", "# note", "<output>", "</output>", "<returncode>1</returncode>",
    "Exit code 2", "Error: boom", "ERROR: no", "command not found", "HTTP/1.1 404 Not Found", "status: 503",
    "3 failed", "0 failed", "İ", "ß", "K", "\u017f", "µs", "μs", "é", "日本", "\t", " " * 16, " ", " ", "\n", "\r\n",
    "a" * 150, "b" * 201, "ﬁ",
)  # fmt: skip
texts = st.lists(st.sampled_from(_PIECES), max_size=160).map("".join)


@settings(max_examples=300)
@given(texts)
def test_a_figure_line_is_what_the_figure_pattern_finds_in_it(text: str) -> None:
    lower = text.lower()
    start = 0
    for line in lower.split("\n"):
        stop = start + len(line)
        expected = bool(figures_module._FIGURE_LOWER.search(lower, start, stop))
        assert figures_module._figure_at(lower, start, stop) == expected
        start = stop + 1


@settings(max_examples=300)
@given(texts, st.integers(min_value=0, max_value=40))
def test_every_word_that_occurs_may_occur(text: str, copies: int) -> None:
    lower = (text * copies).lower()  # long enough, often, to be read by its distinct words
    present = may_occur(lower, outputs_module._WORDS)
    assert {word for word in outputs_module._WORDS if word in lower} <= present


@settings(max_examples=200)
@given(texts, st.integers(min_value=1, max_value=30))
def test_word_lines_skip_only_words_that_are_absent(text: str, copies: int) -> None:
    text *= copies
    lower = text.lower()
    present = may_occur(lower, outputs_module._WORDS)
    for words in (outputs_module._WRITE_WORDS, outputs_module._OUTCOME_WORDS):
        assert word_lines(text, words, lower, present) == word_lines(text, words)
    skipped = figures_module.figure_lines(text, lower, present)
    assert skipped == figures_module.figure_lines(text)


@settings(max_examples=300)
@given(texts)
def test_a_long_text_is_bounded_line_by_line(text: str) -> None:
    text = "w" * (MAX_RUN + 1) + "\n" + text  # longer than a run: bounded() reads it whole
    assert bounded(text).splitlines() == [bounded_line(line) for line in text.splitlines()]


def _plain_edge_lines(text: str) -> tuple[list[str], list[str]]:
    """The bounded head's and tail's lines without what is carried along (wrapper, prompt, meter, end marker)."""
    head, tail = bounded(text[:4_000]), bounded(text[-4_000:])

    def kept(lines: list[str]) -> list[str]:
        return [c for line in lines if line.strip() and not edges.carried(line) and (c := edges.content(line)).strip()]

    return kept(head.splitlines())[:6], kept(tail.splitlines())[-6:]


@settings(max_examples=300)
@given(texts, st.integers(min_value=1, max_value=60))
def test_edge_lines_are_the_bounded_texts_first_and_last_lines(text: str, copies: int) -> None:
    text *= copies
    assert edges.edge_lines(text) == _plain_edge_lines(text)


_PREFILTERED = (
    (outcomes_module.EXIT_STATUS, outcomes_module._EXIT_WORDS),
    (outcomes_module._EDGE_ERROR, outcomes_module._EDGE_ERROR_WORDS),
    (outcomes_module._HTTP_FIELD, outcomes_module._HTTP_WORDS),
    (outcomes_module._TEST_FAIL, outcomes_module._TEST_FAIL_WORDS),
)
_EDGE_PIECES = (
    "exit", "Exit code", "EXITED with", "return code", "returncode", "exit_code", "status code", "STATUS", "http",
    "command not found", "No such file or directory", "Permission denied", "not recognized as", "failed", "FAIL:",
    "ERROR:", "errors", ": ", "= ", "1", "2", "404", "500", " ", "K", "\u017f", "İ", "\u0131", "x", "\t",
)  # fmt: skip


@settings(max_examples=500)
@given(st.lists(st.sampled_from(_EDGE_PIECES), max_size=12).map("".join))
def test_a_line_without_a_patterns_words_is_not_searched_and_would_not_match(line: str) -> None:
    for pattern, words in _PREFILTERED:
        if pattern.search(line):
            assert outcomes_module._may_hold(line, words)
