"""What harnesses write around tool results and into user turns is not the work's content (third held-out round).

Read from public sessions nobody here wrote: Claude Code's result for a call the user rejected ends "STOP what you
are doing and wait for the user", and the summary kept it as an open error; its background subagents report back as
``<task-notification>`` user turns, which became the user's task and facts; a background command's result named the
harness's output file as a file of the work; SWE-agent (EnIGMA) ends every output with its prompt and a
``///PROCESS-DONE:0:PROCESS-DONE///`` marker, and curl's progress meter was every request's outcome.
"""

from __future__ import annotations

from ctxbudget import Message, SummaryRequest, ToolCall
from ctxbudget.compaction._text_protocol import as_tool_use
from ctxbudget.compaction.harness import subagent_reports
from ctxbudget.compaction.summarize import ExtractiveSummarizer
from ctxbudget.providers import counter_for_model

COUNTER = counter_for_model("gpt-4o")
REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the "
    "new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."
)


def summary_of(*turns: Message) -> dict[str, str]:
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=turns))
    sections: dict[str, str] = {}
    for block in summary.split("## ")[1:]:
        title, _, body = block.partition("\n")
        sections[title.strip()] = body
    return sections


def call(call_id: str, command: str) -> ToolCall:
    return ToolCall(id=call_id, name="Bash", args={"command": command})


def test_a_call_the_user_rejected_never_ran_and_its_stop_instruction_is_not_kept() -> None:
    grep = call("a", 'grep -rn "too many ref-update" .')
    found = summary_of(
        Message(role="assistant", tool_calls=(grep,)),
        Message(role="tool", tool_call_id="a", content=REJECTED, metadata={"is_error": True}),
        Message(role="user", content="The backend is in ../entiredb, look there."),
    )
    assert 'grep -rn "too many ref-update" . -> not run (the user rejected it)' in found["Commands and results"]
    assert "Errors" not in found
    assert "STOP" not in "".join(found.values())


def test_an_edit_the_user_rejected_is_not_shown_as_the_files_new_state() -> None:
    # Eighth held-out round (entireio/skills): three Edits adding ``name:`` to SKILL.md files were rejected, and the
    # summary said "SKILL.md: read, edited -> now: name: search" as if the line were in the file.
    edit = ToolCall(
        id="e",
        name="Edit",
        args={
            "file_path": "/repo/skills/search/SKILL.md",
            "old_string": "---\nx: 1",
            "new_string": "---\nname: search",
        },
    )
    found = summary_of(
        Message(role="assistant", tool_calls=(edit,)),
        Message(role="tool", tool_call_id="e", content=REJECTED, metadata={"is_error": True}),
        Message(role="user", content="the name will cause issues with the other agent"),
    )
    files = found["Files and artifacts"]
    assert "/repo/skills/search/SKILL.md: edited -> not run (the user rejected it)" in files
    assert "now: name: search" not in "".join(found.values())


def test_what_the_user_said_when_rejecting_a_call_is_kept_as_their_own_words() -> None:
    # Twentieth held-out round (entireio/cli): the user rejected an Edit silencing usage for the whole command with
    # "there might be errors where it good to show usage error"; the summary kept the rejection, not their reason.
    edit = ToolCall(id="e", name="Edit", args={"file_path": "/repo/setup.go", "old_string": "a", "new_string": "b"})
    said = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, "
        "the new_string was NOT written to the file). To tell you how to proceed, the user said:\ndoing this in "
        "general is not really helpful either, there might be errors where it good to show usage error"
    )
    found = summary_of(
        Message(role="assistant", tool_calls=(edit,)),
        Message(role="tool", tool_call_id="e", content=said, metadata={"is_error": True}),
    )
    assert "there might be errors where it good to show usage error" in found["User facts and constraints"]
    assert "/repo/setup.go: edited -> not run (the user rejected it)" in found["Files and artifacts"]
    assert "To tell you how to proceed" not in "".join(found.values())


def test_a_think_tools_reasoning_is_a_note_not_a_command() -> None:
    # Eighth held-out round (tau-bench airline, Claude 3.7 Sonnet): the agent's ``think`` calls (one prose argument,
    # an empty result) were Commands, ``think {"thought":"Let me clarify ..."} -> ok``, beside the real updates.
    reasoning = "Let me clarify the fees: all allowed changes are free of charge regardless of travel insurance."
    think = ToolCall(id="t", name="think", args={"thought": reasoning})
    post = ToolCall(id="p", name="post_update", args={"text": "The booking moved to May 19 as the customer asked."})
    found = summary_of(
        Message(role="user", content="Move my flight HAT072 to May 19."),
        Message(role="assistant", tool_calls=(think, post)),
        Message(role="tool", tool_call_id="t", content=""),
        Message(role="tool", tool_call_id="p", content=""),
    )
    assert "Thought: Let me clarify the fees: all allowed changes are free of charge" in found["Notes"]
    assert "think" not in found["Commands and results"]
    assert "post_update" in found["Commands and results"]  # a message a tool posts is an action, not a thought


def test_a_subagents_report_is_the_agents_finding_not_the_users_words() -> None:
    notification = (
        "<task-notification>\n<task-id>ab6382cc508f7ce62</task-id>\n<status>completed</status>\n"
        '<summary>Agent "Simplification review" came to rest</summary>\n<result>The `first, rest` split in push.go '
        "is duplicated in `PushObjects`; extract `splitFirstBatch` to share it.</result>\n</task-notification>"
    )
    found = summary_of(Message(role="user", content=notification))
    assert "splitFirstBatch" in found["Findings"]
    assert "User facts and constraints" not in found
    assert "Latest request" not in found
    assert "task-notification" not in "".join(found.values())


def test_a_background_commands_result_says_so_and_names_no_file() -> None:
    started = (
        "Command running in background with ID: bv1vibmn9. Output is being written to: "
        "/private/tmp/claude-501/tasks/bv1vibmn9.output. You will be notified when it completes."
    )
    test = call("a", "go test ./... 2>&1")
    found = summary_of(
        Message(role="assistant", tool_calls=(test,)), Message(role="tool", tool_call_id="a", content=started)
    )
    assert "go test ./... 2>&1 -> ok: running in the background (ID bv1vibmn9)" in found["Commands and results"]
    assert "Files and artifacts" not in found


def test_swe_agents_prompt_end_marker_and_curls_meter_are_not_a_commands_outcome() -> None:
    output = (
        "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n"
        "                                 Dload  Upload   Total   Spent    Left  Speed\n"
        "100    23  100    23    0     0    150      0 --:--:-- --:--:-- --:--:--   151\n"
        "Hello World from Perl!///PROCESS-DONE:0:PROCESS-DONE///\n"
        "(Open file: n/a)\n(Current directory: /ctf)\nbash-$"
    )
    hello = call("a", "curl http://web.chal.csaw.io:8000/cgi-bin/hello.pl")
    found = summary_of(
        Message(role="assistant", tool_calls=(hello,)), Message(role="tool", tool_call_id="a", content=output)
    )
    assert found["Commands and results"].rstrip().endswith("hello.pl -> ok: Hello World from Perl!")


def test_an_answer_to_the_agents_question_tool_is_the_users_choice() -> None:
    ask = ToolCall(id="q", name="AskUserQuestion", args={"questions": [{"question": "Which direction?"}]})
    answered = (
        'Your questions have been answered: "Which direction should the fix take?"="Client batching (git-sync)". '
        "You can now continue with these answers in mind."
    )
    found = summary_of(
        Message(role="assistant", tool_calls=(ask,)), Message(role="tool", tool_call_id="q", content=answered)
    )
    assert "- User chose: Client batching (git-sync) (to: Which direction should the fix take?)" in found["Decisions"]
    assert "AskUserQuestion" not in "".join(found.values())


def test_only_a_question_tools_answer_is_read_as_choices() -> None:
    lookup = ToolCall(id="l", name="get_form", args={"id": "f1"})
    html = 'The form was answered: <input name="a"="b"> and "size"="12" in the markup'
    found = summary_of(
        Message(role="assistant", tool_calls=(lookup,)), Message(role="tool", tool_call_id="l", content=html)
    )
    assert "Decisions" not in found


def test_unclosed_and_repeated_harness_tags_are_read_to_where_they_stop() -> None:
    first = "<task-notification><result>one</result></task-notification>"
    two = f"{first} and <task-notification><status>x</status><result>two"
    assert subagent_reports(two) == ["one", "two"]  # the second never closed: its report runs to the end
    assert subagent_reports("<task-notification>" * 1000) == []
    reply = Message(role="assistant", id="a", content="```bash\ncat big.log\n```")
    shown = (
        "<returncode>0</returncode>\n<warning>too long</warning><output_head>\nhead\n</output_head><output_tail>\ntail"
    )
    result = as_tool_use([reply, Message(role="user", id="u", content=shown)])[1]
    # the shown head and tail, after the warning's first line (it says the output was cut); its advice is not output
    assert result.text == "too long\nhead\ntail"


RULE = "DO NOT MODIFY: Tests, configuration files (pyproject.toml, etc.)"


def test_the_agent_quoting_a_rule_the_user_gave_is_the_rule_said_once() -> None:
    # Tenth held-out round (mini-swe-agent, scikit-learn): the agent quoted the task's rule back ('"DO NOT MODIFY:
    # Tests, ..."') when it noticed it had edited a test, and the rule stood twice, once as a finding.
    quoted = f'Wait, the instructions say:\n"{RULE}"\n\n'
    found = summary_of(
        Message(role="user", content=f"Fix the index bug.\n- {RULE}"),
        Message(role="assistant", content=quoted + "So I should NOT have modified `sklearn/tests/test_output.py`."),
    )
    everything = "".join(found.values())
    assert everything.count(RULE) == 1
    assert RULE in found["User facts and constraints"]
