"""What compaction writes reads well on sessions nobody here wrote (issue 24).

Every summary ctxbudget's default compaction writes for the real-transcript set (``benchmarks/quality/real/``:
Claude Code, mini-swe-agent, tau-bench and an Anthropic SDK log) at 30% and 10% of each transcript is read bullet by
bullet: no fragment (a list marker, a lone word, a line that only introduces what follows), no bullet twice, and no
harness text (Claude Code's caveats, command tags, system reminders, skill bodies) anywhere a bullet starts.
"""

from __future__ import annotations

import re
from functools import cache

import pytest
from ctxbudget.compaction._ledger_text import NESTED
from ctxbudget.session._goal import GOAL_HEADING, GOAL_TAG
from ctxbudget.session.request import SUMMARY_HEADER

from benchmarks.bench_real import budget_for, run_ours
from benchmarks.quality.real import HELDOUT, load_set

HARNESS = (
    "<local-command-caveat>",
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<system-reminder>",
    "caveat: the messages below were generated",
    "base directory for this skill",
    "[request interrupted by user",
    "this session is being continued from a previous conversation",
)
WRAPPERS = ("<persisted-output>", "<tool_use_error>", "file created successfully at", "output too large (")
"""Harness text that must not appear anywhere in a bullet (a tool's wrapper or confirmation, not a fact)."""
JSON_FIELD = re.compile(r'^"[^"]+": ')
"""A bullet that is a raw line of a tool's JSON output (``"zip": "80243",``): a record's fields are shown in its call's
bullet or under its tool's name (``get_user_details: "zip": "80243"``), never as bullets of their own."""
PREFIXES = ("Now: ", "Asked: ", "Earlier: ", "Origin: ")
VALUE = re.compile(r"\d|[/._@:]\w|`")


@cache
def summaries() -> dict[str, str]:
    out = {}
    for transcript in (*load_set(), *load_set(HELDOUT)):
        for fraction in (0.3, 0.1):
            outcome = run_ours(transcript, budget_for(transcript, fraction))
            assert outcome.error is None, outcome.error
            out[f"{transcript.name}@{fraction:.0%}"] = outcome.summary or ""
    return out


def bullets(summary: str) -> list[str]:
    """The summary's bullets; the pinned goal, the user's own message shown whole over its lines, is one of them."""
    found = []
    if summary.startswith(f"{SUMMARY_HEADER}\n{GOAL_HEADING}\n<{GOAL_TAG}>\n"):
        rest = summary.removeprefix(f"{SUMMARY_HEADER}\n{GOAL_HEADING}\n<{GOAL_TAG}>\n")
        goal, closed, summary = rest.partition(f"\n</{GOAL_TAG}>")
        assert closed, "a goal block that is never closed"
        assert not summary or summary.startswith("\n## "), "the summary's sections follow the goal block"
        found.append(" ".join(goal.split()))
    elif summary.startswith(f"{SUMMARY_HEADER}\n{GOAL_HEADING}\n- "):
        goal, _, summary = summary.removeprefix(f"{SUMMARY_HEADER}\n{GOAL_HEADING}\n- ").partition("\n## ")
        assert "\n" not in goal.strip(), "a goal of several lines is written as a block"
        found.append(" ".join(goal.split()))
    for line in summary.splitlines():
        if line.startswith(("- ", NESTED)):  # a statement read out of a paste is nested under the paste's bullet
            text = line.lstrip()[2:].strip()
            for prefix in PREFIXES:
                text = text.removeprefix(prefix)
            found.append(text)
    return found


ORDER = re.compile(r"^(?:commit|push|merge|rebase|deploy|release|publish|revert|undo|amend|squash|ship)\b", re.I)
"""A terse order of the user's ("commit this"): two words that steered the work, listed as an earlier request."""


def is_fragment(text: str) -> bool:
    words = re.findall(r"[A-Za-z]{2,}", text)
    if not re.search(r"[A-Za-z0-9]", re.sub(r"^\s*\d{1,3}[.)]", "", text)):
        return True  # "- 3.", "- **", "- ---"
    row_end = text.rstrip().endswith("|") and not text.rstrip().endswith("||")  # "using && or ||" is no table
    if text.startswith("|") or (row_end and ": " not in text.split(" | ", 1)[0]):
        return True  # a table's row ("| `explain.go` | Modify ... |", "Show author | Extract ... |") without its header
    if text.rstrip("*_`) ").endswith(":") and not VALUE.search(text):
        return True  # "Consider the following model:" stands for what follows it
    return len(words) < 3 and not VALUE.search(text) and not ORDER.match(text)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(summaries()))
def test_no_fragment_duplicate_or_harness_bullet(name: str) -> None:
    listed = bullets(summaries()[name])
    assert listed, f"{name}: the summary has no bullets"
    fragments = [b for b in listed if is_fragment(b)]
    assert not fragments, f"{name}: fragment bullets {fragments}"
    normal = [" ".join(re.sub(r"[^\w$%./:@-]+", " ", b.lower()).split()) for b in listed]
    duplicates = sorted({b for b in normal if normal.count(b) > 1})
    assert not duplicates, f"{name}: duplicate bullets {duplicates}"
    harness = [b for b in listed if b.lower().lstrip("*_`\"' ").startswith(HARNESS)]
    harness += [b for b in listed if any(wrapper in b.lower() for wrapper in WRAPPERS)]
    assert not harness, f"{name}: harness text {harness}"
    fields = [b for b in listed if JSON_FIELD.match(b)]
    assert not fields, f"{name}: a JSON record's fields as bullets of their own {fields}"
    same_file = same_files(files_of(summaries()[name]))
    assert not same_file, f"{name}: one file in two bullets {same_file}"


def files_of(summary: str) -> list[str]:
    """The paths the Files and artifacts section's bullets start with."""
    section = summary.split("## Files and artifacts\n", 1)[1].split("\n## ", 1)[0] if "## Files" in summary else ""
    return [re.split(r": | \(", line[2:], maxsplit=1)[0] for line in section.splitlines() if line.startswith("- ")]


def same_files(paths: list[str]) -> list[tuple[str, str]]:
    """Pairs of bullets naming one file: the same path, or a relative path only one other path ends with."""
    lowered = [p.lower() for p in paths]
    pairs = [(p, q) for i, p in enumerate(lowered) for q in lowered[i + 1 :] if p == q]
    for p in lowered:
        if "/" in p and not p.startswith(("/", "~")):
            longer = [q for q in lowered if q != p and q.endswith("/" + p)]
            pairs += [(p, longer[0])] if len(longer) == 1 else []
    return pairs


def test_the_checks_themselves_catch_what_they_describe() -> None:
    assert is_fragment("3.")
    assert is_fragment("**")
    assert is_fragment("Consider the following model:")
    assert is_fragment("Continue")
    assert is_fragment("| `explain.go` | Modify `--commit` to do reverse lookup |")
    assert is_fragment("Show author | Extract from `entire/sessions` commit when listing; add to `CommittedInfo` |")
    assert not is_fragment("ENTIRE_LOG_LEVEL=DEBUG git commit")
    assert not is_fragment("Marta from finance signs off on every invoice run.")
    assert bullets("## Task\n- Now: Fix the parser\n- Asked: why?") == ["Fix the parser", "why?"]
    assert JSON_FIELD.match('"zip": "80243",')
    assert not JSON_FIELD.match('get_user_details: "zip": "80243"')
    assert same_files(["cmd/a.go", "/u/x/cmd/a.go", "/u/x/b.go"]) == [("cmd/a.go", "/u/x/cmd/a.go")]
    assert same_files(["src/u.py", "/a/src/u.py", "/b/src/u.py"]) == []
    summary = "## Files and artifacts\n- /u/x/cmd/a.go: read\n- cmd/a.go (found by Grep)\n## Errors\n- e"
    assert files_of(summary) == ["/u/x/cmd/a.go", "cmd/a.go"]
