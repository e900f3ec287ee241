"""Every transcript format reads into the same Messages; every malformed file is a TranscriptError naming where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ctxbudget.errors import TranscriptError, UsageError
from ctxbudget.messages import Message
from ctxbudget.providers import message_to_openai
from ctxbudget.transcripts import load_transcript, parse_transcript

from .conftest import EXPECTED, long_session, openai_messages, write, write_jsonl

FORMATS = {
    "openai-list": "openai",
    "openai-object": "openai",
    "jsonl": "openai",
    "jsonl-langchain": "langchain",
    "langchain": "langchain",
    "langchain-dumpd": "langchain-dumpd",
    "llamaindex": "llamaindex",
}


def _shape(message: Message) -> tuple[object, ...]:
    calls = tuple((c.id, c.name, c.args) for c in message.tool_calls)
    return (message.role, message.text, calls, message.tool_call_id)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_reads_the_same_conversation(transcripts: dict[str, Path], name: str) -> None:
    transcript = load_transcript(transcripts[name])
    assert transcript.format == FORMATS[name]
    assert transcript.jsonl == name.startswith("jsonl")
    assert [_shape(m) for m in transcript.messages] == EXPECTED
    assert len({m.id for m in transcript.messages}) == len(EXPECTED)


def test_ids_are_deterministic_and_given_ids_are_kept(tmp_path: Path) -> None:
    rows = openai_messages()
    rows[1]["id"] = "msg-user-1"
    path = write(tmp_path / "t.json", rows)
    first, second = load_transcript(path), load_transcript(path)
    assert [m.id for m in first.messages] == [m.id for m in second.messages]
    assert first.messages[1].id == "msg-user-1"
    assert first.messages[0].id == "transcript-0"


def test_llamaindex_store_key_is_chosen_or_the_first(transcripts: dict[str, Path]) -> None:
    assert load_transcript(transcripts["llamaindex"]).key == "alice"
    bob = load_transcript(transcripts["llamaindex"], key="bob")
    assert bob.key == "bob"
    assert [m.text for m in bob.messages] == ["a different conversation"]
    with pytest.raises(TranscriptError, match="no key 'carol'") as info:
        load_transcript(transcripts["llamaindex"], key="carol")
    assert info.value.field == "store.key"


def test_llamaindex_openai_style_tool_calls_in_additional_kwargs(tmp_path: Path) -> None:
    call = {"id": "c9", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    store = {
        "store": {
            "k": [
                {"role": "user", "content": "hi", "additional_kwargs": {}},
                {"role": "assistant", "content": None, "additional_kwargs": {"tool_calls": [call]}},
                {"role": "tool", "content": "ok", "additional_kwargs": {"tool_call_id": "c9", "name": "lookup"}},
            ]
        }
    }
    messages = load_transcript(write(tmp_path / "s.json", store)).messages
    assert messages[1].tool_calls[0].name == "lookup"
    assert (messages[2].tool_call_id, messages[2].name) == ("c9", "lookup")


def test_openai_object_tools_are_read(tmp_path: Path) -> None:
    tool = {"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}
    transcript = load_transcript(write(tmp_path / "t.json", {"messages": openai_messages(), "tools": [tool]}))
    assert [t.name for t in transcript.tools] == ["weather"]


def test_a_single_message_object_is_one_line_of_jsonl(tmp_path: Path) -> None:
    transcript = load_transcript(write(tmp_path / "one.json", {"role": "user", "content": "hello"}))
    assert [m.text for m in transcript.messages] == ["hello"]


def test_a_compacted_file_reads_back(tmp_path: Path) -> None:
    message = Message(role="assistant", content="", tool_calls=[{"id": "x", "name": "f", "args": {"a": 1}}], id="m1")
    rows = [message.model_dump(mode="json"), {"role": "tool", "tool_call_id": "x", "content": "r", "id": "m2"}]
    transcript = parse_transcript(json.dumps({"messages": rows}))
    assert transcript.messages[0].tool_calls == message.tool_calls


def test_a_long_session_parses_in_order(tmp_path: Path) -> None:
    rows = long_session(10)
    transcript = load_transcript(write_jsonl(tmp_path / "long.jsonl", rows))
    assert len(transcript.messages) == len(rows)
    assert transcript.messages[-1].text.startswith("Module 9")


# -- malformed files -----------------------------------------------------------------------------------------------
def test_bad_json_in_jsonl_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    rows = [json.dumps(r) for r in openai_messages()]
    rows[2] = '{"role": "assistant", "content": '
    path.write_text("\n".join(rows), encoding="utf-8")
    with pytest.raises(TranscriptError, match=r"line 3: invalid JSON") as info:
        load_transcript(path)
    assert info.value.field == "json"
    assert isinstance(info.value, UsageError)


def test_bad_json_document_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[\n  {"role": "user", "content": "hi"},\n  {"role": "user" "content": "x"}\n]', encoding="utf-8")
    with pytest.raises(TranscriptError, match=r"line 3: invalid JSON at column 19"):
        load_transcript(path)


def test_missing_role_names_the_line_and_field(tmp_path: Path) -> None:
    rows = openai_messages()
    del rows[3]["role"]
    with pytest.raises(TranscriptError, match=r"line 4: field 'role': missing") as info:
        load_transcript(write_jsonl(tmp_path / "t.jsonl", rows))
    assert info.value.field == "role"
    with pytest.raises(TranscriptError, match=r"messages\[3\]: field 'role'"):
        load_transcript(write(tmp_path / "t.json", {"messages": rows}))


def test_invalid_utf8_names_the_byte_offset(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = json.dumps({"role": "user", "content": "caf"}).encode()
    path.write_bytes(good + b"\n" + b'{"role": "user", "content": "caf\xe9"}\n')
    with pytest.raises(TranscriptError, match=rf"invalid UTF-8 at byte offset {len(good) + 33} \(line 2\)") as info:
        load_transcript(path)
    assert info.value.field == "encoding"


@pytest.mark.parametrize(
    ("row", "where", "field"),
    [
        ({"role": "wizard", "content": "x"}, "line 1", "role"),
        ({"role": "tool", "content": "x"}, "line 1", "tool_call_id"),
        ({"role": "user", "content": 42}, "line 1", "content"),
        (
            {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f"}}]},
            "line 1",
            "tool_calls[0].id",
        ),
        ({"type": "human", "data": "oops"}, "line 1", "data"),
        ({"lc": 1, "type": "constructor", "id": ["x", "Robot"], "kwargs": {}}, "line 1", "id"),
        ({"role": "user", "blocks": [{"text": "no type"}]}, "line 1", "blocks[0].block_type"),
        ([1, 2], "line 1", "message"),
    ],
)
def test_malformed_messages_name_the_field(tmp_path: Path, row: object, where: str, field: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(TranscriptError) as info:
        load_transcript(path)
    assert info.value.field == field
    assert f"{where}: field {field!r}" in str(info.value)


def test_duplicate_ids_are_rejected(tmp_path: Path) -> None:
    rows = [{"role": "user", "content": "a", "id": "same"}, {"role": "user", "content": "b", "id": "same"}]
    with pytest.raises(TranscriptError, match="line 2: field 'id': id 'same' is already used by line 1"):
        load_transcript(write_jsonl(tmp_path / "t.jsonl", rows))


@pytest.mark.parametrize(("payload", "field"), [({"hello": 1}, "format"), ([], "messages"), ({"store": {}}, "store")])
def test_wrong_document_shapes(tmp_path: Path, payload: object, field: str) -> None:
    with pytest.raises(TranscriptError) as info:
        load_transcript(write(tmp_path / "t.json", payload))
    assert info.value.field == field


def test_a_missing_file_is_a_transcript_error(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="cannot read transcript") as info:
        load_transcript(tmp_path / "absent.json")
    assert info.value.field == "path"


def test_unrecognised_content_names_what_was_seen_and_the_formats(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError) as info:
        load_transcript(write(tmp_path / "t.json", {"hello": 1, "world": [2]}))
    assert "found a JSON object with keys ['hello', 'world']" in str(info.value)
    assert "claude-code" in str(info.value)
    assert "--format" in str(info.value)
    with pytest.raises(TranscriptError, match="found a JSON number") as number:
        load_transcript(write(tmp_path / "n.json", 42))
    assert number.value.field == "format"


def test_invalid_json_arguments_are_kept_as_written(tmp_path: Path) -> None:
    """A truncated reply's arguments are not JSON: read (args empty) and written back exactly as spelled."""
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{"}}
    rows = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "x"},
    ]
    messages = load_transcript(write(tmp_path / "t.json", rows)).messages
    assert messages[0].tool_calls[0].args == {}
    assert message_to_openai(messages[0]) == rows[0]


def test_a_mini_swe_agent_runs_closing_submission_is_not_read(tmp_path: Path) -> None:
    # mini-swe-agent 1.x ends a run with a user message holding the submitted diff (info.submission), after which the
    # run stopped: the model never saw it. Read as the newest message (held-out round 13, pylint: 3,561 tokens) it
    # was counted in the last request and kept whole by compaction, leaving the summary no room.
    diff = "diff --git a/pkg/utils.py b/pkg/utils.py\n--- a/pkg/utils.py\n+++ b/pkg/utils.py\n@@ -1 +1 @@\n-a\n+b\n"
    run = {
        "info": {"exit_status": "Submitted", "submission": diff},
        "trajectory_format": "mini-swe-agent-1",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Fix the bug in pkg/utils.py."},
            {"role": "assistant", "content": "Done.\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"},
            {"role": "user", "content": diff},
        ],
    }
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    transcript = load_transcript(path)
    assert transcript.format == "mini-swe-agent"
    assert [m.role for m in transcript.messages] == ["system", "user", "assistant"]
    run["info"] = {"exit_status": "Submitted"}  # no submission recorded: the message is read as any other
    path.write_text(json.dumps(run), encoding="utf-8")
    assert load_transcript(path).messages[-1].text == diff
