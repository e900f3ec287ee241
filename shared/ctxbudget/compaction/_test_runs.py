"""A test run's own line per test (``go test -v``, ``pytest -v``, ``unittest -v``, a script's), told as one figure.

A run of forty tests prints forty result lines (a script its own, ``Test 3 PASSED: ...``); each alone reads as a
figure of the work, and a summary showed ten ``Bash: --- PASS: TestParseCheckpoint/no_trailer (0.00s)`` bullets, the
one ``--- FAIL`` among them reading as current beside the rerun that passed. A run that failed is one figure instead:
how many passed, failed and were skipped, and the lines of those that failed (one that passed says so in its own
summary line; a script, which prints none, gets its tally too). Linear in the output: one anchored pattern whose
quantifiers never overlap.
"""

from __future__ import annotations

import re
from collections import Counter

from .textscan import clip

__all__ = ["failed_tests", "own_tests", "run_lines", "run_tally"]

Tests = list[tuple[int, tuple[str, str, str]]]
"""Each test's result line: its start in the output, and (status, test name, the line as the run printed it)."""

_TEST_LINE = re.compile(
    r"^[ \t]*--- (PASS|FAIL|SKIP): (\S{1,200}) \(\d"  # go test -v: status, name
    r"|^([^\s:]{1,300}(?:::[^\s:]{1,200}){1,6}) (PASSED|FAILED|SKIPPED|ERROR)\b"  # pytest -v: name, status
    r"|^(\w{1,200}) \([\w.]{1,200}\) \.\.\. (ok|FAIL|ERROR|skipped)\b"  # unittest -v: name, status
    # a script's own: "Test 3 PASSED: ..."
    r"|^[ \t]*(?:[✓✗✔✘❌✅] ?)?((?:Test|Case|Check|Scenario) #?\d{1,4}):? (PASSED|FAILED|PASS|FAIL|ERROR)\b",
    re.MULTILINE,
)
"""One test's result line; no two of its quantifiers overlap, so each line costs at most its length."""
_TEST_MARKERS = ("--- PASS", "--- FAIL", "::", " ... ", " PASS", " FAIL", " ERROR")
_TEST_STATUS = {
    "PASS": "passed",
    "PASSED": "passed",
    "OK": "passed",
    "FAIL": "failed",
    "FAILED": "failed",
    "ERROR": "failed",
    "SKIP": "skipped",
    "SKIPPED": "skipped",
}


def run_lines(head: str) -> tuple[Tests, set[int]]:
    """Each test's result line in a verbose test run, as (line start, (status, test name)), and every such line's start.

    A test nested in another (go's subtests) counts once, as itself: the parent's line says only that one failed.
    Fewer than two tests: no run to tell (``[]``).
    """
    if not any(marker in head for marker in _TEST_MARKERS):
        return [], set()
    found = []
    for match in _TEST_LINE.finditer(head):
        go_status, go_name, py_name, py_status, unit_name, unit_status, own_name, own_status = match.groups()
        status, name = (
            (go_status, go_name)
            if go_status
            else (py_status, py_name)
            if py_status
            else (unit_status, unit_name)
            if unit_status
            else (own_status, own_name)
        )
        end = head.find("\n", match.start())
        line = head[match.start() : end if end >= 0 else None].strip()
        found.append((match.start(), (_TEST_STATUS[status.upper()], name, line)))
    parents = {name.rsplit("/", depth)[0] for _, (_, name, _) in found for depth in range(1, name.count("/") + 1)}
    starts = {position for position, _ in found}
    found = [entry for entry in found if entry[1][1] not in parents]
    return (found, starts) if len(found) >= 2 else ([], set())


def run_tally(tests: Tests) -> str:
    """``8 tests: 7 passed, 1 failed; --- FAIL: TestParse/too_long (0.00s)``: the counts, and the failures' lines."""
    counts = Counter(status for _, (status, _, _) in tests)
    parts = [f"{counts[status]} {status}" for status in ("passed", "failed", "skipped") if counts[status]]
    failed = [clip(line, 120) for _, (status, _, line) in tests if status == "failed"]
    named = f"; {'; '.join(failed[:3])}{'; …' if len(failed) > 3 else ''}" if failed else ""
    return clip(f"{len(tests)} tests: {', '.join(parts)}{named}", 300)


_OWN = ("Test ", "Case ", "Check ", "Scenario ")


def own_tests(tests: Tests) -> bool:
    """The lines are a script's own (``Test 3 PASSED: ...``), which prints no test runner's summary line."""
    return all(name.startswith(_OWN) for _, (_, name, _) in tests)


_FAILED_TEST = re.compile(
    r"^[ \t]*((?:--- FAIL: |FAILED )[^\n]{1,200})$(?:\n[ \t]+(\S{1,120}\.\w{1,8}:\d{1,6}: [^\n]{1,400}))?", re.MULTILINE
)
"""A failed test's own line (go test's ``--- FAIL: TestX (0.01s)``, pytest's ``FAILED a.py::t - KeyError``), and the
message go test prints under it (``    fetch_test.go:281: expected context.Canceled, got ...``)."""
_EACH_CHARS = (230, 115)
"""Longest line of one failed test with its message, when one test is named and when two are (the first, the last)."""
_DURATION = re.compile(r" \(\d{1,6}(?:\.\d{1,6})?s\)$")


def _with_message(line: str, message: str | None, limit: int) -> str:
    """``--- FAIL: TestX: fetch_test.go:281: expected ...``, at most ``limit`` characters.

    A long message keeps its end (a Go error chain ends with its cause: ``got fetch to store: ... invalid pkt-len
    found``), and its start when there is room.
    """
    if not message:
        return line
    line = _DURATION.sub("", line)
    message = " ".join(message.split())
    room = limit - len(line) - 2
    if room < 30:
        return line
    if len(message) > room:
        head = room // 3 if room >= 90 else 0
        tail = room - head - 2
        end = message[-tail:]
        space = end.find(" ")
        end = end[space + 1 :] if 0 <= space < 20 else end  # from a word's start
        message = f"{message[:head].rstrip()} … {end}" if head else f"… {end}"
    return f"{line}: {message}"


_GO_FAILURE = re.compile(
    r"^[ \t]+\S{1,120}_test\.go:\d{1,6}: ((?:[^\n]{0,200}?)\b(?:expected|want|wanted|got|error|fail(?:ed|s|ure)?|"
    r"unexpected|mismatch|missing)\b[^\n]{0,400})$",
    re.MULTILINE | re.IGNORECASE,
)
"""A line a verbose go test run printed for a test that failed (``rewind_test.go:111: Expected no session state files
after reset, got 1``), not one of its logs (``rewind_test.go:103: Rewind reset output:``)."""
_BLOCK_CHARS = 4_000
"""Characters of a failed test's own lines read for its failure message."""


def _said(text: str, found: list[re.Match[str]], at: int, *, verbose: bool) -> str | None:
    """What the test of ``found[at]`` (its ``--- FAIL`` line) printed that says why it failed, if anything.

    Its own lines: after its ``--- FAIL`` line up to the next one, or, in a verbose run, before it back to the
    previous one. The first failure line among them (the last, before).
    """
    failed = found[at]
    if verbose:
        start = max(found[at - 1].end() if at else 0, failed.start() - _BLOCK_CHARS)
        said = _GO_FAILURE.findall(text, start, failed.start())
        return said[-1] if said else None
    end = min(found[at + 1].start() if at + 1 < len(found) else len(text), failed.end() + _BLOCK_CHARS)
    said = _GO_FAILURE.findall(text, failed.start(), end)
    return said[0] if said else None


def failed_tests(text: str) -> str | None:
    """The first and the last failed test's line anywhere in ``text`` (a CI log's middle) with its message, or None.

    The message is what says why the test failed (``expected context.Canceled, got ... use of closed network
    connection``); the test's name alone says only which one did.
    """
    found = list(_FAILED_TEST.finditer(text))
    verbose = "=== RUN" in text  # go test -v: a test's messages come before its "--- FAIL", the next test's after
    failures = list(
        dict.fromkeys((m.group(1).strip(), _said(text, found, at, verbose=verbose)) for at, m in enumerate(found))
    )
    if not failures:
        return None
    if len(failures) == 1:
        return _with_message(*failures[0], _EACH_CHARS[0])
    first, last = (_with_message(*failures[at], _EACH_CHARS[1]) for at in (0, -1))
    return f"{first} … {last}"
