"""Real Claude Code sessions, a subagent's file, an ATIF trajectory and a mini-swe-agent run, read as they were sent.

The files are public (``tests/data/transcripts``, sources in NOTICE.md). Each Claude Code file records the prompt
size of every request it made (``message.usage``); our count of the last request (the file's messages on the live
chain, plus what Claude Code adds to every request, measured from the file's first figure) must be within 5% of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ctxbudget import ContextSession, TiktokenCounter
from ctxbudget.cli import EXIT_OK, EXIT_USAGE, main
from ctxbudget.transcripts import load_transcript

DATA = Path(__file__).parents[1] / "data" / "transcripts"
SUBAGENT = DATA / "claude_code_subagent_spotter.jsonl"
# file -> extra flags: every file here records its own usage
CLAUDE = {
    "claude_code_coverage_test_fix.jsonl": (),
    "claude_code_entire_compacted.jsonl": (),
    "claude_code_entire_sonnet_after_compaction.jsonl": (),
    "claude_code_subagent_spotter.jsonl": ("--include-sidechains",),
    "atif_claude_code_coverage_test_fix.json": (),
}


def _report(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["inspect", str(path), "--json", "--no-progress", *extra]) == EXIT_OK
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


@pytest.mark.parametrize("name", sorted(CLAUDE))
def test_the_count_is_within_5_percent_of_what_the_file_reports(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    report = _report(capsys, DATA / name, *CLAUDE[name])
    usage = report["reported_usage"]
    assert usage is not None
    last = usage["last"]
    assert last["reported_tokens"] > usage["first"]["reported_tokens"]
    assert abs(last["our_tokens"] - last["reported_tokens"]) <= 0.05 * last["reported_tokens"]
    assert report["model"].startswith("claude-")  # counted with the model the file names, not gpt-4o
    assert report["counter"].startswith("estimate:anthropic")
    assert report["window"]["harness_tokens"] > 10_000  # Claude Code's system prompt and tools, not in the file


def test_a_compacted_session_is_read_from_its_continuation_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = load_transcript(DATA / "claude_code_entire_compacted.jsonl")
    assert transcript.messages[0].role == "user"
    assert transcript.messages[0].text.startswith("This session is being continued from a previous conversation")
    assert len(transcript.replaced) == 17  # the history before the boundary (3 harness lines in it): kept, not sent
    report = _report(capsys, DATA / "claude_code_entire_compacted.jsonl")
    assert report["transcript"]["replaced_messages"] == 17
    assert report["transcript"]["replaced_tokens"] > 0
    assert any("compacted this session 1 time" in note for note in report["transcript"]["notes"])
    # everything the file holds is kept: compact archives the history it does not send
    out = tmp_path / "session.json"
    argv = ["compact", str(DATA / "claude_code_entire_compacted.jsonl"), "-o", str(out), "--output-format", "ctxbudget"]
    assert main([*argv, "--force", "--no-progress"]) == EXIT_OK
    document = json.loads(out.read_text(encoding="utf-8"))
    archived = {entry["message"]["id"] for entry in document["archive"] if entry.get("message")}
    assert {m.id for m in transcript.replaced} <= archived


def test_earlier_turns_thinking_is_not_counted_for_a_model_that_strips_it(capsys: pytest.CaptureFixture[str]) -> None:
    """Claude Sonnet 4.5 has the thinking of turns before the last user message stripped from its requests."""
    report = _report(capsys, DATA / "claude_code_entire_sonnet_after_compaction.jsonl")
    stripped = report["window"]["stripped_thinking_tokens"]
    last = report["reported_usage"]["last"]
    assert stripped > 0
    assert abs(last["our_tokens"] - last["reported_tokens"]) <= 0.05 * last["reported_tokens"]
    assert last["our_tokens"] + stripped > 1.05 * last["reported_tokens"]  # counting it would be more than 5% off
    opus = _report(capsys, DATA / "claude_code_entire_sonnet_after_compaction.jsonl", "--model", "claude-opus-4-5")
    assert opus["window"]["stripped_thinking_tokens"] == 0  # Opus 4.5 keeps earlier thinking in its context
    assert opus["model_from"] == "--model"


def test_a_subagent_file_is_refused_with_the_way_to_read_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(SUBAGENT), "--json"]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1
    assert "every message is on a sidechain" in captured.err
    assert "--include-sidechains" in captured.err
    report = _report(capsys, SUBAGENT, "--include-sidechains")
    assert report["transcript"]["messages"] == 16
    assert report["tool_pairs"]["problems"] == 0  # results written between the calls' lines follow the whole message
    assert sum(tool["calls"] for tool in report["by_tool"].values()) == 12


def test_harness_lines_are_read_as_sent_and_marked_not_as_the_users_words() -> None:
    """Claude Code sends its isMeta lines (here two Stop hook feedbacks) to the model: they are read, marked isMeta.

    The reader keeps them (the request is the one Claude Code sent, the counts match its usage) and the summary does
    not take them for what the user said.
    """
    transcript = load_transcript(DATA / "claude_code_coverage_test_fix.jsonl")
    users = [m for m in transcript.messages if m.role == "user"]
    assert [m.text[:39] for m in users if not m.metadata.get("isMeta")] == ["Add a function called multiply_numbers("]
    meta = [m for m in users if m.metadata.get("isMeta")]
    assert [m.text[:19] for m in meta] == ["Stop hook feedback:"] * 2
    assert any("harness content" in note and "kept as sent" in note for note in transcript.notes)
    session = ContextSession(max_tokens=6_000, counter=TiktokenCounter())
    session.add(*transcript.messages)
    session.compact()
    assert session.summary is not None
    assert "Stop hook" not in session.summary


def test_the_model_comes_from_the_transcript_and_the_report_says_where(capsys: pytest.CaptureFixture[str]) -> None:
    claude = _report(capsys, DATA / "claude_code_coverage_test_fix.jsonl")
    assert claude["model"] == "claude-opus-4-5-20251101"
    assert claude["model_from"] == "message.model of line 38"
    assert claude["window"]["max_tokens"] == 200_000 - 64_000
    request = _report(capsys, DATA / "anthropic_pydantic_ai_parallel.json")
    assert (request["model"], request["model_from"]) == ("claude-haiku-4-5", "the request's model")
    unknown = _report(capsys, DATA / "mini_swe_agent_django_11099.traj.json")  # deepseek-chat: not in the registry
    assert unknown["model"] == "gpt-4o"
    assert "deepseek" in unknown["model_from"]
    assert "--model NAME" in unknown["model_from"]
    chosen = _report(capsys, DATA / "claude_code_coverage_test_fix.jsonl", "--model", "gpt-4.1")
    assert (chosen["model"], chosen["model_from"], chosen["counter"]) == ("gpt-4.1", "--model", "tiktoken:o200k_base")


def test_atif_reads_steps_with_their_metrics_and_writes_a_valid_trajectory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    atif = pytest.importorskip("atif")
    source = DATA / "atif_claude_code_coverage_test_fix.json"
    transcript = load_transcript(source)
    assert transcript.format == "atif"
    assert (transcript.model, transcript.model_from) == ("claude-opus-4-5-20251101", "agent.model_name")
    assert transcript.usage[-1].where == "steps[16].metrics.prompt_tokens"
    original = load_transcript(DATA / "claude_code_coverage_test_fix.jsonl")
    assert sum(len(m.tool_calls) for m in transcript.messages) == sum(len(m.tool_calls) for m in original.messages)
    out = tmp_path / "compacted.json"
    argv = ["compact", str(source), "-o", str(out), "--max-tokens", "8000", "--force", "--no-progress"]
    assert main(argv) == EXIT_OK
    body = json.loads(out.read_text(encoding="utf-8"))
    trajectory = atif.Trajectory.model_validate(body)  # what Harbor's tools read
    assert trajectory.agent.name == "claude-code"  # the input's agent kept
    assert [s.step_id for s in trajectory.steps] == list(range(1, len(trajectory.steps) + 1))
    again = load_transcript(out, format="atif")
    assert [m.text for m in again.messages if m.role == "tool"] == [
        m.text for m in load_transcript(out).messages if m.role == "tool"
    ]
    # another format written as ATIF: the steps hold the calls and their results
    argv = ["compact", str(DATA / "claude_code_coverage_test_fix.jsonl"), "-o", str(tmp_path / "cc.json")]
    assert main([*argv, "--output-format", "atif", "--force", "--no-progress"]) == EXIT_OK
    written = atif.Trajectory.model_validate(json.loads((tmp_path / "cc.json").read_text(encoding="utf-8")))
    assert written.agent.name == "ctxbudget"
    calls = [call.tool_call_id for step in written.steps for call in step.tool_calls or ()]
    results = [r.source_call_id for step in written.steps if step.observation for r in step.observation.results]
    assert calls
    assert set(results) <= set(calls)
