"""Bad input through main(): exit 2, one clean ``ctxbudget: error:`` line naming where, no traceback, no output.

Each file below used to escape as a raw exception (ValueError, RecursionError, UnicodeEncodeError) and exit 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.cli import EXIT_OK, EXIT_USAGE, main
from ctxbudget.errors import InvalidMessageError, TranscriptError
from ctxbudget.transcripts import parse_transcript
from ctxbudget.transcripts.reading import MAX_DEPTH

from .conftest import openai_messages, write

# (file name, exact bytes, what the error line must say). The JSON escapes are written as text, as a producer
# would: json.loads turns "\ud800" into a lone surrogate, which is not valid Unicode.
BAD_FILES = [
    pytest.param(
        "badtools.json",
        b'{"messages":[{"role":"user","content":"x"}],"tools":[{"function":{"name":"f","parameters":"abc"}}]}',
        "tools[0]: field 'function.parameters': expected a JSON Schema object, got str",
        id="tool-parameters-a-string",
    ),
    pytest.param(
        "badproperties.json",
        b'{"messages":[{"role":"user","content":"x"}],"tools":[{"function":{"name":"f","parameters":'
        b'{"type":"object","properties":"x"}}}]}',
        "tools[0]: not an OpenAI tool spec (tool schema (no id): parameters: 'properties' must be an object",
        id="tool-properties-a-string",  # hostile-input review 2: counting it raised AttributeError (exit 1)
    ),
    pytest.param(
        "deep.json",
        b"[" * 100_000 + b"]" * 100_000,
        "JSON is nested too deeply to read",
        id="deeply-nested-json",
    ),
    pytest.param(
        "deep.jsonl",
        b'{"role":"user","content":"a"}\n{"role":"user","content":"b","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
        "line 2: JSON is nested too deeply to read",
        id="deeply-nested-jsonl-line",
    ),
    pytest.param(
        "nested.json",
        b'[{"role":"user","content":"a","x":' + b"[" * 300 + b"]" * 300 + b"}]",
        "messages[0]: field 'x[0][0][0]",
        id="nested-past-the-limit",
    ),
    pytest.param(
        "sur.json",
        b'[{"role":"user","content":"hi \\ud800 there"},{"role":"assistant","content":"ok"}]',
        "messages[0]: field 'content': text holds a lone surrogate '\\ud800' at index 3",
        id="lone-surrogate-in-content",
    ),
    pytest.param(
        "sur.jsonl",
        b'{"role":"user","content":"a"}\n{"role":"assistant","content":"\\udc00"}\n',
        "line 2: field 'content': text holds a lone surrogate '\\udc00'",
        id="lone-surrogate-in-a-jsonl-line",
    ),
    pytest.param(
        "sur-block.json",
        b'[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"\\ud800"}}]}]',
        "messages[0]: field 'content[1].image_url.url': text holds a lone surrogate",
        id="lone-surrogate-in-block-data",
    ),
    pytest.param(
        "sur-args.json",
        json.dumps(
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"p": "\\udfff"}'}}
                    ],
                }
            ]
        ).encode(),
        "messages[0]: field 'tool_calls[0].function.arguments.p': text holds a lone surrogate",
        id="lone-surrogate-in-tool-arguments",
    ),
    pytest.param(
        "sur-key.json",
        b'[{"role":"user","content":"a","extra":{"\\ud800":1}}]',
        "messages[0]: field 'extra.\\ud800': key holds a lone surrogate",
        id="lone-surrogate-in-a-key",
    ),
    pytest.param(
        "sur-tool.json",
        b'{"messages":[{"role":"user","content":"x"}],"tools":[{"function":{"name":"f","description":"\\ud800"}}]}',
        "tools[0]: field 'function.description': text holds a lone surrogate",
        id="lone-surrogate-in-a-tool-spec",
    ),
]


def _assert_clean_exit_2(capsys: pytest.CaptureFixture[str], expected: str) -> None:
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert err.startswith("ctxbudget: error: ")
    assert len(err.splitlines()) == 1  # one line: no traceback
    assert "Traceback" not in err
    assert expected in err


@pytest.mark.parametrize(("name", "content", "expected"), BAD_FILES)
def test_inspect_json_rejects_bad_input_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, expected: str
) -> None:
    source = tmp_path / name
    source.write_bytes(content)
    assert main(["inspect", str(source), "--json"]) == EXIT_USAGE
    _assert_clean_exit_2(capsys, f"ctxbudget: error: {source}: ")  # names the file, then where in it
    assert main(["inspect", str(source), "--json"]) == EXIT_USAGE
    _assert_clean_exit_2(capsys, expected)


@pytest.mark.parametrize(("name", "content", "expected"), BAD_FILES)
def test_compact_rejects_bad_input_with_exit_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, expected: str
) -> None:
    source = tmp_path / name
    source.write_bytes(content)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    assert main(["compact", str(source), "-o", str(out_dir / "compacted.json")]) == EXIT_USAGE
    _assert_clean_exit_2(capsys, expected)
    assert list(out_dir.iterdir()) == []  # no output and no temporary file


def test_invalid_message_error_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Message rejected anywhere past the reader (InvalidMessageError) is bad input too: exit 2, no output."""
    source = write(tmp_path / "t.json", openai_messages())

    def reject(*args: Any, **kwargs: Any) -> Any:
        raise InvalidMessageError("message 'm1': content: contains an unpaired surrogate", field="content")

    monkeypatch.setattr("ctxbudget.cli._commands.run_transcript", reject)
    assert main(["inspect", str(source), "--json"]) == EXIT_USAGE
    _assert_clean_exit_2(capsys, "content: contains an unpaired surrogate")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    assert main(["compact", str(source), "-o", str(out_dir / "c.json")]) == EXIT_USAGE
    _assert_clean_exit_2(capsys, "content: contains an unpaired surrogate")
    assert list(out_dir.iterdir()) == []


def test_unencodable_output_is_exit_2_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should text that is not valid Unicode reach the output anyway, it is refused before anything is written."""
    source = write(tmp_path / "t.json", openai_messages())
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    previous = out_dir / "c.json"
    previous.write_text("previous", encoding="utf-8")

    def document(*args: Any, **kwargs: Any) -> dict[str, Any]:
        info = {"tiers": [], "before": {"used_tokens": 1}, "after": {"used_tokens": 1}}
        return {"messages": [], "tokens": 0, "compaction": info, "summary": "bad \ud800"}

    monkeypatch.setattr("ctxbudget.cli._commands.document", document)
    monkeypatch.setattr("ctxbudget.cli._commands.report", lambda *a, **k: {"note": "bad \udcff"})
    assert main(["compact", str(source), "-o", str(previous), "--force", "--output-format", "ctxbudget"]) == EXIT_USAGE
    _assert_clean_exit_2(capsys, "lone surrogate")
    assert [p.name for p in out_dir.iterdir()] == ["c.json"]
    assert previous.read_text(encoding="utf-8") == "previous"
    assert main(["inspect", str(source), "--json"]) == EXIT_USAGE
    _assert_clean_exit_2(capsys, "lone surrogate")


def test_paired_surrogate_escapes_are_valid_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The check rejects only lone surrogates: an escaped pair is one character outside the BMP, and reads fine."""
    source = tmp_path / "emoji.json"
    source.write_bytes(b'[{"role":"user","content":"smile \\ud83d\\ude00"},{"role":"assistant","content":"ok"}]')
    assert main(["inspect", str(source), "--json"]) == EXIT_OK
    report = json.loads(capsys.readouterr().out)
    assert report["largest"][0]["preview"] == "smile \U0001f600"


def test_nesting_limit_is_exact() -> None:
    """A message may nest MAX_DEPTH levels (itself included); one more is refused, naming the field."""

    def message(levels: int) -> str:  # the message object is level 1, then "x" holds levels - 1 nested lists
        inner = levels - 1
        return '[{"role":"user","content":"a","x":' + "[" * inner + "]" * inner + "}]"

    assert parse_transcript(message(MAX_DEPTH)).messages[0].text == "a"
    with pytest.raises(TranscriptError, match=rf"messages\[0\]: field 'x\[0\].*': nested more than {MAX_DEPTH}"):
        parse_transcript(message(MAX_DEPTH + 1))


def test_text_input_with_a_raw_lone_surrogate_is_refused() -> None:
    """parse_transcript(str) checks decoded text too, not only JSON escapes."""
    with pytest.raises(TranscriptError, match=r"messages\[1\]: field 'name': text holds a lone surrogate"):
        parse_transcript('[{"role":"user","content":"a"},{"role":"user","content":"b","name":"\udc80"}]')


def test_a_closed_pipe_is_not_an_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    transcript = tmp_path / "t.json"
    # Far more output than a pipe buffers, so the writer really meets the closed pipe.
    transcript.write_text(json.dumps([{"role": "user", "content": f"line {n} " + "word " * 40} for n in range(3000)]))
    cli = Path(sys.executable).parent / "ctxbudget"
    done = subprocess.run(
        f"'{cli}' inspect '{transcript}' --json --top 3000 | head -1; echo \"rc=${{PIPESTATUS[0]}}\"",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.splitlines() == ["{", "rc=0"]
    assert done.stderr == ""


def test_a_tool_name_holding_console_markup_is_printed_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Hostile-input review 2: the report's "Largest items" table printed tool names as Rich markup: "get[/]data"
    # raised MarkupError (exit 1, a traceback) and "x[red]y" was restyled.
    messages = [
        {"role": "user", "content": "fetch it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get[/]data", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "the data " * 400},
        {"role": "assistant", "content": "done"},
    ]
    source = write(tmp_path / "t.json", messages)
    assert main(["inspect", str(source)]) == EXIT_OK
    assert "get[/]data" in capsys.readouterr().out
