"""A SWE-agent ``.traj`` with only ``trajectory`` is read step by step, and nothing a step holds vanishes.

Each step is the thought as the assistant's text with the action as a ``bash`` call, then the observation as its
result. A null or missing observation (a run stopped before the command returned) leaves that call unanswered,
as the file does: the thought and the command stay. A step whose action is not a string, or whose thought or
observation is neither a string nor null, is refused: exit 2, one line naming the step and the field, nothing
written. (Such steps used to become an empty assistant message, exit 0: thought and command lost.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.cli import EXIT_OK, EXIT_USAGE, main
from ctxbudget.errors import TranscriptError
from ctxbudget.transcripts import load_transcript

from .conftest import write


def _step(thought: Any, action: Any, observation: Any) -> dict[str, Any]:
    return {"thought": thought, "action": action, "observation": observation, "response": f"{thought}\n{action}"}


FIRST = _step("List the repo.", "ls -la", "README.md\nsetup.py")


def test_a_null_observation_keeps_the_thought_and_the_command(tmp_path: Path) -> None:
    steps = [FIRST, _step("Patch utils.py line 42.", "sed -i 's/a/b/' utils.py", None)]
    transcript = load_transcript(write(tmp_path / "run.traj", {"trajectory": steps}))
    assert [(m.role, m.id) for m in transcript.messages] == [
        ("assistant", "swe-001a"),
        ("tool", "swe-001t"),
        ("assistant", "swe-002a"),  # its call is unanswered: nothing came back
    ]
    last = transcript.messages[2]
    assert last.text == "Patch utils.py line 42."
    assert [(c.name, dict(c.args)) for c in last.tool_calls] == [("bash", {"command": "sed -i 's/a/b/' utils.py"})]


def test_a_missing_observation_is_read_as_null(tmp_path: Path) -> None:
    step = {"thought": "Run the tests.", "action": "pytest -q"}
    transcript = load_transcript(write(tmp_path / "run.traj", {"trajectory": [FIRST, step]}))
    assert transcript.messages[-1].text == "Run the tests."
    assert transcript.messages[-1].tool_calls[0].args == {"command": "pytest -q"}


def test_compact_writes_the_thought_and_the_command_of_a_step_with_a_null_observation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [FIRST, _step("SECRET THOUGHT: patch utils.py", "sed -i 's/a/b/' utils.py", None)]
    source = write(tmp_path / "run.traj", {"trajectory": steps})
    out = tmp_path / "out.json"
    assert main(["compact", str(source), "-o", str(out), "--force", "--format", "swe-agent"]) == EXIT_OK
    capsys.readouterr()
    written = out.read_text(encoding="utf-8") + (tmp_path / "out.ctxbudget.json").read_text(encoding="utf-8")
    assert "SECRET THOUGHT: patch utils.py" in written
    assert "sed -i 's/a/b/' utils.py" in written


BAD_STEPS = [
    pytest.param(_step("t", "ls", {"stdout": "a.py"}), "observation", "expected a string or null, got dict", id="dict"),
    pytest.param(_step("t", "ls", ["a.py"]), "observation", "expected a string or null, got list", id="list"),
    pytest.param(_step("t", "ls", 0), "observation", "expected a string or null, got int", id="int"),
    pytest.param(_step("t", None, "a.py"), "action", "action must be a string, got null", id="null-action"),
    pytest.param(_step("t", ["ls"], "a.py"), "action", "action must be a string, got list", id="list-action"),
    pytest.param({"thought": "t", "observation": "a.py"}, "action", "must be a string, got null", id="no-action"),
    pytest.param(_step(7, "ls", "a.py"), "thought", "expected a string or null, got int", id="int-thought"),
]


@pytest.mark.parametrize(("step", "field", "problem"), BAD_STEPS)
def test_a_step_of_the_wrong_shape_is_refused_naming_the_step_and_the_field(
    tmp_path: Path, step: dict[str, Any], field: str, problem: str
) -> None:
    source = write(tmp_path / "run.traj", {"trajectory": [FIRST, step]})
    with pytest.raises(TranscriptError, match=rf"trajectory\[1\]: field '{field}': .*{problem}") as info:
        load_transcript(source)
    assert info.value.field == field


@pytest.mark.parametrize(("step", "field", "problem"), BAD_STEPS)
def test_compact_exits_2_with_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], step: dict[str, Any], field: str, problem: str
) -> None:
    source = tmp_path / "run.traj"
    source.write_text(json.dumps({"trajectory": [FIRST, step]}), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    assert main(["compact", str(source), "-o", str(out / "c.json"), "--force", "--format", "swe-agent"]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("ctxbudget: error: ")
    assert f"trajectory[1]: field '{field}'" in lines[0]
    assert problem in lines[0]
    assert list(out.iterdir()) == []
