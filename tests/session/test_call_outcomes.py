"""How a summary reports what a tool call did: each call once, failures in Errors, and no failure that is not one.

Read from real agent logs: Claude Code cancels a turn's parallel calls when one fails (their results say "Sibling
tool call errored"); grep and ``git config <key>`` exit 1 when they find nothing; a script that was only read holds
``|| exit 1``; a shell script's ``"$1"`` is a parameter, not a dollar amount.
"""

from __future__ import annotations

import pytest
from ctxbudget import Message, SummaryRequest, ToolCall
from ctxbudget.compaction.calls import reads_document, reads_source
from ctxbudget.compaction.outcomes import failure_line
from ctxbudget.compaction.outputs import output_items
from ctxbudget.compaction.summarize import ExtractiveSummarizer
from ctxbudget.providers import counter_for_model

COUNTER = counter_for_model("gpt-4o")


def bash(call_id: str, command: str) -> ToolCall:
    return ToolCall(id=call_id, name="Bash", args={"command": command, "description": "check"})


def summary_of(*pairs: tuple[ToolCall, str, bool]) -> dict[str, str]:
    """The extractive summary of one assistant turn per ``(call, result, is_error)``, by section."""
    messages: list[Message] = []
    for call, result, is_error in pairs:
        messages.append(Message(role="assistant", tool_calls=(call,)))
        messages.append(Message(role="tool", tool_call_id=call.id, content=result, metadata={"is_error": is_error}))
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=tuple(messages)))
    sections: dict[str, str] = {}
    for block in summary.split("## ")[1:]:
        title, _, body = block.partition("\n")
        sections[title.strip()] = body
    return sections


def test_a_failed_command_is_one_bullet_in_errors_not_also_a_failed_command() -> None:
    sections = summary_of(
        (bash("a", "git status 2>&1"), "fatal: unable to read e53647ba\nExit code 128", True),
        (bash("b", "git log -1 --oneline"), "febabe6 Type consolidation", False),
    )
    assert "git status 2>&1 -> fatal: unable to read e53647ba (Exit code 128)" in sections["Errors"]
    assert "git status" not in sections["Commands and results"]
    assert "git log -1 --oneline -> ok: febabe6 Type consolidation" in sections["Commands and results"]


def test_a_parallel_call_the_harness_cancelled_is_not_run_not_an_error() -> None:
    cancelled = "<tool_use_error>Sibling tool call errored</tool_use_error>"
    sections = summary_of(
        (bash("a", "git status 2>&1"), "fatal: unable to read e53647ba\nExit code 128", True),
        (bash("b", "git worktree list 2>&1"), cancelled, True),
    )
    assert "git worktree list 2>&1 -> not run (a parallel call failed first)" in sections["Commands and results"]
    assert "worktree" not in sections["Errors"]
    assert "Sibling" not in "".join(sections.values())


@pytest.mark.parametrize(
    "command",
    [
        'pgrep -lf "Sourcetree|GitKraken" 2>&1',
        "git -C /repo config gc.auto 2>&1",
        'git config gc.auto 2>&1; echo "---"; git config gc.autoPackLimit 2>&1',
        "ps aux | grep -i gitify",
    ],
)
def test_a_search_that_exits_1_with_no_output_found_nothing(command: str) -> None:
    sections = summary_of((bash("a", command), "---\nExit code 1" if "echo" in command else "Exit code 1", True))
    assert "Errors" not in sections
    assert f"{command} -> ok: no match (exit code 1)" in sections["Commands and results"]


def test_exit_1_from_a_command_that_is_not_a_search_is_still_a_failure() -> None:
    sections = summary_of((bash("a", "make lint"), "Exit code 1", True))
    assert "make lint -> Exit code 1" in sections["Errors"]


def test_a_command_the_harness_timed_out_says_so_beside_its_exit_code() -> None:
    # Claude Code (held-out round 4, oh-my-posh): "Exit code 143\nCommand timed out after 2m 0s" was "-> Exit code
    # 143": the cause (a `find /` over a whole disk ran out of time) was not said.
    sections = summary_of(
        (bash("a", 'find / -iname "colorful*.go"'), "Exit code 143\nCommand timed out after 2m 0s", True)
    )
    assert 'find / -iname "colorful*.go" -> Command timed out after 2m 0s (Exit code 143)' in sections["Errors"]


def test_a_script_that_was_read_is_not_failed_by_its_own_exit_statements() -> None:
    script = '#!/bin/sh\n# Entire CLI hooks\nentire hooks git commit-msg "$1" || exit 1\n'
    sections = summary_of((bash("a", "cat .git/hooks/commit-msg 2>&1"), script, False))
    assert "Errors" not in sections


def test_a_shell_parameter_is_not_a_dollar_amount_but_a_price_is() -> None:
    script = '#!/bin/sh\nentire hooks git pre-push "$1" || true\nremote="${1}"\n'
    assert not [item for item in output_items(script, "Bash", command=True) if item.kind == "figure"]
    priced = output_items("quote ready\ntotal price: $957.\n", "get_quote")
    assert any("$957" in item.text for item in priced if item.kind == "figure")


def test_a_line_is_read_once_and_a_failure_is_not_a_record() -> None:
    """tau-bench: ``Error: ... paid 1047`` was a figure and a ``field = value`` record; ``Error: flight HAT030 not
    available`` a record beside the Errors bullet that reads the same failure."""
    paid = "Error: payment amount does not add up, total price is 1002, but paid 1047"
    assert [item.text for item in output_items(paid, "book_reservation")] == [f"book_reservation: {paid}"]
    assert output_items("Error: flight HAT030 not available on date 2024-05-13", "update_reservation_flights") == []
    record = [item.text for item in output_items("order: W4706969\nrefund: 57.20 USD\nstatus: ok\n", "get_order")]
    assert record == ["get_order: order = W4706969", "get_order: refund = 57.20 USD"]


def test_a_figure_inside_a_search_hit_is_the_files_and_a_line_the_tool_printed_is_a_figure() -> None:
    listing = "lib/pool.py:12: TIMEOUT = 30 s\nlib/pool.py:40: retries = 5 items\nmeasured peak memory: 9686 MiB\n"
    figures = [item.text for item in output_items(listing, "search", file_read=True, search=True)]
    assert "search: measured peak memory: 9686 MiB" in figures
    assert not [text for text in figures if "TIMEOUT" in text or "retries" in text]


def test_a_failed_command_that_ran_again_in_another_form_and_worked_is_marked_resolved() -> None:
    sections = summary_of(
        (bash("a", "git status 2>&1"), "fatal: unable to read e53647ba\nExit code 128", True),
        (bash("b", "git read-tree HEAD 2>&1"), "", False),
        (bash("c", "git status --short 2>&1 | head -20"), " M README.md", False),
    )
    assert "git status 2>&1 -> fatal: unable to read e53647ba (Exit code 128) (resolved later)" in sections["Errors"]


def test_a_failure_is_not_resolved_by_the_same_tool_on_other_arguments() -> None:
    sections = summary_of(
        (bash("a", "pytest tests/test_a.py -x"), "=== 2 failed, 3 passed ===\nExit code 1", True),
        (bash("b", "pytest tests/test_b.py"), "=== 4 passed ===", False),
    )
    assert "test_a.py" in sections["Errors"]
    assert "resolved" not in sections["Errors"]


def test_a_cleared_search_keeps_the_figure_it_printed_before_the_paths_it_only_listed() -> None:
    listing = "\n".join(f"lib/mod_{i}.py:{i}: the handler keeps the pool" for i in range(12))
    output = f"{listing}\nmeasured peak memory of the checkout job: 9686 MiB\n"
    call = ToolCall(id="s", name="search", args={"pattern": "handler"})
    result = Message(role="tool", tool_call_id="s", name="search", content=output)
    lines = ExtractiveSummarizer(COUNTER).key_lines(result, 4, {"s": call})
    assert lines[0] == "measured peak memory of the checkout job: 9686 MiB"
    assert all(line.endswith("(found by search)") for line in lines[1:])


def test_an_install_commands_progress_lines_are_not_figures_of_the_work() -> None:
    progress = (
        "Collecting pytest\n  Downloading pytest-9.0.3-py3-none-any.whl (375 kB)\n"
        "  Downloading pluggy-1.6.0-py3-none-any.whl.metadata (4.8 kB)\n"
        "Installing collected packages: pluggy, pytest\nSuccessfully installed pluggy-1.6.0 pytest-9.0.3"
    )
    sections = summary_of((bash("a", "pip install pytest"), progress, False))
    bullets = sections["Commands and results"].strip().splitlines()
    assert len(bullets) == 1  # the call's own, which says how it ended; no "Bash: Downloading ... (375 kB)" figures
    assert bullets[0].startswith("- Bash: pip install pytest -> ok: Collecting pytest")
    assert bullets[0].endswith("Successfully installed pluggy-1.6.0 pytest-9.0.3")
    assert output_items(progress, "Bash", command=True, install=True) == []


def test_a_scripts_own_test_lines_are_one_figure_of_the_run() -> None:
    lines = [f"Test {n} PASSED: case {n} works" for n in range(1, 4)] + ["Test 4 FAILED: 'List' has no 'opts'"]
    items = output_items("\n".join(lines) + "\n" + "log line\n" * 50, "bash", command=True)
    assert [item.text for item in items] == ["bash: 4 tests: 3 passed, 1 failed; Test 4 FAILED: 'List' has no 'opts'"]
    passed = output_items("\n".join(lines[:3]) + "\n" + "log line\n" * 50, "bash", command=True)
    assert [item.text for item in passed] == ["bash: 3 tests: 3 passed"]  # a script prints no summary line of its own


def test_a_line_the_calls_bullet_shows_is_not_a_bullet_again() -> None:
    output = "Test 1 PASSED: DateTime in List works\nmeasured p95 latency: 212 ms"
    sections = summary_of((bash("a", "python test_fix.py"), output, False))
    commands = sections["Commands and results"]
    assert "python test_fix.py -> ok: Test 1 PASSED: DateTime in List works | measured p95 latency: 212 ms" in commands
    assert commands.count("212 ms") == 1


def test_a_line_the_calls_bullet_shows_stands_in_for_the_bullet_when_that_is_clipped_short_of_it() -> None:
    noise = " ".join(f"--flag-{n}=value{n}" for n in range(40))  # a long command: its bullet costs ~200 tokens
    call = bash("a", f"python run.py {noise}")
    result = "collected 727 items\n== 3 passed, 724 deselected in 0.26s =="
    messages = (
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", tool_call_id="a", content=result),
    )
    roomy = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages, max_tokens=2000))
    assert roomy.count("3 passed, 724 deselected") == 1  # in the call's bullet only
    tight = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=messages, max_tokens=80))
    assert "--flag-39" not in tight  # the call's bullet is clipped short of its outcome ...
    assert "3 passed, 724 deselected" in tight  # ... so its figure line stands in for it


def test_a_failed_lint_names_its_first_and_its_last_diagnostic() -> None:
    lint = (
        "Exit code 1\n[lint] $ golangci-lint run ./...\n"
        "cmd/entire/cli/hooks_git_cmd.go:68:13: Error return value of `paths.ReadCurrentSession` is not checked "
        "(errcheck)\n\tsessionID, _ := paths.ReadCurrentSession()\n\t           ^\n"
        "cmd/entire/cli/logging/logger.go:128:12: G304: Potential file inclusion via variable (gosec)\n"
        "\tf, err := os.OpenFile(logFilePath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)\n\t          ^\n"
        "2 issues:\n* errcheck: 1\n* gosec: 1\n[lint] ERROR task failed"
    )
    errors = summary_of((bash("a", "mise run lint 2>&1"), lint, True))["Errors"]
    assert "hooks_git_cmd.go:68:13: Error return value" in errors
    assert "logger.go:128:12: G304: Potential file inclusion via variable (gosec)" in errors  # the second was lost


def test_a_go_test_run_whose_failures_a_pipe_hides_from_its_exit_status_failed() -> None:
    output = (
        "ok  \tentire.io/cli/a\t0.2s\n--- FAIL: TestSign (0.01s)\n"
        "    sign_test.go:12: cannot auto-sign commit: disable commit.gpgSign\nFAIL\n"
        "FAIL\tentire.io/cli/internal/git\t0.412s\nok  \tentire.io/cli/b\t0.3s"
    )
    errors = summary_of((bash("a", "go test ./... 2>&1 | tail -50"), output, False))["Errors"]
    assert "go test ./... 2>&1 | tail -50 -> --- FAIL: TestSign (0.01s)" in errors


def test_a_source_files_code_saying_a_path_was_saved_is_not_a_file_written() -> None:
    # Twentieth held-out round (entireio/cli): Read of setup.go gave 'Files and artifacts' the bullet
    # '204→ fmt.Fprintln(w, "✓ Local settings saved (.entire/settings.local.json)")'.
    read = "\n".join(
        [
            "   203→\tif err := save(); err != nil {",
            '   204→\t\tfmt.Fprintln(w, "✓ Local settings saved (.entire/settings.local.json)")',
            "   205→\t}",
        ]
    )
    assert output_items(read, "Read", file_read=True, source=True) == []
    log = "Local settings saved (.entire/settings.local.json)\n"  # a log's own line says it happened
    assert [item.key for item in output_items(log, "Read", file_read=True)] == [".entire/settings.local.json"]


def test_an_api_error_body_after_an_exit_code_is_the_failure_line() -> None:
    # Twenty-first held-out round (cipher-box): `gh api graphql` exited 1 with '{"errors":[{"path":[...],
    # "message":"Field 'body' doesn't accept argument 'truncate'"}]}'; the summary's error said only "Exit code 1".
    path = ",".join(f'"{part}"' for part in ("query", "repository", "pullRequest", "reviewThreads", "nodes") * 4)
    body = f'{{"errors":[{{"path":[{path}],"message":"Field \'body\' doesn\'t accept argument \'truncate\'"}}]}}'
    failed = Message(role="tool", tool_call_id="g", content=f"Exit code 1\n{body}gh: Field 'body' doesn't accept")
    assert failure_line(failed) == "Field 'body' doesn't accept argument 'truncate' (Exit code 1)"
    listed = Message(role="tool", tool_call_id="g", content='{"errors": [], "data": {"message": "hi"}}\n2 more')
    assert failure_line(listed) is None  # no error in it, and no exit code


def test_a_source_files_code_line_is_no_figure_and_its_prose_is() -> None:
    # Twenty-seventh held-out round (oh-my-posh): Reads of omp.zsh and omp.ps1 gave "Read: printf -v ch '%%%02X'
    # "'$ch"" (shell code without an operator) and "Read: 1113 $executingCommand = ..." (.ps1 was not a source file).
    zsh = "   405\t    printf -v ch '%%%02X' \"'$ch\"\n   406\t    REPLY+=$ch\n"
    assert output_items(zsh, "Read", file_read=True, source=True) == []
    docstring = "    12\tThe parser takes 212 ms per file on the staging box.\n"
    assert [item.kind for item in output_items(docstring, "Read", file_read=True, source=True)] == ["figure"]
    ps1 = ToolCall(id="r", name="Read", args={"file_path": "D:\\oh-my-posh\\src\\shell\\scripts\\omp.ps1"})
    assert reads_source(ps1)


def test_a_globs_tail_is_no_file_the_output_listed() -> None:
    # Held-out (entireio/git-sync): "go: cannot run *_test.go files" put "_test.go (listed by Bash)" among the files.
    items = output_items("go: cannot run *_test.go files (see go help test)\n", "Bash", command=True)
    assert not any("_test.go" in item.text for item in items)
    items = output_items("wrote **src/app_main.py** and ./build/out.json\n", "Bash", command=True)
    assert {item.key for item in items if item.kind == "artifact"} >= {"src/app_main.py"}


def test_a_document_saying_a_path_was_updated_or_generated_is_no_file_the_work_wrote() -> None:
    # Twenty-ninth held-out round (cipher-box): a Read of .planning/STATE.md gave "Files and artifacts" the bullets
    # "5→See: .planning/PROJECT.md (updated 2026-02-11)" and "171→- `...-any-warnings.md` -- Fix ... generated API
    # client", weighted above every other item of the read.
    state = (
        "     5→See: .planning/PROJECT.md (updated 2026-02-11)\n"
        "   171→- `2026-02-14-fix-orval-any-warnings.md` -- Fix warnings in generated API client (area: tooling)\n"
    )
    assert output_items(state, "Read STATE.md", file_read=True, document=True) == []
    read = ToolCall(id="r", name="Read", args={"file_path": "/repo/.planning/STATE.md"})
    assert reads_document(read)
    assert not reads_document(ToolCall(id="l", name="Read", args={"file_path": "/repo/build.log"}))
    assert reads_document(ToolCall(id="c", name="bash", args={"command": "cat README.md docs/usage.rst"}))


def test_a_progress_counter_is_no_figure_of_the_work() -> None:
    # Thirtieth held-out round (sphinx): "bash: reading sources... [100%] index" and "bash: writing output... [100%]
    # index" were figures of the build, beside the one line that said how it ended.
    build = (
        "Running Sphinx v3.3.0\nreading sources... [100%] index\nwriting output... [ 50%] index\n"
        "[ 45%] Building CXX object took 12 ms\nbuild finished with problems, 1 warning.\n"
    )
    figures = [item.text for item in output_items(build, "bash", command=True) if item.kind == "figure"]
    assert figures == ["bash: [ 45%] Building CXX object took 12 ms", "bash: build finished with problems, 1 warning."]


def test_a_traceback_inside_a_file_that_was_read_is_the_files_text_not_a_failure() -> None:
    """Held-out (a mini-swe-agent run on pytest): ``cat testing/test_collection.py`` exited 0, and the summary filed
    it under Errors as ``Traceback (most recent call last):",``, a line of a test's expected output."""
    expected_output = 'result.stdout.fnmatch_lines(\n    [\n        "Traceback (most recent call last):",\n'
    expected_output += '        "AssertionError: assert 0",\n    ]\n)\n'
    sections = summary_of(
        (bash("a", "cat testing/test_collection.py"), expected_output, False),
        (
            bash("b", "python -m pytest testing/test_collection.py"),
            "Traceback (most recent call last):\n"
            '  File "x.py", line 3, in <module>\nAssertionError: assert 0\nExit code 1',
            True,
        ),
    )
    assert "cat testing" not in sections["Errors"]
    assert "pytest testing/test_collection.py -> AssertionError: assert 0" in sections["Errors"]
    # no flag at all (a log that records none): the text is all there is to go on
    unflagged = Message(role="tool", tool_call_id="c", content="Traceback (most recent call last):\nKeyError: 'a'")
    assert failure_line(unflagged) is not None


def test_a_short_failed_output_says_why_beside_its_exit_code() -> None:
    """Held-out (Claude Code, entireio/git-sync): ``go run /tmp/re_test.go`` failed with "Exit code 1" and then
    "go: cannot run *_test.go files (/tmp/re_test.go)"; the summary kept only "Exit code 1"."""
    failed = Message(
        role="tool",
        tool_call_id="a",
        content="Exit code 1\ngo: cannot run *_test.go files (/tmp/re_test.go)",
        metadata={"is_error": True},
    )
    assert failure_line(failed) == "go: cannot run *_test.go files (/tmp/re_test.go) (Exit code 1)"
    long_output = Message(
        role="tool", tool_call_id="b", content="Exit code 1\n" + "step done\n" * 80, metadata={"is_error": True}
    )
    assert failure_line(long_output) == "Exit code 1"  # a long output's first line is not why it failed
