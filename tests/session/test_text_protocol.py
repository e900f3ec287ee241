"""Tool use written as text (mini-swe-agent's text format): the command in the reply, its result as a user turn.

Read from a public trajectory (pytest-dev__pytest-7432, mini-swe-agent 1.15): before, the summary filed ~110 lines of
tool output as "User facts", the harness's "Please try a different command that produces less output." as the
latest request, and had no Commands or Files section at all.
"""

from __future__ import annotations

from ctxbudget import Message, SummaryRequest
from ctxbudget.compaction._text_protocol import HARNESS_META, as_tool_use
from ctxbudget.compaction.summarize import ExtractiveSummarizer
from ctxbudget.providers import counter_for_model

COUNTER = counter_for_model("gpt-4o")

TASK = (
    "<pr_description>\nskipping: --runxfail breaks pytest.mark.skip location reporting\n</pr_description>\n"
    "<instructions>\nDO NOT MODIFY: Tests, configuration files (pyproject.toml, setup.cfg, etc.)\n"
    "Format your responses like this:\n<format_example>\nTHOUGHT: reasoning\n\n```bash\nyour_command_here\n```\n"
    "</format_example>\n</instructions>"
)
LISTING = "<returncode>0</returncode>\n<output>\nAUTHORS\nCITATION\nsetup.py\nsrc/\ntox.ini\n</output>"
TOO_LONG = (
    "<returncode>0</returncode>\n<warning>\nThe output of your last command was too long.\n"
    "Please try a different command that produces less output.\n</warning><output_head>\n...</output_head>"
)
FAILED = (
    "<returncode>1</returncode>\n<output>\nE   AssertionError: SKIPPED [1] src/_pytest/skipping.py:239\n"
    "=== 1 failed in 0.05s ===\n</output>"
)
REMINDER = (
    "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.\n\nPlease format your action "
    "in triple backticks as shown in <response_example>.\n\n<response_example>\nHere are some thoughts.\n\n"
    "```bash\n<action>\n```\n</response_example>"
)


def conversation() -> list[Message]:
    def reply(n: int, text: str) -> Message:
        return Message(role="assistant", id=f"a{n}", content=text)

    def user(n: int, text: str) -> Message:
        return Message(role="user", id=f"u{n}", content=text)

    return [
        user(0, TASK),
        reply(1, "THOUGHT: I will list the files first.\n\n```bash\nls -F\n```"),
        user(1, LISTING),
        reply(2, "THOUGHT: Read the whole hook.\n\n```bash\ncat src/_pytest/skipping.py\n```"),
        user(2, TOO_LONG),
        reply(3, "THOUGHT: Run the test.\n\n```bash\npytest -rs testing/test_skipping.py\n```"),
        user(3, FAILED),
        reply(4, "THOUGHT: Two at once.\n\n```bash\nls\n```\n\n```bash\npwd\n```"),
        user(4, REMINDER),
    ]


def sections(summary: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for block in summary.split("## ")[1:]:
        title, _, body = block.partition("\n")
        out[title.strip()] = body
    return out


def test_the_harness_result_turns_are_tool_results_and_the_commands_are_calls() -> None:
    summary = ExtractiveSummarizer(COUNTER).summarize(SummaryRequest(messages=tuple(conversation())))
    found = sections(summary)
    assert "AUTHORS" not in found["User facts and constraints"]  # a file listing is no fact the user stated
    assert "DO NOT MODIFY: Tests" in found["User facts and constraints"]  # the task's own rules still are
    assert "bash: ls -F -> ok" in found["Commands and results"]
    assert "pytest -rs testing/test_skipping.py -> " in found["Errors"]  # return code 1: it failed
    assert "AssertionError: SKIPPED [1] src/_pytest/skipping.py:239" in found["Errors"]
    assert "different command" not in summary  # the harness's warning is no request of the user's
    assert "Please format" not in summary  # nor its format reminder; but that it rejected the reply is an error
    assert "- the harness rejected the reply -> Please always provide EXACTLY ONE action" in found["Errors"]
    assert "EXACTLY ONE" not in found["User facts and constraints"]
    assert "pwd" not in summary  # the reply the harness rejected (two blocks) ran nothing
    # its output was shown cut, and the bullet says so: the agent never saw the whole file
    assert "cat src/_pytest/skipping.py -> ok: The output of your last command was too long." in summary


def test_reading_as_tool_use_pairs_each_result_with_the_reply_before_it() -> None:
    messages = conversation()
    read = as_tool_use(messages)
    assert [m.id for m in read] == [m.id for m in messages]  # the same messages, the same ids
    assert read[1].tool_calls[0].args == {"command": "ls -F"}
    assert read[1].text == "I will list the files first."  # the reasoning, without the format's "THOUGHT:" label
    assert read[2].role == "tool"
    assert read[2].tool_call_id == read[1].tool_calls[0].id
    assert read[2].text == "AUTHORS\nCITATION\nsetup.py\nsrc/\ntox.ini"
    assert read[4].text == "The output of your last command was too long.\n..."  # the warning's first line
    assert read[6].metadata["is_error"] is True
    assert read[6].text.endswith("Exit code 1")
    assert not read[7].tool_calls  # two blocks: the harness rejected it, nothing ran
    assert "```" not in read[7].text
    assert read[8].metadata.get(HARNESS_META) is True
    assert not read[0].metadata.get(HARNESS_META)
    assert messages[2].role == "user"  # the history itself is unchanged: it is what the model was sent


def test_a_conversation_without_result_turns_is_read_as_it_is() -> None:
    plain = [
        Message(role="user", content="Fix it.\n\n```bash\nmake test\n```"),
        Message(role="assistant", content="ok"),
    ]
    assert as_tool_use(plain) == plain


def test_a_bare_block_quoted_beside_the_bash_block_is_not_the_command() -> None:
    # Twenty-first held-out round (requests-5414, Gemini 3 Pro): a reply quoted a traceback in a bare fence before
    # its ```bash block; read as two commands, the reply ran nothing and its grep stood among the Findings.
    traceback = "```\n  File \"connection.py\", line 68\nLocationParseError: Failed to parse: '.example.com'\n```"
    command = "```bash\ngrep -n helper models.py\n```"
    said = f"THOUGHT: The traceback showed:\n{traceback}\n\nLook at the helper:\n\n{command}"
    read = as_tool_use(
        [
            Message(role="assistant", id="a1", content=said),
            Message(role="user", id="u1", content="<returncode>0</returncode>\n<output>\n351: def helper\n</output>"),
        ]
    )
    assert read[0].tool_calls[0].args == {"command": "grep -n helper models.py"}
    assert "LocationParseError" in read[0].text  # the quote stays in what the reply said
    swe_agent = Message(role="assistant", id="a2", content="DISCUSSION\nList them.\n\n```\nls -a\n```")
    answered = Message(role="user", id="u2", content="<returncode>0</returncode>\n<output>\nsetup.py\n</output>")
    assert as_tool_use([swe_agent, answered])[0].tool_calls[0].args == {"command": "ls -a"}  # a bare block alone runs
