"""A verbose test run that failed is one figure: its counts and the lines of the tests that failed, not a bullet per
test (one that passed is told by its own summary line).

Claude Code's ``go test -v`` printed ten ``--- PASS`` lines and one ``--- FAIL``; each became a "Bash: ..." bullet
of its own, the FAIL reading as current beside the rerun that passed.
"""

from __future__ import annotations

import pytest
from ctxbudget.compaction.outputs import output_items

GO = (
    "Exit code 1\n=== RUN   TestParseCheckpoint\n--- FAIL: TestParseCheckpoint (0.00s)\n"
    "    --- PASS: TestParseCheckpoint/valid (0.00s)\n    --- PASS: TestParseCheckpoint/no_trailer (0.00s)\n"
    "    --- FAIL: TestParseCheckpoint/too_long (0.00s)\nFAIL\nFAIL\tgithub.com/x/cli/trailers\t0.2s\n"
)
PYTEST = "tests/test_a.py::test_one PASSED [ 50%]\ntests/test_a.py::TestX::test_two[p-1] FAILED [100%]\n"
UNITTEST = "test_a (tests.test_x.T) ... ok\ntest_b (tests.test_x.T) ... FAIL\n\nRan 2 tests in 0.001s\n"


@pytest.mark.parametrize(
    ("output", "tally"),
    [
        (GO, "3 tests: 2 passed, 1 failed; --- FAIL: TestParseCheckpoint/too_long (0.00s)"),
        (PYTEST, "2 tests: 1 passed, 1 failed; tests/test_a.py::TestX::test_two[p-1] FAILED [100%]"),
        (UNITTEST, "2 tests: 1 passed, 1 failed; test_b (tests.test_x.T) ... FAIL"),
    ],
)
def test_a_runs_lines_per_test_are_one_figure(output: str, tally: str) -> None:
    figures = [item.text for item in output_items(output, "bash", command=True) if item.kind == "figure"]
    assert f"bash: {tally}" in figures
    assert not [text for text in figures if "PASS" in text and "tests:" not in text]  # no line of a single test


def test_a_run_that_passed_is_told_by_its_own_summary_line() -> None:
    """Forty ``PASSED`` lines say nothing its ``=== 40 passed ===`` does not: no figure of their own."""
    output = "".join(f"tests/test_a.py::test_{n} PASSED\n" for n in range(40)) + "=== 40 passed in 0.4s ===\n"
    figures = [item.text for item in output_items(output, "bash", command=True) if item.kind == "figure"]
    assert figures == ["bash: === 40 passed in 0.4s ==="]


def test_one_tests_line_is_no_run() -> None:
    figures = [item.text for item in output_items("--- PASS: TestOne (0.31s)\nok", "bash", command=True)]
    assert not [text for text in figures if "tests:" in text]
