"""A pasted terminal is read as at most :data:`MAX_PASTED_COMMANDS` commands; the rest stays the user's text.

Hostile-input review 6: a user turn of a megabyte of prompt lines (``~/src $ ls dirN`` / ``fileN``) became 36,000
``Bash (user)`` calls, each through every per-call reader: ``build_request`` took 12 s. A paste of a few commands
reads as it did.
"""

from __future__ import annotations

from ctxbudget import Message, SummaryRequest
from ctxbudget.compaction._terminal import MAX_PASTED_COMMANDS, USER_COMMAND_TOOL, read_terminal
from ctxbudget.compaction.summarize import ExtractiveSummarizer
from ctxbudget.providers import counter_for_model


def _paste(count: int) -> str:
    return "".join(f"~/src $ ls dir{n}\nfile{n}\n" for n in range(count))


def _commands(read: list[Message]) -> list[str]:
    return [str(m.tool_calls[0].args["command"]) for m in read if m.role == "assistant"]


def test_a_huge_paste_is_read_as_its_first_and_last_commands_and_the_rest_as_its_text() -> None:
    text = "the listing is wrong:\n" + _paste(20_000) + "```\nwhy?"
    read = read_terminal([Message(role="user", content=text, id="u")])
    commands = _commands(read)
    assert len(commands) == MAX_PASTED_COMMANDS
    first = [f"ls dir{n}" for n in range(16)]
    last = [f"ls dir{n}" for n in range(20_000 - (MAX_PASTED_COMMANDS - 16), 20_000)]
    assert commands == first + last
    assert len({m.id for m in read}) == len(read)
    (pasted,) = [m for m in read if m.id == "u.pasted"]
    assert read.index(pasted) == 1 + 2 * 16  # the prose, then the first calls with their results
    # Nothing is lost: the commands not read as calls are the pasted message's lines, as the user pasted them.
    middle = range(16, 20_000 - (MAX_PASTED_COMMANDS - 16))
    assert pasted.text == "".join(f"~/src $ ls dir{n}\nfile{n}\n" for n in middle).rstrip("\n")
    assert [m.text for m in read if m.role == "tool"][-1] == "file19999"
    assert (read[0].text, read[-1].id, read[-1].text) == ("the listing is wrong:", "u.after", "why?")


def test_a_huge_pastes_summary_names_at_most_the_bound_of_commands() -> None:
    summary = ExtractiveSummarizer(counter_for_model("gpt-4o")).summarize(
        SummaryRequest(messages=(Message(role="user", content=_paste(20_000), id="u"),))
    )
    assert 0 < summary.count(f"{USER_COMMAND_TOOL}: ") <= MAX_PASTED_COMMANDS


def test_a_paste_up_to_the_bound_is_read_whole_and_one_more_leaves_one_command_as_text() -> None:
    at = read_terminal([Message(role="user", content=_paste(MAX_PASTED_COMMANDS), id="u")])
    assert _commands(at) == [f"ls dir{n}" for n in range(MAX_PASTED_COMMANDS)]
    assert [m.role for m in at] == ["assistant", "tool"] * MAX_PASTED_COMMANDS
    past = read_terminal([Message(role="user", content=_paste(MAX_PASTED_COMMANDS + 1), id="u")])
    assert "ls dir16" not in _commands(past)
    assert len(_commands(past)) == MAX_PASTED_COMMANDS
    assert [m.text for m in past if m.id == "u.pasted"] == ["~/src $ ls dir16\nfile16"]


def test_a_small_paste_reads_as_it_did() -> None:
    text = (
        "it still fails. ~/app $ git status --short\n M src/app.py\n~/app $ pytest -q\n2 failed, 40 passed\n"
        "~/app $ ls build\n~/app $ cat setup.cfg\n[metadata]\nname = app\n```\nwhat now?"
    )
    read = read_terminal([Message(role="user", content=text, id="u", metadata={"k": 1})])
    assert [(m.role, m.id, m.text) for m in read] == [
        ("user", "u", "it still fails."),
        ("assistant", "u.paste0", ""),
        ("tool", "u.paste0.out", " M src/app.py"),
        ("assistant", "u.paste1", ""),
        ("tool", "u.paste1.out", "2 failed, 40 passed"),
        ("assistant", "u.paste2", ""),
        ("tool", "u.paste2.out", ""),
        ("assistant", "u.paste3", ""),
        ("tool", "u.paste3.out", "[metadata]\nname = app"),
        ("user", "u.after", "what now?"),
    ]
    assert _commands(read) == ["git status --short", "pytest -q", "ls build", "cat setup.cfg"]
    assert all(m.metadata == {"k": 1} for m in read if m.role != "tool")
