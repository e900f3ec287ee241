"""How a summary lists files and what a harness wrapped: one bullet per file, no tool's confirmation read as a fact.

Read from a real Claude Code session (benchmarks/quality/real/claude_code_entire_explain.jsonl): Grep prints paths
relative to the working directory while Read and Write take absolute ones; a Grep with context prints the matched
files' lines (``checkpoint.go-303- // CreatedAt is when the checkpoint was created``); Write answers "File created
successfully at: <path>"; an output too large for the window is saved to a file and wrapped in
``<persisted-output>``.
"""

from __future__ import annotations

import pytest
from ctxbudget import Message, SummaryRequest, ToolCall
from ctxbudget.compaction._artifacts import canonical_paths
from ctxbudget.compaction._ledger_select import Selection
from ctxbudget.compaction.outputs import output_items
from ctxbudget.compaction.salience import Salient
from ctxbudget.compaction.summarize import ExtractiveSummarizer
from ctxbudget.compaction.textscan import informative_tokens
from ctxbudget.providers import counter_for_model

COUNTER = counter_for_model("gpt-4o")
ROOT = "/Users/alex/workspace/cli"


def summary_of(*pairs: tuple[ToolCall, str]) -> dict[str, list[str]]:
    """The extractive summary of one assistant turn per ``(call, result)``: each section's bullets."""
    messages: list[Message] = []
    for call, result in pairs:
        messages.append(Message(role="assistant", tool_calls=(call,)))
        messages.append(Message(role="tool", tool_call_id=call.id, content=result))
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=tuple(messages)))
    sections: dict[str, list[str]] = {}
    for block in summary.split("## ")[1:]:
        title, _, body = block.partition("\n")
        sections[title.strip()] = [line[2:] for line in body.splitlines() if line.startswith("- ")]
    return sections


def grep(call_id: str, pattern: str) -> ToolCall:
    args = {"pattern": pattern, "path": ROOT, "output_mode": "files_with_matches"}
    return ToolCall(id=call_id, name="Grep", args=args)


def read(call_id: str, path: str) -> ToolCall:
    return ToolCall(id=call_id, name="Read", args={"file_path": path})


def test_a_relative_path_from_a_search_and_the_absolute_path_read_later_are_one_file() -> None:
    sections = summary_of(
        (grep("g", "formatCheckpointOutput"), "Found 2 files\ncmd/entire/cli/explain.go\ncmd/entire/cli/other.go"),
        (read("r", f"{ROOT}/cmd/entire/cli/explain.go"), "     1\tpackage cli\n     2\t"),
    )
    files = sections["Files and artifacts"]
    assert files.count(f"{ROOT}/cmd/entire/cli/explain.go: read") == 1
    assert not [line for line in files if line.startswith("cmd/entire/cli/explain.go")]
    assert "cmd/entire/cli/other.go (found by Grep)" in files  # no file read ends so: it stays as found


def test_a_relative_path_two_files_end_with_is_not_merged_into_either() -> None:
    sections = summary_of(
        (grep("g", "x"), "Found 1 file\nsrc/util.py"),
        (read("a", "/repo/a/src/util.py"), "x = 1"),
        (read("b", "/repo/b/src/util.py"), "x = 2"),
    )
    files = sections["Files and artifacts"]
    assert "src/util.py (found by Grep)" in files
    assert "/repo/a/src/util.py: read" in files
    assert "/repo/b/src/util.py: read" in files


def test_a_file_found_by_two_searches_is_one_bullet_naming_both() -> None:
    glob = ToolCall(id="l", name="Glob", args={"pattern": "**/*_test.go", "path": ROOT})
    sections = summary_of(
        (glob, f"{ROOT}/cmd/checkpoint/temporary_test.go"),
        (grep("g", "Temporary"), f"Found 1 file\n{ROOT}/cmd/checkpoint/temporary_test.go"),
    )
    files = sections["Files and artifacts"]
    assert files == [f"{ROOT}/cmd/checkpoint/temporary_test.go (found by Glob, Grep)"]


def test_a_search_hit_saying_created_is_the_matched_files_text_not_a_file_written() -> None:
    context = ToolCall(id="g", name="Grep", args={"pattern": "CreatedAt", "path": ROOT, "output_mode": "content"})
    hits = (
        f"{ROOT}/cmd/checkpoint/checkpoint.go-302-\n"
        f"{ROOT}/cmd/checkpoint/checkpoint.go-303- // CreatedAt is when the checkpoint was created\n"
        f"{ROOT}/cmd/checkpoint/checkpoint.go:304: CreatedAt time.Time\n"
    )
    files = summary_of((context, hits))["Files and artifacts"]
    assert files == [f"{ROOT}/cmd/checkpoint/checkpoint.go (found by Grep)"]


def test_windows_paths_are_whole_files_and_a_hits_code_names_none() -> None:
    # A Claude Code session on Windows (benchmarks/quality/heldout/claude_code_ohmyposh_*): Grep printed
    # "src\\segments\\project_test.go:127: u.env.HasParentFilePath(...)"; the summary listed "project_test.go",
    # "u.env" and "a.env" as files found, and a context line ("...golang.go-57-func ... error) {") as a file's outcome.
    root = "D:\\oh-my-posh\\src"
    args = {"pattern": "HasParentFilePath", "path": root, "output_mode": "content"}
    search = ToolCall(id="g", name="Grep", args=args)
    hits = (
        'src\\segments\\project_test.go:127:\t\tu.env.HasParentFilePath("Directory.Build.props", false)\n'
        f"{root}\\segments\\golang.go-57-func (g *Golang) parseModFile() (string, error) {{\n"
        f'{root}\\segments\\aspire.go:88:\ta.env.HasParentFilePath("Directory.Packages.props", false)\n'
    )
    files = summary_of((search, hits), (read("r", f"{root}\\segments\\project_test.go"), "package segments"))[
        "Files and artifacts"
    ]
    assert f"{root}\\segments\\project_test.go: read" in files  # the relative path found is the file read
    assert f"{root}\\segments\\aspire.go (found by Grep)" in files
    assert f"{root}\\segments\\golang.go (found by Grep)" in files
    assert not [line for line in files if ".env" in line or "parseModFile" in line or line.startswith("src")], files


def test_one_relative_path_spelt_with_either_slash_is_one_file() -> None:
    # Grep printed "src\\segments\\project_test.go", Git Bash's `git status` "src/segments/project_test.go".
    keys = [
        "src\\segments\\a_test.go",
        "src/segments/a_test.go",
        "d:\\repo\\src\\segments\\a_test.go",
        "x\\b.go",
        "x/b.go",
    ]
    same = canonical_paths(keys)
    assert same["src\\segments\\a_test.go"] == same["src/segments/a_test.go"] == "d:\\repo\\src\\segments\\a_test.go"
    assert same["x\\b.go"] == "x/b.go"  # no longer path: the two spellings are still one file


def test_a_write_is_its_file_operation_not_its_confirmation_read_as_a_record() -> None:
    path = f"{ROOT}/docs/plans/2026-02-04-explain-improvements.md"
    write = ToolCall(id="w", name="Write", args={"file_path": path, "content": "# Plan\n"})
    sections = summary_of((write, f"File created successfully at: {path}"))
    assert sections["Files and artifacts"] == [f"{path}: wrote"]
    assert "Commands and results" not in sections  # not "Write: File created successfully at = <path>"


def test_a_line_whose_field_is_a_sentence_is_not_a_record() -> None:
    lookup = ToolCall(id="q", name="get_booking", args={"id": "B1"})
    sections = summary_of((lookup, "Booking ID: B-20931\nThe booking was confirmed at: 2024-05-01 10:00\n"))
    commands = sections["Commands and results"]
    assert any("Booking ID = B-20931" in line for line in commands), commands
    assert not any("confirmed at =" in line for line in commands), commands


def test_an_output_the_harness_saved_to_a_file_says_where_and_is_read_from_its_preview() -> None:
    saved = (
        "<persisted-output>\nOutput too large (20.5KB). Full output saved to: /Users/alex/.claude/out-1.txt\n\n"
        f"Preview (first 2KB):\n{ROOT}/cmd/checkpoint/temporary_test.go-130-\t\t}},\n"
        f"{ROOT}/cmd/checkpoint/temporary_test.go:131: func TestTemporary(t *testing.T) {{\n</persisted-output>"
    )
    context = ToolCall(id="g", name="Grep", args={"pattern": "Temporary", "path": ROOT, "output_mode": "content"})
    sections = summary_of((context, saved))
    assert sections["Files and artifacts"] == [f"{ROOT}/cmd/checkpoint/temporary_test.go (found by Grep)"]
    (command,) = sections["Commands and results"]
    assert command.endswith("-> ok: output (20.5KB) saved to /Users/alex/.claude/out-1.txt"), command
    assert "persisted-output" not in "\n".join(line for lines in sections.values() for line in lines)


def bash(call_id: str, command: str) -> ToolCall:
    return ToolCall(id=call_id, name="bash", args={"command": command})


def test_a_file_a_shell_command_writes_is_a_file_of_the_work() -> None:
    sections = summary_of(
        (bash("h", "cat > ./django/contrib/auth/validators.py << 'EOF'\nif a > b:\n    x >> y.py\nEOF"), ""),
        (bash("c", "cp django/contrib/auth/validators.py django/contrib/auth/validators.py.backup"), ""),
        (bash("s", "cd /testbed && sed -i 's/= 1/= right/' astropy/modeling/separable.py && python t.py"), "ok"),
        (bash("r", "python reproduce.py > out.log 2>&1; grep -n x a.py >/dev/null"), ""),
    )
    files = sections["Files and artifacts"]
    for expected in (
        "django/contrib/auth/validators.py: wrote",
        "django/contrib/auth/validators.py.backup: wrote",
        "astropy/modeling/separable.py: edited",
        "out.log: wrote",
    ):
        assert expected in files, files
    assert not [line for line in files if line.startswith(("y.py", "/dev/null", "a.py"))]  # a heredoc's body


def test_a_quoted_redirect_target_is_its_path_and_a_variable_in_it_names_no_file() -> None:
    # Twenty-seventh held-out round (Claude Code, oh-my-posh): `cat > "$SCRATCH/repaint-test.toml"` became "Q: wrote".
    sections = summary_of(
        (bash("v", "cat > \"$SCRATCH/repaint-test.toml\" <<'EOF'\nversion = 4\nEOF\necho READY"), "READY"),
        (bash("q", 'python run.py > "out/run.log" 2>&1'), ""),
    )
    files = sections["Files and artifacts"]
    assert "out/run.log: wrote" in files, files
    assert not [line for line in files if line.startswith(("Q", "$SCRATCH"))], files


def test_a_command_that_only_wrote_files_and_said_nothing_is_told_by_its_files() -> None:
    # mini-swe-agent (held-out): "bash: cat > test_fix.py << 'EOF' from marshmallow import ... -> ok" stood in
    # Commands for each of eight scripts beside "test_fix.py: wrote" in Files, a tenth of a small budget.
    sections = summary_of(
        (bash("h", "cat > test_fix.py << 'EOF'\nprint('Test 1 PASSED')\nEOF"), ""),
        (bash("c", "cd /testbed && cp a.py a.py.backup && echo done > status.txt"), ""),
        (bash("r", "cat > run.py << 'EOF'\nprint(1)\nEOF\npython run.py"), ""),  # it ran something
        (bash("o", "cp big.log /tmp/big.log"), "cp: cannot stat 'big.log': No such file or directory"),
    )
    files = sections["Files and artifacts"]
    for expected in ("test_fix.py: wrote", "a.py.backup: wrote", "status.txt: wrote", "run.py: wrote"):
        assert expected in files, files
    commands = sections["Commands and results"]
    assert not [line for line in commands if "test_fix.py" in line or "a.py.backup" in line], commands
    assert [line for line in commands if "python run.py" in line], commands
    said = commands + sections.get("Errors", [])
    assert [line for line in said if "cannot stat" in line], said  # what it said is kept


def test_a_listing_names_neither_a_missing_file_nor_a_diffs_prefix() -> None:
    sections = summary_of(
        (bash("l", "./check_files.sh 2>&1"), "check: .git/gc.log: No such file or directory\nsrc/app.py\n"),
        (bash("d", "git stash show -p"), "diff --git a/src/sep.py b/src/sep.py\n--- a/src/sep.py\n+++ b/src/sep.py\n"),
    )
    files = sections["Files and artifacts"]
    assert not [line for line in files if "gc.log" in line], files
    assert not [line for line in files if line.startswith(("a/", "b/"))], files
    assert any(line.startswith("src/sep.py") for line in files), files
    assert any(line.startswith("src/app.py") for line in files), files


def test_a_scripts_comment_and_a_listings_block_count_are_no_figures() -> None:
    hook = '#!/bin/sh\n# $1 is the remote name (e.g., "origin")\nentire hooks git pre-push "$1"\n'
    sections = summary_of(
        (bash("c", "cat .git/hooks/pre-push 2>&1"), hook),
        (bash("l", "ls -la .git/hooks/ 2>&1"), "total 160\n-rwxr-xr-x 1 a staff 478 pre-push\n"),
    )
    commands = sections.get("Commands and results", [])
    assert not [line for line in commands if line.startswith("bash: # $1") or line == "bash: total 160"], commands


def test_a_tracebacks_frames_a_quoted_scripts_arrows_and_a_word_like_pyproject_toml_based_name_no_file() -> None:
    script = 'cd /testbed && python -c "\n# left -> _coord_matrix(model, 4)\nprint(1)\n# x > _coord_matrix\n"'
    traceback = (
        'Traceback (most recent call last):\n  File "/testbed/astropy/units/quantity.py", line 12, in <module>\n'
        "ImportError: cannot import name 'x'\n"
    )
    built = "ERROR: Could not build wheels for astropy, which is required to install pyproject.toml-based projects"
    sections = summary_of(
        (bash("p", script), "ok"), (bash("t", "./run.sh"), traceback), (bash("b", "./build.sh"), built)
    )
    assert "Files and artifacts" not in sections, sections.get("Files and artifacts")


@pytest.mark.parametrize(
    "progress",
    [
        "........................................................................ [ 34%]",
        "test/rules/yaml_test_cases_test.py ... [100%]",  # a file's tests (sqlfluff's held-out run)
        "testing/test_skipping.py::test_xfail xF [ 50%]",
    ],
)
def test_a_test_runners_progress_line_is_no_figure(progress: str) -> None:
    output = "collected 728 items\n\n" + f"{progress}\n" * 3
    items = output_items(output + "=== 728 passed in 15.14s ===", "bash", command=True)
    assert [item.text for item in items if "%]" in item.text] == []
    assert any("728 passed in 15.14s" in item.text for item in items)


def test_a_test_runs_outcome_is_its_tally_not_its_session_header() -> None:
    # mini-swe-agent (held-out): "pytest testing/test_skipping.py -> ok: === test session starts === | platform linux
    # -- Python 3.9.20, ... | rootdir: /testbed ... |…" was cut before the "77 passed" it ran for.
    run = (
        "============================= test session starts ==============================\n"
        "platform linux -- Python 3.9.20, pytest-5.4.1.dev593+ge6e300e72, py-1.11.0, pluggy-0.13.1\n"
        "rootdir: /testbed, configfile: pyproject.toml\n"
        "collected 77 items\n\n"
        "testing/test_skipping.py ............................................... [ 61%]\n"
        "..............................                                           [100%]\n\n"
        "============================== 77 passed in 2.76s =============================="
    )
    (command,) = summary_of((bash("p", "pytest testing/test_skipping.py"), run))["Commands and results"]
    assert command.startswith("bash: pytest testing/test_skipping.py -> ok: collected 77 items | ")
    assert command.endswith("77 passed in 2.76s ==============================")


def test_a_file_a_command_removes_is_deleted_not_still_written() -> None:
    backup = ToolCall(id="a", name="bash", args={"command": "cp src/L060.py src/L060.py.backup"})
    removed = ToolCall(id="b", name="bash", args={"command": "rm -f src/L060.py.backup reproduce_issue.py"})
    messages = (
        Message(role="assistant", tool_calls=(backup,)),
        Message(role="tool", tool_call_id="a", content=""),
        Message(role="assistant", tool_calls=(removed,)),
        Message(role="tool", tool_call_id="b", content=""),
    )
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages))
    assert "- src/L060.py.backup: wrote, deleted" in summary
    assert "- reproduce_issue.py: deleted" in summary  # every file a removal names is gone


def test_a_diffs_added_and_removed_lines_are_the_files_text_not_events() -> None:
    diff = (
        "diff --git a/docs/logging.md b/docs/logging.md\n--- a/docs/logging.md\n+++ b/docs/logging.md\n"
        "@@ -2,3 +2,3 @@\n-Logs are written to `.entire/logs/<session>.log`.\n"
        "+Logs are written to `.entire/logs/entire.log`.\n"
    )
    items = output_items(diff, "Bash", command=True)
    assert [item.text for item in items if item.kind == "artifact"] == ["docs/logging.md: modified"]


def test_files_a_search_only_named_have_no_reserved_room_of_their_own() -> None:
    # mini-swe-agent astropy-12907 at 10%: five "(listed by bash)" build files filled the Files section's reserved
    # share, and the failed build's error (the probe "No module named 'extension_helpers'") no longer fitted.
    def artifact(text: str, key: str, order: int) -> Salient:
        return Salient("artifact", text, key, order, informative_tokens(text))

    listed = artifact("a.go (found by Glob)", "a.go", 1)
    edited = artifact("src/billing/handlers_payment_refunds_service.go: read, edited x2", "src/billing/h.go", 2)
    taken = Selection(COUNTER, 100, None, lambda _item: 0.0).select([listed, edited], None, None)
    assert [entry.item for entry in taken] == [listed, edited]  # with room, both, in conversation order
    one = Selection(COUNTER, 100, 1, lambda _item: 0.0).select([listed, edited], None, None)
    assert [entry.item for entry in one] == [edited]  # the listing ranks first, but only after each share was given


def test_lines_that_differ_only_in_their_numbers_are_one_series() -> None:
    # Claude Code telemetry session: `for i in 1 2 3 4 5; do time ./entire help; done` printed five timing lines,
    # which stood as five near-identical bullets while the command that printed them dropped out.
    runs = "\n".join(f"./entire help > /dev/null 2>&1  0.01s user 0.02s system 25% cpu 0.13{n} total" for n in range(5))
    items = output_items(f"{runs}\nmeasured p95 latency: 212 ms", "Bash", command=True)
    assert [item.text for item in items] == [
        "Bash: ./entire help > /dev/null 2>&1 0.01s user 0.02s system 25% cpu 0.134 total (last of 5 lines like it)",
        "Bash: measured p95 latency: 212 ms",
    ]


def test_a_file_a_shell_command_shows_is_a_file_the_work_read() -> None:
    # mini-swe-agent reads files with cat and sed -n: its summaries listed none of the files it read.
    shown = ToolCall(
        id="a", name="bash", args={"command": "cd /testbed && sed -n '1100,1130p' src/marshmallow/fields.py"}
    )
    search = ToolCall(id="b", name="bash", args={"command": "grep -rn 'schema.opts' src/"})
    messages = (
        Message(role="assistant", tool_calls=(shown,)),
        Message(role="tool", tool_call_id="a", content="    def _bind_to_schema(self, field_name, schema):"),
        Message(role="assistant", tool_calls=(search,)),
        Message(role="tool", tool_call_id="b", content="src/marshmallow/fields.py:1117: or getattr(schema.opts, x)"),
    )
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages))
    assert "- src/marshmallow/fields.py: read" in summary
    assert "- src/: read" not in summary  # a search names files it did not read


def test_a_path_on_past_a_dotted_directory_is_named_whole() -> None:
    # The set's Claude Code git-status session: `pgrep -lf` listed `/Applications/Sourcetree.app/Contents/MacOS/
    # Sourcetree`, and the path ended at `.app` (the last dotted name), so the running program went unnamed.
    sections = summary_of(
        (
            bash("p", 'pgrep -lf "Sourcetree|GitKraken|git"'),
            "681 /Applications/Sourcetree.app/Contents/MacOS/Sourcetree",
        ),
    )
    files = sections["Files and artifacts"]
    assert any("/Applications/Sourcetree.app/Contents/MacOS/Sourcetree" in line for line in files), files
