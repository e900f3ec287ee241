"""``ctxbudget compact`` on its own output, and ``-o`` pointing at the input (issue 14 item 5).

Compacting a ``ctxbudget.compacted/1`` document must carry its archive and summary forward, so every original of
the first transcript stays recoverable; writing over the input needs ``--in-place``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.cli import EXIT_OK, EXIT_USAGE, main
from ctxbudget.cli._analysis import COMPACTED_FORMAT, originals_from_compacted
from ctxbudget.messages import Message
from ctxbudget.transcripts import load_transcript

from .conftest import long_session, write_jsonl


def _chat(turns: int) -> list[dict[str, Any]]:
    """A long conversation without tool calls: only a summary can make it fit (clearing has nothing to clear)."""
    rows: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent."}]
    for turn in range(turns):
        rows.append({"role": "user", "content": f"Turn {turn}: notes on module {turn}. " + "Parser detail. " * 120})
        rows.append({"role": "assistant", "content": f"Answer {turn}: module {turn} handles case {turn}. " * 40})
    return rows


def _compact(source: Path, out: Path, *extra: str) -> dict[str, Any]:
    """Compact (``--force``: a document already compacted to the target gains too little to be compacted again)."""
    argv = ["compact", str(source), "-o", str(out), "--max-tokens", "20000", "--output-format", "ctxbudget"]
    code = main([*argv, "--force", *extra])
    assert code == EXIT_OK
    return json.loads(out.read_text(encoding="utf-8"))


def _by_id(messages: Sequence[Message]) -> dict[str, Message]:
    return {m.id: m for m in messages}


@pytest.mark.parametrize("rows", [_chat(128), long_session(64)], ids=["summarized", "cleared"])
def test_compacting_a_compacted_file_keeps_every_original_and_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: list[dict[str, Any]]
) -> None:
    source = write_jsonl(tmp_path / "long.jsonl", rows)
    transcript = load_transcript(source).messages
    first = _compact(source, tmp_path / "first.json")
    assert _by_id(originals_from_compacted(first)) == _by_id(transcript)
    second = _compact(tmp_path / "first.json", tmp_path / "second.json", "--instructions", "keep module numbers")
    assert second["format"] == COMPACTED_FORMAT
    first_handles = {entry["handle"] for entry in first["archive"]}
    assert first_handles <= {entry["handle"] for entry in second["archive"]}  # nothing archived is dropped
    assert _by_id(originals_from_compacted(second)) == _by_id(transcript)  # every original recoverable
    if first["summary"]:  # carried forward (and extended), not re-read as a user message and summarized as one
        assert second["summary"]
        assert second["goal"] == first["goal"] == transcript[1].text
        assert sum(1 for m in second["messages"] if m.get("metadata", {}).get("ctxbudget") == "summary") == 1
    assert not [m for m in originals_from_compacted(second) if m.text.startswith("[Context Summary]")]
    third = _compact(tmp_path / "second.json", tmp_path / "third.json")
    assert _by_id(originals_from_compacted(third)) == _by_id(transcript)
    assert third["tokens"] <= 20_000
    capsys.readouterr()


def test_the_first_compaction_of_the_summarized_case_does_summarize(tmp_path: Path) -> None:
    first = _compact(write_jsonl(tmp_path / "chat.jsonl", _chat(128)), tmp_path / "first.json")
    assert first["summary"]
    assert "summarize" in first["compaction"]["tiers"]


def test_output_equal_to_the_input_is_refused_without_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_jsonl(tmp_path / "long.jsonl", long_session(40))
    before = source.read_bytes()
    monkeypatch.chdir(tmp_path)
    for output in (str(source), "long.jsonl", "./sub/../long.jsonl"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        assert main(["compact", str(source), "-o", output, "--max-tokens", "20000"]) == EXIT_USAGE
        captured = capsys.readouterr()
        assert captured.err.startswith("ctxbudget: error: -o: ")
        assert "--in-place" in captured.err
        assert source.read_bytes() == before
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    assert main(["compact", str(link), "-o", str(source), "--max-tokens", "20000"]) == EXIT_USAGE
    assert source.read_bytes() == before
    capsys.readouterr()


def test_in_place_overwrites_the_input_and_keeps_every_original(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "long.jsonl", long_session(40))
    transcript = load_transcript(source).messages
    native = ["--max-tokens", "20000", "--in-place", "--output-format", "ctxbudget"]
    assert main(["compact", str(source), "-o", str(source), *native]) == EXIT_OK
    document = json.loads(source.read_text(encoding="utf-8"))
    assert document["format"] == COMPACTED_FORMAT
    assert main(["compact", str(source), "-o", str(source), "--max-tokens", "20000", "--in-place"]) == EXIT_OK
    again = json.loads(source.read_text(encoding="utf-8"))
    assert _by_id(originals_from_compacted(again)) == _by_id(transcript)
    capsys.readouterr()


def test_help_documents_in_place(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compact", "--help"]) == EXIT_OK
    assert "--in-place" in capsys.readouterr().out


def test_inspect_reads_a_compacted_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_jsonl(tmp_path / "long.jsonl", long_session(40))
    _compact(source, tmp_path / "first.json")
    capsys.readouterr()
    assert main(["inspect", str(tmp_path / "first.json"), "--json", "--max-tokens", "20000"]) == EXIT_OK
    report = json.loads(capsys.readouterr().out)
    assert report["transcript"]["format"] == "ctxbudget-compacted"
    assert report["compaction"]["error"] is None
