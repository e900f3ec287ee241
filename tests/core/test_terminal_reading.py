"""What a terminal wrote: colour codes are no text, and a command the user ran is a command with its result.

Claude Code (held-out round 6, napoli-matcha): the user ran ``./run_test.sh`` with ``!``; the summary's User facts
were twelve lines of vitest output with their escape codes (``[31m⎯⎯⎯ Failed Tests 1``) and a bare
``<bash-stderr></bash-stderr>``.
"""

from __future__ import annotations

import re

from ctxbudget import Message, SummaryRequest
from ctxbudget.compaction._terminal import USER_COMMAND_TOOL, _outputs, read_terminal
from ctxbudget.compaction.harness import strip_harness
from ctxbudget.compaction.outcomes import failure_line
from ctxbudget.compaction.outputs import output_items
from ctxbudget.compaction.summarize import ExtractiveSummarizer
from ctxbudget.providers import counter_for_model
from hypothesis import given
from hypothesis import strategies as st

RUN = Message(role="user", content="<bash-input>./run_test.sh tests/pr_creation.test.ts</bash-input>", id="in")
OUTPUT = Message(
    role="user",
    id="out",
    content=(
        "<bash-stdout>\n\x1b[1m\x1b[46m RUN \x1b[49m\x1b[22m v4.0.18\n</bash-stdout><bash-stderr>"
        "\x1b[41m\x1b[1m FAIL \x1b[22m\x1b[49m tests/pr_creation.test.ts > PR creation > sets status to Done\n"
        "Error: ENOENT: no such file or directory, open 'feature_requests/FR-test/AGI-test.md'\n"
        " Test Files  1 failed (1)\n</bash-stderr>"
    ),
)


def test_a_command_the_user_ran_is_a_call_and_its_output_the_result() -> None:
    read = read_terminal([RUN, OUTPUT])
    assert [m.role for m in read] == ["assistant", "tool"]
    (call,) = read[0].tool_calls
    assert call.name == USER_COMMAND_TOOL
    assert call.args == {"command": "./run_test.sh tests/pr_creation.test.ts"}
    assert read[1].tool_call_id == call.id
    assert "\x1b" not in read[1].text
    assert read[1].text.startswith(" RUN  v4.0.18\n FAIL  tests/pr_creation.test.ts")


def test_the_summary_says_what_the_user_ran_and_that_it_failed() -> None:
    summary = ExtractiveSummarizer(counter_for_model("gpt-4o")).summarize(
        SummaryRequest(messages=(Message(role="user", content="Why is the push failing?"), RUN, OUTPUT))
    )
    assert f"{USER_COMMAND_TOOL}: ./run_test.sh tests/pr_creation.test.ts -> " in summary
    assert "AGI-test.md" in summary
    assert "\x1b" not in summary
    assert "<bash-" not in summary
    assert "## User facts" not in summary  # no line of the output is something the user said


def test_an_output_with_no_command_before_it_is_left_as_it_was_sent() -> None:
    assert read_terminal([OUTPUT])[0].role == "user"


def test_a_harness_block_right_after_another_closed_is_harness_text_too() -> None:
    assert strip_harness("<bash-stdout>ok\n</bash-stdout><bash-stderr></bash-stderr>") == ""
    assert strip_harness("I wrote <bash-stderr> in my notes.") == "I wrote <bash-stderr> in my notes."


PASTED = (
    "nope I don't see it in cursor. ~/Projects  $ ln -s ~/src/skills/plugins/entire ~/.cursor/plugins/entire\n"
    "~/Projects  $ ls ~/.cursor/plugins\nentire  local\n"
    "~/Projects  $ ls ~/.cursor/plugins/entire/skills\ncursor-loader-probe     search\nexplain  session-handoff"
)


def test_a_pasted_terminal_is_the_users_words_then_the_commands_they_ran() -> None:
    # Eighth held-out round (entireio/skills): the user pasted their terminal, and "entire local" and
    # "cursor-loader-probe search" were User facts, each prompt line a fact of its own.
    read = read_terminal([Message(role="user", content=PASTED, id="u")])
    assert [m.role for m in read] == ["user", *["assistant", "tool"] * 3]
    assert read[0].text == "nope I don't see it in cursor."
    commands = [m.tool_calls[0].args["command"] for m in read if m.role == "assistant"]
    assert commands == [
        "ln -s ~/src/skills/plugins/entire ~/.cursor/plugins/entire",
        "ls ~/.cursor/plugins",
        "ls ~/.cursor/plugins/entire/skills",
    ]
    assert [m.text for m in read if m.role == "tool"] == ["", "entire  local", read[-1].text]
    assert read[-1].text.startswith("cursor-loader-probe")
    summary = ExtractiveSummarizer(counter_for_model("gpt-4o")).summarize(
        SummaryRequest(messages=(Message(role="user", content=PASTED, id="u"),))
    )
    assert "- entire local" not in summary
    assert "ls ~/.cursor/plugins" in summary.split("## Commands and results", 1)[1]


def test_dollar_signs_in_prose_and_one_command_to_run_are_the_users_words() -> None:
    for said in ("It costs $ 5 per seat. Then $ signs.", "Please run this:\n$ make test", "I paid $100."):
        assert read_terminal([Message(role="user", content=said, id="u")])[0].text == said


CI_LOG = "\n".join(
    f"test\tTests\t2026-04-29T08:18:34.{n:07d}Z {line}"
    for n, line in enumerate(
        [
            *(f"ok  \tgithub.com/entirehq/git-sync/internal/pkg{n}\t1.0{n}s" for n in range(8)),
            "=== RUN   TestRun_IntegrationV2FetchCanceledMidStreamFails",
            "    integration_test.go:88: want context.Canceled, got invalid pkt-len found",
            "--- FAIL: TestRun_IntegrationV2FetchCanceledMidStreamFails (0.01s)",
            "--- FAIL: TestRun_IntegrationV1FetchCanceledMidStreamFails (0.01s)",
            "FAIL",
            "FAIL\tgithub.com/entirehq/git-sync/internal/syncer\t36.010s",
            *(f"ok  \tgithub.com/entirehq/git-sync/cmd/tool{n}\t1.0{n}s" for n in range(8)),
            "ok  \tgithub.com/entirehq/git-sync/internal/validation\t1.016s",
            "ok  \tgithub.com/entirehq/git-sync/pkg/gitsync\t1.107s",
            "ok  \tgithub.com/entirehq/git-sync/pkg/gitsync/unstable\t1.014s",
            "FAIL",
            "[test:ci] ERROR task failed",
            "##[error]Process completed with exit code 1.",
        ]
    )
)


def test_a_ci_log_reads_as_the_tools_printed_it_and_its_failure_names_the_failed_tests() -> None:
    # Tenth held-out round (git-sync): `gh run view --log-failed` prefixes every line with the job, the step and a
    # timestamp, and the failure read was the runner's "##[error]Process completed with exit code 1."
    (read,) = read_terminal([Message(role="tool", tool_call_id="c", content=CI_LOG)])
    assert read.text.splitlines()[10] == "--- FAIL: TestRun_IntegrationV2FetchCanceledMidStreamFails (0.01s)"
    assert read.text.splitlines()[-1] == "Process completed with exit code 1."
    failed = failure_line(read)
    assert failed is not None
    assert failed.startswith(  # verbose (=== RUN): a test's message is printed before its "--- FAIL" line
        "--- FAIL: TestRun_IntegrationV2FetchCanceledMidStreamFails: want context.Canceled, got invalid pkt-len found"
        " … --- FAIL: TestRun_IntegrationV1FetchCanceledMidStreamFails (0.01s)"
    )
    assert failed.endswith("(Process completed with exit code 1.)")


def test_a_failed_go_test_is_named_with_the_message_go_test_prints_under_it() -> None:
    # Tenth held-out round (git-sync): the CI log's failure named the two tests but not why they failed, which go
    # test prints on the line under each "--- FAIL" (a Go error chain, whose cause is its end).
    chain = "got fetch to store: update object storage: read signature: invalid pkt-len found: not a hexadecimal byte"
    log = "\n".join(
        [
            *(f"ok  \tgithub.com/x/pkg{n}\t1.0{n}s" for n in range(6)),
            "--- FAIL: TestRun_IntegrationV2FetchCanceledMidStreamFails (0.01s)",
            f"    integration_test.go:281: expected context.Canceled, {chain} 'z'",
            "--- FAIL: TestRun_IntegrationV1FetchCanceledMidStreamFails (0.01s)",
            "    integration_test.go:391: expected context.Canceled, got read tcp 127.0.0.1:34->127.0.0.1:43629: "
            "use of closed network connection",
            "FAIL\tgithub.com/x/internal/syncer\t36.010s",
            *(f"ok  \tgithub.com/x/cmd{n}\t1.0{n}s" for n in range(6)),
            "Process completed with exit code 1.",
        ]
    )
    failed = failure_line(Message(role="tool", tool_call_id="c", content=log))
    assert failed is not None
    first, _, last = failed.partition(" … --- FAIL: TestRun_IntegrationV1")
    assert first.startswith("--- FAIL: TestRun_IntegrationV2FetchCanceledMidStreamFails: ")
    assert first.endswith("invalid pkt-len found: not a hexadecimal byte 'z'")  # the cause, from a word's start
    assert "use of closed network connection" in last
    assert len(failed) <= 240
    one = "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: want 3, got 4\nFAIL\nexit status 1"
    assert failure_line(Message(role="tool", tool_call_id="c", content=one)) == (
        "parse_test.go:12: want 3, got 4 (exit status 1)"  # a short run: the message is at its edge, a diagnostic
    )


def test_a_scripts_error_as_bash_reports_it_is_a_failure() -> None:
    # Fourteenth held-out round (entireio/cli): a wrapper script run under `set -u` printed
    # ".claude/scripts/entire-wrapper.sh: line 16: CLAUDE_PROJECT_DIR: unbound variable" and no exit code; it was "ok".
    for printed in (
        ".claude/scripts/entire-wrapper.sh: line 16: CLAUDE_PROJECT_DIR: unbound variable",
        "building...\n./deploy.sh: line 9: syntax error near unexpected token `fi'",
    ):
        assert failure_line(Message(role="tool", tool_call_id="c", content=printed)) == printed.splitlines()[-1]
    assert failure_line(Message(role="tool", tool_call_id="c", content="Read line: 12 of 30")) is None


def test_an_issues_steps_to_reproduce_are_not_a_terminal_the_user_pasted() -> None:
    # Fourteenth held-out round (mini-swe-agent, sphinx): the PR description's "How to Reproduce" block read as five
    # commands the user ran, each "-> ok", the last one given the rest of the description as its output.
    issue = (
        "### How to Reproduce\n\n```\n$ git clone https://github.com/anntzer/mplcursors\n$ cd mplcursors\n"
        "$ pip install -r .doc-requirements.txt\n$ pip install -e .\n$ make -C doc html\n```\n"
        "This passes just fine, because the requirement is 0.6 and the installed version is 0.9.\n"
    )
    (read,) = read_terminal([Message(role="user", content=issue, id="u")])
    assert read.text == issue
    session = "```\n$ pytest -q\n2 failed, 40 passed\n$ git status --short\n M src/app.py\n```\nwhat now?"
    pasted = read_terminal([Message(role="user", content=session, id="u")])
    assert [m.role for m in pasted] == ["assistant", "tool", "assistant", "tool", "user"]  # a session, a question
    assert [pasted[n].text for n in (1, 3, 4)] == ["2 failed, 40 passed", " M src/app.py", "what now?"]


def test_an_error_under_a_heading_of_its_own_is_read_with_the_line_that_says_what() -> None:
    # Fourteenth held-out round (mini-swe-agent, sphinx): sphinx-build printed "Sphinx version error:" over the line
    # that says which extension needs which version; the failure read was "Exit code 2".
    printed = (
        "Running Sphinx v4.3.0+/81a4fd973\nmaking output directory... done\n\nSphinx version error:\n"
        "This project needs the extension dummy_extension at least in version 0.6 and therefore cannot be built with "
        "the loaded version (0.10).\nExit code 2"
    )
    failed = failure_line(Message(role="tool", tool_call_id="c", content=printed))
    assert failed is not None
    assert failed.startswith("Sphinx version error: This project needs the extension dummy_extension at least in ")
    assert failed.endswith("(Exit code 2)")


def test_a_slash_command_the_user_ran_is_read_as_a_call_with_what_it_printed() -> None:
    # Fifteenth held-out round (duet): "/rename kiki" and its "Session and agent renamed to: kiki" were harness turns,
    # read as nothing, though the renamed session is what the user later asked about; "/exit" changes nothing.
    caveat = Message(role="user", content="<local-command-caveat>Caveat: ...</local-command-caveat>", id="c")
    typed = Message(
        role="user",
        content="<command-name>/rename</command-name>\n<command-message>rename</command-message>\n"
        "<command-args>kiki</command-args>",
        id="r",
        metadata={"isMeta": True},
    )
    printed = Message(
        role="user", content="<local-command-stdout>Session and agent renamed to: kiki</local-command-stdout>"
    )
    exits = Message(role="user", content="<command-name>/exit</command-name>\n<command-args></command-args>", id="e")
    read = read_terminal([caveat, typed, printed, exits])
    assert read[0] is caveat
    assert read[3] is exits
    (call,) = read[1].tool_calls
    assert (call.name, call.args) == ("Command (user)", {"command": "/rename kiki"})
    assert (read[2].role, read[2].tool_call_id, read[2].text) == ("tool", call.id, "Session and agent renamed to: kiki")


def test_a_git_status_line_names_the_file_first() -> None:
    # Eighteenth held-out round (git-sync): "renamed:    pkg/gitsync/client.go -> client.go" was an artifact bullet
    # starting "renamed:", eleven of them, which read as one file "renamed" in eleven bullets.
    status = (
        "On branch main\nChanges to be committed:\n\trenamed:    pkg/gitsync/client.go -> client.go\n"
        "\tmodified:   src/app.go\n"
    )
    shown = {item.text for item in output_items(status, "Bash", command=True)}
    assert {"pkg/gitsync/client.go: renamed -> client.go", "src/app.go: modified"} <= shown


def test_a_failed_go_tests_message_is_its_failure_line_among_its_logs() -> None:
    # Nineteenth held-out round (entireio/cli): under "--- FAIL: TestRewindReset_ClearsSessionState" go test printed
    # the test's logs, "Expected no session state files after reset, got 1" among them; the line read was a log.
    printed = "\n".join(
        [
            *(f"ok  \tentire.io/cli/cmd/pkg{n}\t1.0{n}s" for n in range(8)),
            "--- FAIL: TestRewindReset_ClearsSessionState (0.51s)",
            "    hooks.go:155: Hook user-prompt-submit model_session_id=test-session-1",
            "    rewind_reset_test.go:103: Rewind reset output:",
            "    rewind_reset_test.go:111: Expected no session state files after reset, got 1",
            "--- FAIL: TestRewindReset_WithMultipleSessions (0.70s)",
            "    hooks.go:155: Hook user-prompt-submit model_session_id=test-session-2",
            "FAIL\tentire.io/cli/cmd/entire/cli/integration_test\t36.010s",
            *(f"ok  \tentire.io/cli/cmd/tool{n}\t1.0{n}s" for n in range(8)),
            "Exit code 1",
        ]
    )
    failed = failure_line(Message(role="tool", tool_call_id="c", content=printed))
    assert failed is not None
    assert failed.startswith(
        "--- FAIL: TestRewindReset_ClearsSessionState: Expected no session state files after reset, got 1"
    )
    assert "--- FAIL: TestRewindReset_WithMultipleSessions (0.70s)" in failed  # it printed no failure line: its name


_OUTPUT_BLOCK = re.compile(r"<(bash-stdout|bash-stderr)>(.*?)</\1>", re.DOTALL)
"""What an output block is, as a pattern: from its tag to the first closing tag of its kind."""


@given(
    st.lists(
        st.sampled_from(["<bash-stdout>", "</bash-stdout>", "<bash-stderr>", "</bash-stderr>", "a", "\n"]), max_size=14
    ).map("".join)
)
def test_output_blocks_are_read_as_the_pattern_says(text: str) -> None:
    # Hostile-input review 2: the pattern itself retried from every tag never closed ("<bash-stdout>" * k after a
    # "<bash-input>" turn: 15 s at 200 kB); the reading now finds each closing tag once.
    assert _outputs(text) == [body for _, body in _OUTPUT_BLOCK.findall(text)]


def test_a_slash_command_whose_prompt_follows_it_is_no_call_waiting_for_a_result() -> None:
    # Twenty-ninth held-out round (cipher-box): "/gsd:progress" expands into a prompt the agent works from; the summary
    # read "Command (user): /gsd:progress -> no result" and, under Open items, "... has no result yet".
    typed = Message(
        role="user",
        content="<command-message>gsd:progress</command-message>\n<command-name>/gsd:progress</command-name>",
        id="p",
        metadata={"isMeta": True},
    )
    prompt = Message(role="user", content="<objective>Check project progress.</objective>", metadata={"isMeta": True})
    messages = (
        Message(role="user", content="Where are we with the roadmap for the file versioning phase?"),
        typed,
        prompt,
        Message(role="assistant", content="Phase 13 is complete: 5 plans and 5 summaries."),
    )
    summary = ExtractiveSummarizer(counter_for_model("gpt-4o")).summarize(SummaryRequest(messages=messages))
    assert "- Command (user): /gsd:progress\n" in summary
    assert "no result" not in summary
