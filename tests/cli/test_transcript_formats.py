"""Each reader's rules on small hand-written files: Claude Code events, SWE-agent and tau-bench shapes, detection,
and the layouts compact writes back (a list stays a list, JSONL stays JSONL, a request keeps its fields)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.cli import EXIT_OK, EXIT_USAGE, main
from ctxbudget.cli._files import document_path
from ctxbudget.errors import TranscriptError
from ctxbudget.transcripts import load_transcript, parse_transcript
from ctxbudget.transcripts.formats._claude_harness import strip_harness_tags
from hypothesis import given
from hypothesis import strategies as st

from .conftest import long_session, openai_messages, write, write_jsonl


def _event(kind: str, uuid: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    base = {"type": kind, "uuid": uuid, "parentUuid": None, "sessionId": "s1", "isSidechain": False}
    return {**base, "message": message, **extra}


def _assistant(msg_id: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"id": msg_id, "type": "message", "role": "assistant", "model": "claude-x", "content": list(blocks)}


def _use(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": f"echo {call_id}"}}


def _result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": f"out {call_id}"}


def claude_session() -> list[dict[str, Any]]:
    return [
        {"type": "summary", "summary": "A session title", "leafUuid": "u9"},
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}},
        _event("user", "u1", {"role": "user", "content": "run both"}),
        _event("assistant", "a1", _assistant("msg_1", {"type": "thinking", "thinking": "two", "signature": "s"})),
        _event("assistant", "a2", _assistant("msg_1", _use("t1"))),
        _event("assistant", "a3", _assistant("msg_1", _use("t2"))),
        _event("user", "u2", {"role": "user", "content": [_result("t1"), _result("t2")]}),
        _event("user", "u2", {"role": "user", "content": [_result("t1"), _result("t2")]}),  # a repeated line
        _event("user", "side", {"role": "user", "content": "a subagent's prompt"}, isSidechain=True),
        _event("assistant", "err", _assistant("msg_e", {"type": "text", "text": "API Error"}), isApiErrorMessage=True),
        {"type": "system", "uuid": "sys", "sessionId": "s1", "content": "Conversation compacted", "level": "info"},
        _event("assistant", "a4", _assistant("msg_2", {"type": "text", "text": "both ran"})),
    ]


def test_records_run_together_on_one_line_are_each_read(tmp_path: Path) -> None:
    """A writer that lost a newline (entireio/cli checkpoint ``5a/c45bc32212/0``, line 115: an assistant record and a
    ``file-history-snapshot`` on one line) leaves two records on a line: each is read, as if on its own."""
    lines = [json.dumps(event) for event in claude_session()]
    (tmp_path / "apart.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    together = tmp_path / "together.jsonl"
    together.write_text("\n".join([*lines[:3], lines[3] + lines[4] + " " + lines[5], *lines[6:]]), encoding="utf-8")
    apart = load_transcript(tmp_path / "apart.jsonl")
    read = load_transcript(together)
    assert [(m.role, m.id, m.text) for m in read.messages] == [(m.role, m.id, m.text) for m in apart.messages]


@pytest.mark.parametrize("tail", ["5", '"text"', "[1]", "{"], ids=["number", "string", "list", "unclosed"])
def test_a_line_with_anything_but_records_after_its_record_is_still_invalid(tmp_path: Path, tail: str) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps(claude_session()[2]) + tail + "\n", encoding="utf-8")
    with pytest.raises(TranscriptError, match="line 1: invalid JSON"):
        load_transcript(source)


def test_claude_code_reads_the_main_thread_and_joins_one_api_message(tmp_path: Path) -> None:
    transcript = load_transcript(write_jsonl(tmp_path / "session.jsonl", claude_session()))
    assert transcript.format == "claude-code"
    assert [(m.role, m.id) for m in transcript.messages] == [
        ("user", "u1"),
        ("assistant", "a1"),
        ("tool", "u2"),
        ("tool", "u2#1"),
        ("assistant", "a4"),
    ]
    joined = transcript.messages[1]
    assert [c.id for c in joined.tool_calls] == ["t1", "t2"]
    assert joined.content[0].type == "thinking"  # type: ignore[union-attr]
    assert transcript.messages[3].text == "out t2"


def test_claude_code_errors_name_the_line_and_field(tmp_path: Path) -> None:
    rows = claude_session()
    rows[4] = _event("assistant", "a2", _assistant("msg_9", {"type": "tool_use", "name": "Bash", "input": {}}))
    with pytest.raises(TranscriptError, match=r"line 5: field 'message") as info:
        load_transcript(write_jsonl(tmp_path / "bad.jsonl", rows))
    assert "id" in str(info.value)
    rows[4] = {**_event("assistant", "a2", {}), "message": "not an object"}
    with pytest.raises(TranscriptError, match="line 5: field 'message': this assistant event needs a message object"):
        load_transcript(write_jsonl(tmp_path / "bad.jsonl", rows))


def test_a_session_with_no_conversation_is_refused(tmp_path: Path) -> None:
    rows = [{"type": "summary", "summary": "t", "leafUuid": "x"}, {"type": "queue-operation", "sessionId": "s"}]
    with pytest.raises(TranscriptError, match="no user or assistant messages") as info:
        load_transcript(write_jsonl(tmp_path / "empty.jsonl", rows))
    assert info.value.field == "messages"


# -- SWE-agent and tau-bench ------------------------------------------------------------------------------------
def test_swe_agent_function_calling_history_and_a_trajectory_only_file(tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    history = [
        {"role": "system", "content": "You are SWE-agent.", "agent": "main", "message_type": "system_prompt"},
        {"role": "user", "content": "Another task's demo", "is_demo": True, "message_type": "demonstration"},
        {"role": "user", "content": [{"type": "text", "text": "Fix the bug."}], "message_type": "observation"},
        {"role": "assistant", "content": "Look first.", "tool_calls": [call], "thought": "x", "action": "ls"},
        {"role": "tool", "content": [{"type": "text", "text": "a.py"}], "tool_call_ids": ["call_1"]},
    ]
    transcript = load_transcript(write(tmp_path / "fc.traj", {"history": history, "trajectory": [], "info": {}}))
    assert transcript.format == "swe-agent"
    assert [m.role for m in transcript.messages] == ["system", "user", "assistant", "tool"]
    assert "demo" not in " ".join(m.text for m in transcript.messages)
    assert transcript.messages[3].tool_call_id == "call_1"
    steps = [{"action": "ls\n", "observation": "a.py", "thought": "Look.", "response": "Look.\nls"}]
    only = load_transcript(write(tmp_path / "steps.traj", {"trajectory": steps}))
    assert [(m.role, m.id) for m in only.messages] == [("assistant", "swe-001a"), ("tool", "swe-001t")]
    assert only.messages[0].tool_calls[0].args == {"command": "ls"}


def test_tau_bench_key_picks_the_entry_and_bad_keys_are_named(tmp_path: Path) -> None:
    entry = {"task_id": 7, "reward": 1.0, "info": {}, "trial": 0, "traj": openai_messages()}
    path = write(tmp_path / "results.json", [entry, {**entry, "task_id": 8, "traj": openai_messages()[:2]}])
    assert len(load_transcript(path).messages) == 5
    second = load_transcript(path, key="1")
    assert (second.key, [m.id for m in second.messages]) == ("1", ["tau-000", "tau-001"])
    for key, problem in (("x", "an entry index, 0 to 1"), ("5", "the file holds 2 results")):
        with pytest.raises(TranscriptError, match=problem) as info:
            load_transcript(path, key=key)
        assert info.value.field == "key"


def test_reused_tau_bench_call_ids_are_made_unique() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "think", "arguments": "{}"}}
    traj = [
        {"role": "system", "content": "policy"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "name": "think", "content": ""},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "name": "think", "content": ""},
    ]
    messages = parse_transcript(json.dumps({"traj": traj})).messages
    assert [m.tool_calls[0].id for m in messages if m.tool_calls] == ["c", "c~2"]
    assert [m.tool_call_id for m in messages if m.role == "tool"] == ["c", "c~2"]


# -- detection ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            [
                {"role": "user", "content": "hi"},
                {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c", "output": "ok"},
            ],
            "responses",
        ),
        ({"model": "gpt-4o", "input": "hello"}, "responses"),
        (
            [{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}]}],
            "anthropic",
        ),
        ({"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]}, "anthropic"),
        ({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}, "openai"),
        ({"history": [{"role": "user", "content": "task"}]}, "swe-agent"),
        ({"task_id": 1, "traj": [{"role": "user", "content": "hi"}]}, "tau-bench"),
    ],
)
def test_formats_are_told_from_the_content(document: Any, expected: str) -> None:
    assert parse_transcript(json.dumps(document)).format == expected


# -- compact's output layouts -------------------------------------------------------------------------------------
def _compact(source: Path, out: Path, *extra: str) -> int:
    return main(["compact", str(source), "-o", str(out), "--max-tokens", "20000", "--no-progress", *extra])


def test_a_list_stays_a_list_and_jsonl_stays_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = write(tmp_path / "list.json", long_session(30))
    assert _compact(listed, tmp_path / "out.json") == EXIT_OK
    assert isinstance(json.loads((tmp_path / "out.json").read_text(encoding="utf-8")), list)
    lines = write_jsonl(tmp_path / "rows.jsonl", long_session(30))
    assert _compact(lines, tmp_path / "out.jsonl") == EXIT_OK
    rows = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(isinstance(json.loads(row), dict) for row in rows)
    assert load_transcript(tmp_path / "out.jsonl").format == "openai"
    capsys.readouterr()


def test_output_format_converts_and_unknown_names_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write(tmp_path / "chat.json", {"model": "gpt-4o", "messages": long_session(30)})
    out = tmp_path / "claude.json"
    assert _compact(source, out, "--output-format", "anthropic") == EXIT_OK
    body = json.loads(out.read_text(encoding="utf-8"))
    assert set(body) == {"system", "messages"}  # another format: the OpenAI request's model is not carried over
    assert load_transcript(out).format == "anthropic"
    assert json.loads(document_path(out).read_text(encoding="utf-8"))["format"] == "ctxbudget.compacted/1"
    capsys.readouterr()
    assert _compact(source, tmp_path / "x.json", "--output-format", "gemini") == EXIT_USAGE
    err = capsys.readouterr().err
    names = "openai, responses, anthropic, atif, langchain, llamaindex, ctxbudget"
    assert f"--output-format: unknown format 'gemini'; expected one of {names}" in err
    assert not (tmp_path / "x.json").exists()


def test_anthropic_jsonl_keeps_its_system_prompt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"role": "system", "content": "Be brief."}]
    for turn in range(30):
        use = {"type": "tool_use", "id": f"t{turn}", "name": "cat", "input": {"path": f"m{turn}.py"}}
        rows += [
            {"role": "user", "content": f"Turn {turn}: read m{turn}.py"},
            {"role": "assistant", "content": [use]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{turn}", "content": "x = 1\n" * 400}],
            },
        ]
    source = write_jsonl(tmp_path / "claude.jsonl", rows)
    assert load_transcript(source).format == "anthropic"
    assert _compact(source, tmp_path / "out.jsonl") == EXIT_OK
    first = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first == {"role": "system", "content": "Be brief."}
    assert load_transcript(tmp_path / "out.jsonl").messages[0].text == "Be brief."
    capsys.readouterr()


def test_the_side_document_may_not_replace_the_input_without_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write(tmp_path / "run.ctxbudget.json", long_session(30))
    assert _compact(source, tmp_path / "run.json") == EXIT_USAGE
    assert "its .ctxbudget.json document" in capsys.readouterr().err
    assert json.loads(source.read_text(encoding="utf-8")) == long_session(30)


def test_claude_code_skips_a_branch_the_session_rewound_from(tmp_path: Path) -> None:
    """An edited prompt forks the parentUuid thread: the abandoned branch is not what the model saw next."""

    def linked(kind: str, uuid: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
        return {**_event(kind, uuid, message), "parentUuid": parent}

    rows = [
        linked("user", "u1", None, {"role": "user", "content": "first question"}),
        linked("assistant", "a1", "u1", _assistant("m1", {"type": "text", "text": "first answer"})),
        linked("user", "u2", "a1", {"role": "user", "content": "a prompt the user then edited"}),
        linked("assistant", "a2", "u2", _assistant("m2", {"type": "text", "text": "left behind"}, _use("tx"))),
        linked("user", "r2", "a2", {"role": "user", "content": [_result("tx")]}),
        linked("user", "u3", "a1", {"role": "user", "content": "the edited prompt"}),
        linked("assistant", "a3", "u3", _assistant("m3", {"type": "text", "text": "the answer kept"})),
        {"type": "system", "subtype": "compact_boundary", "uuid": "b", "parentUuid": None, "logicalParentUuid": "a3"},
        linked("user", "u4", "b", {"role": "user", "content": "after the boundary"}),
    ]
    transcript = load_transcript(write_jsonl(tmp_path / "rewound.jsonl", rows))
    assert [m.id for m in transcript.messages] == ["u4"]  # what Claude Code sends: the chain from the boundary on
    replaced = [m.id for m in transcript.replaced]  # history before the boundary (the abandoned branch too): kept
    assert replaced[:2] == ["u1", "a1"]
    assert set(replaced) == {"u1", "a1", "u2", "a2", "r2", "u3", "a3"}


def test_responses_instructions_are_written_back_as_instructions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items: list[dict[str, Any]] = []
    for turn in range(30):
        call = {"type": "function_call", "call_id": f"c{turn}", "name": "cat", "arguments": '{"path":"m.py"}'}
        output = {"type": "function_call_output", "call_id": f"c{turn}", "output": "x = 1\n" * 400}
        items += [{"role": "user", "content": f"Turn {turn}: read m.py"}, call, output]
    body = {"model": "gpt-4o", "instructions": "Answer in French.", "input": items}
    source = write(tmp_path / "responses.json", body)
    read = load_transcript(source)
    assert (read.format, read.messages[0].role, read.messages[0].text) == ("responses", "system", "Answer in French.")
    assert _compact(source, tmp_path / "out.json") == EXIT_OK
    out = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert (out["model"], out["instructions"]) == ("gpt-4o", "Answer in French.")
    assert all(item.get("role") != "system" for item in out["input"])
    assert out["input"] != items  # compacted (old outputs cleared to markers)
    capsys.readouterr()


_TAGS = ("system-reminder", "command-name")
_BLOCKS = re.compile(
    "|".join(rf"<{t}>.*?</{t}>" for t in _TAGS) + "|" + "|".join(rf"</?{t}>" for t in _TAGS), re.DOTALL
)
"""What the harness text is, as a pattern: a block to its first closing tag, else a tag alone."""


@given(
    st.lists(
        st.sampled_from(
            ["<system-reminder>", "</system-reminder>", "<command-name>", "</command-name>", "a", " ", "\n", "<", "/"]
        ),
        max_size=14,
    ).map("".join)
)
def test_harness_tags_are_taken_out_as_the_pattern_says(text: str) -> None:
    # Hostile-input review 2: the pattern itself retried from every opener never closed ("<system-reminder>" * k:
    # 19 s at 200 kB); the reading now finds each closing tag once.
    assert strip_harness_tags(text) == _BLOCKS.sub("", text)


def test_a_user_turn_of_unclosed_harness_tags_is_read_whole(tmp_path: Path) -> None:
    text = "Fix it " + "<system-reminder>" * 20_000
    event = _event("user", "u1", {"role": "user", "content": text})
    reply = {**_event("assistant", "a1", _assistant("m1", {"type": "text", "text": "ok"})), "parentUuid": "u1"}
    transcript = load_transcript(write_jsonl(tmp_path / "s.jsonl", [event, reply]))
    assert transcript.messages[0].text == text  # what was sent, as it was sent
