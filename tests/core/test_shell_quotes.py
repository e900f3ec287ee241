"""A shell command's quoted strings, taken out before it is read for operators, operands and redirections.

:func:`~ctxbudget.compaction.calls.unquoted` is the one-pass reading of what the pattern
``"(?:[^"\\]|\\.)*"|'[^']*'`` finds (a double-quoted string with backslash escapes, or a single-quoted one): the same
strings, on any text, but without that pattern's retry from every quote of a run never closed (the hostile-input
review of 2026-12-07: ``echo "\"\"\"...`` of 50,000 characters took 15 s; ``benchmarks/bench_hostile.py``).
"""

from __future__ import annotations

import re

from ctxbudget.compaction.calls import shell_reads, unquoted
from hypothesis import given
from hypothesis import strategies as st

QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'")
"""The definition: each match is one quoted string (its ``.`` does not cross a line: see the last test)."""


@given(st.text(alphabet="\"'\\ a|>\n", max_size=40))
def test_it_takes_out_what_the_pattern_finds(text: str) -> None:
    if "\\\n" in text:  # a backslash before a line break: the one place they differ (below)
        return
    assert unquoted(text, lambda quoted: f"<{len(quoted)}>") == QUOTED.sub(lambda m: f"<{len(m[0])}>", text)


def test_examples() -> None:
    assert unquoted('grep "a | b" x.py | wc -l') == "grep Q x.py | wc -l"
    assert unquoted("echo 'x > y' > out.txt") == "echo Q > out.txt"
    assert unquoted(r'echo "say \"hi\"" done') == "echo Q done"
    assert unquoted('echo "never closed | ok') == 'echo "never closed | ok'
    assert unquoted("""don't "a|b" 'c'""") == "donQc'"  # as the pattern (and bash): the apostrophe opens a string


def test_a_backslash_before_a_line_break_inside_double_quotes_continues_the_string() -> None:
    # bash reads it as a line continuation inside the string; the pattern's "." stops at the line break
    assert unquoted('python -c "import a\\\nprint(a)" | tee log.txt') == "python -c Q | tee log.txt"


def test_a_long_word_of_dots_is_no_file_a_command_shows() -> None:
    assert shell_reads("cat " + "." * 50_000 + "! notes.txt") == ["notes.txt"]
