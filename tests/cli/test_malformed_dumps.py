"""Malformed LangChain / LlamaIndex dump shapes: exit 2 with one clean TranscriptError line naming the field.

Issue 14 item 16: ``[{"type": [], "data": {}}]`` used to escape as ``TypeError: unhashable type`` (exit 1, with a
traceback) because the shape detection looked a JSON value up in a set.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.cli import EXIT_USAGE, main
from ctxbudget.errors import TranscriptError
from ctxbudget.transcripts import parse_transcript

_LC = {"lc": 1, "type": "constructor"}
SHAPES = [
    pytest.param([{"type": [], "data": {}}], "messages[0]: field 'type'", id="type-a-list"),
    pytest.param([{"type": {}, "data": {}}], "messages[0]: field 'type'", id="type-an-object"),
    pytest.param([{"type": 7, "data": {}}], "messages[0]: field 'type'", id="type-a-number"),
    pytest.param([{"type": "robot", "data": {}}], "messages[0]: field 'type'", id="type-unknown"),
    pytest.param({"type": [1], "data": {}}, "line 1: field 'type'", id="single-object-type-a-list"),
    pytest.param({"store": {"k": [{"type": [], "data": {}}]}}, "store['k'][0]: field 'type'", id="chat-store"),
    pytest.param([{**_LC, "id": [[]], "kwargs": {}}], "messages[0]: field 'id'", id="dumpd-class-a-list"),
    pytest.param([{**_LC, "id": ["x", {}], "kwargs": {}}], "messages[0]: field 'id'", id="dumpd-class-an-object"),
    pytest.param([{**_LC, "id": ["HumanMessage"], "kwargs": []}], "field 'kwargs'", id="dumpd-kwargs-a-list"),
    pytest.param([{"role": "assistant", "blocks": [{"block_type": ""}]}], "blocks[0].block_type", id="empty-block"),
    pytest.param(
        {"format": "ctxbudget.compacted/1", "messages": [{"role": "user", "content": "x"}], "archive": [{}]},
        "archive[0]: field 'handle'",
        id="compacted-bad-archive",
    ),
    pytest.param(
        {"format": "ctxbudget.compacted/1", "messages": [{"role": "robot", "content": "x"}]},
        "messages[0]: field 'role'",
        id="compacted-bad-role",
    ),
    pytest.param(
        {"format": "ctxbudget.compacted/1", "messages": [{"role": "user", "content": "x"}], "summary": 3},
        "'summary' must be a string",
        id="compacted-bad-summary",
    ),
]


@pytest.mark.parametrize(("document", "expected"), SHAPES)
def test_parse_raises_a_transcript_error_naming_the_field(document: Any, expected: str) -> None:
    with pytest.raises(TranscriptError, match=r"field|must be") as info:
        parse_transcript(json.dumps(document), source="t.json")
    assert expected in str(info.value)


@pytest.mark.parametrize(("document", "expected"), SHAPES)
def test_inspect_exits_2_with_one_clean_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], document: Any, expected: str
) -> None:
    source = tmp_path / "t.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    assert main(["inspect", str(source), "--json"]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"ctxbudget: error: {source}: ")
    assert expected in lines[0]


def test_the_same_shapes_in_jsonl_name_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "t.jsonl"
    source.write_text('{"role": "user", "content": "a"}\n{"type": [], "data": {}}\n', encoding="utf-8")
    assert main(["inspect", str(source), "--json"]) == EXIT_USAGE
    assert "line 2: field 'type'" in capsys.readouterr().err
