"""Real public transcripts (``tests/data/transcripts``, sources in its NOTICE.md): one of each format read.

``inspect`` reads each (no network); the OpenAI and Anthropic ones convert both ways message by message exactly;
``compact`` writes the input's format (or the documented nearest one) and the OpenAI output is accepted by the fake
OpenAI server through the real ``openai`` SDK.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.cli import EXIT_OK, EXIT_USAGE, main
from ctxbudget.cli._files import document_path
from ctxbudget.errors import UsageError
from ctxbudget.messages.toolpairs import find_tool_pair_problems
from ctxbudget.providers import (
    message_from_openai,
    message_to_openai,
    messages_from_anthropic,
    messages_from_responses,
    messages_to_responses,
    to_anthropic_request,
    to_openai_request,
    to_responses_request,
    tool_from_anthropic,
    tool_from_openai,
)
from ctxbudget.providers.fake_servers import FakeAnthropicServer, FakeOpenAIServer
from ctxbudget.transcripts import load_transcript
from openai import OpenAI

DATA = Path(__file__).parents[1] / "data" / "transcripts"
# file -> (format, messages read, tool calls read, output format compact writes by default)
PUBLIC = {
    "openai_chat_pydantic_ai.json": ("openai", 7, 2, "openai"),
    "responses_pydantic_ai.json": ("responses", 4, 2, "responses"),
    "anthropic_pydantic_ai_parallel.json": ("anthropic", 7, 4, "anthropic"),
    "anthropic_pydantic_ai_thinking.json": ("anthropic", 3, 1, "anthropic"),
    "claude_code_coverage_test_fix.jsonl": ("claude-code", 30, 13, "anthropic"),  # two Stop hook lines (isMeta)
    "langchain_tau_bench_airline.json": ("langchain", 62, 27, "langchain"),
    "llamaindex_tau_bench_airline.json": ("llamaindex", 62, 27, "llamaindex"),
    "swe_agent_pydicom_1458.traj": ("swe-agent", 26, 12, "openai"),
    "tau_bench_gpt4o_airline.json": ("tau-bench", 12, 0, "openai"),
    "claude_code_entire_compacted.jsonl": ("claude-code", 12, 5, "anthropic"),
    "claude_code_entire_sonnet_after_compaction.jsonl": ("claude-code", 38, 14, "anthropic"),
    "mini_swe_agent_django_11099.traj.json": ("mini-swe-agent", 85, 42, "openai"),
    "atif_claude_code_coverage_test_fix.json": ("atif", 30, 13, "atif"),
}
UNANSWERED = {"mini_swe_agent_django_11099.traj.json": 1}  # its last call is answered by the run's exit, not a result
CHAT_KEYS = {"role", "content", "name", "tool_calls", "tool_call_id"}


def _json(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _inspect(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["inspect", str(path), "--json", "--no-progress", *extra]) == EXIT_OK
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_inspect_reads_each_public_transcript(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    fmt, count, calls, _ = PUBLIC[name]
    transcript = load_transcript(DATA / name)
    assert transcript.format in (fmt, "langchain-dumpd")
    assert len(transcript.messages) == count
    assert sum(len(m.tool_calls) for m in transcript.messages) == calls
    assert len(find_tool_pair_problems(transcript.messages)) == UNANSWERED.get(name, 0)
    report = _inspect(DATA / name, capsys)
    assert report["transcript"]["format"] == transcript.format
    assert sum(r["messages"] for r in report["by_role"].values()) == count
    assert report["tool_pairs"]["problems"] == UNANSWERED.get(name, 0)


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_each_format_is_told_from_the_content_and_can_be_forced(name: str, tmp_path: Path) -> None:
    """A neutral file name changes nothing; --format with the right name reads the same messages."""
    fmt = PUBLIC[name][0]
    renamed = tmp_path / "transcript.data"
    renamed.write_bytes((DATA / name).read_bytes())
    detected = load_transcript(renamed)
    forced = load_transcript(DATA / name, format={"llamaindex": "llamaindex"}.get(fmt, fmt))
    assert detected.format == forced.format == load_transcript(DATA / name).format
    assert [m.text for m in detected.messages] == [m.text for m in forced.messages]


def test_a_wrong_forced_format_and_an_unknown_name_are_typed_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError, match=r"--format: unknown format 'gemini'; expected one of openai, responses") as e:
        load_transcript(DATA / "openai_chat_pydantic_ai.json", format="gemini")
    assert e.value.field == "format"
    assert main(["inspect", str(DATA / "openai_chat_pydantic_ai.json"), "--format", "gemini"]) == EXIT_USAGE
    assert "claude-code, langchain, llamaindex, swe-agent, mini-swe-agent, tau-bench, atif, ctxbudget" in (
        capsys.readouterr().err
    )
    with pytest.raises(UsageError, match="'history'"):  # an OpenAI request read as a SWE-agent trajectory
        load_transcript(DATA / "openai_chat_pydantic_ai.json", format="swe-agent")


# -- exact round trips -------------------------------------------------------------------------------------------
def _tau_traj() -> list[dict[str, Any]]:
    return [m for entry in _json("tau_bench_gpt4o_airline.json") for m in entry["traj"]]


@pytest.mark.parametrize("source", ["pydantic-ai", "tau-bench"])
def test_openai_messages_round_trip_one_by_one(source: str) -> None:
    messages = _json("openai_chat_pydantic_ai.json")["messages"] if source == "pydantic-ai" else _tau_traj()
    assert any(m.get("tool_calls") for m in messages)
    for index, message in enumerate(messages):
        assert message_to_openai(message_from_openai(message)) == message, index


def test_openai_request_round_trips_through_the_transcript_reader() -> None:
    body = _json("openai_chat_pydantic_ai.json")
    transcript = load_transcript(DATA / "openai_chat_pydantic_ai.json")
    assert to_openai_request(transcript.messages, transcript.tools) == {
        "messages": body["messages"],
        "tools": body["tools"],
    }
    assert transcript.envelope == {k: v for k, v in body.items() if k not in ("messages", "tools")}
    assert [tool_from_openai(spec) for spec in body["tools"]] == list(transcript.tools)


@pytest.mark.parametrize("name", ["anthropic_pydantic_ai_parallel.json", "anthropic_pydantic_ai_thinking.json"])
def test_anthropic_messages_round_trip_one_by_one(name: str) -> None:
    body = _json(name)
    for index, message in enumerate(body["messages"]):
        assert to_anthropic_request(messages_from_anthropic([message])) == {"messages": [message]}, index
    system = body.get("system")
    expected = {**({"system": system} if system else {}), "messages": body["messages"], "tools": body["tools"]}
    tools = [tool_from_anthropic(spec) for spec in body["tools"]]
    assert to_anthropic_request(messages_from_anthropic(body["messages"], system=system), tools) == expected
    transcript = load_transcript(DATA / name)
    assert to_anthropic_request(transcript.messages, transcript.tools) == expected
    if "thinking" in name:
        assert transcript.messages[1].content[0].type == "thinking"  # type: ignore[union-attr]


def test_responses_items_round_trip() -> None:
    body = _json("responses_pydantic_ai.json")
    assert messages_to_responses(messages_from_responses(body["input"])) == body["input"]
    transcript = load_transcript(DATA / "responses_pydantic_ai.json")
    assert to_responses_request(transcript.messages, transcript.tools)["input"] == body["input"]


def test_claude_code_joins_the_lines_of_one_api_message() -> None:
    """Parallel calls written one line per block share one assistant message, so their results pair up."""
    messages = load_transcript(DATA / "claude_code_coverage_test_fix.jsonl").messages
    parallel = [m for m in messages if len(m.tool_calls) == 2]
    assert len(parallel) == 2
    assert all(m.id.count("-") == 4 for m in messages if "#" not in m.id)  # the events' uuids
    assert messages[0].role == "user"
    assert messages[0].text.startswith("Add a function called multiply_numbers")


# -- compact writes the input's format ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_compact_writes_the_default_format(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.json"
    argv = ["compact", str(DATA / name), "-o", str(out), "--max-tokens", "8000", "--no-progress", "--force"]
    assert main(argv) == EXIT_OK
    written = PUBLIC[name][3]
    assert f"({written}" in " ".join(capsys.readouterr().out.split())
    result = load_transcript(out)
    assert result.format == ("ctxbudget-compacted" if written == "ctxbudget" else written)
    if name not in UNANSWERED:
        assert find_tool_pair_problems(result.messages) == []
    assert document_path(out).exists() == (written != "ctxbudget")


def test_compacted_openai_transcript_is_plain_openai_and_keeps_null_content(tmp_path: Path) -> None:
    out = tmp_path / "tau.json"
    argv = ["compact", str(DATA / "tau_bench_gpt4o_airline.json"), "--key", "1", "-o", str(out)]
    assert main([*argv, "--max-tokens", "6000", "--no-progress"]) == EXIT_OK
    body = json.loads(out.read_text(encoding="utf-8"))
    assert set(body) == {"messages"}
    assert all(set(m) <= CHAT_KEYS for m in body["messages"])
    calls = [call for m in body["messages"] for call in m.get("tool_calls", [])]
    assert calls
    assert all(c["type"] == "function" and isinstance(c["function"]["arguments"], str) for c in calls)
    # content: null where the source had it, each call's arguments string as the source spelled it
    nulls = [m for m in body["messages"] if "content" in m and m["content"] is None]
    null_sources = {
        c["function"]["arguments"] for m in _tau_traj() if m.get("content", "") is None for c in m["tool_calls"]
    }
    assert nulls
    assert all(c["function"]["arguments"] in null_sources for m in nulls for c in m["tool_calls"])
    document = json.loads(document_path(out).read_text(encoding="utf-8"))
    assert document["compaction"]["archived"] > 0


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("openai_chat_pydantic_ai.json", ()),
        ("tau_bench_gpt4o_airline.json", ("--key", "1")),
        ("swe_agent_pydicom_1458.traj", ()),
    ],
)
def test_compact_output_is_accepted_by_the_openai_sdk(name: str, extra: tuple[str, ...], tmp_path: Path) -> None:
    out = tmp_path / "compacted.json"
    argv = ["compact", str(DATA / name), *extra, "-o", str(out), "--max-tokens", "6000", "--no-progress", "--force"]
    assert main(argv) == EXIT_OK
    body = json.loads(out.read_text(encoding="utf-8"))
    with FakeOpenAIServer(max_tokens=6000) as server:
        client = OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        request = {"model": "gpt-4o", **body}
        reply = client.chat.completions.create(**request)
    assert reply.choices[0].message.role == "assistant"
    assert server.stats.accepted == 1
    assert server.stats.orphaned == server.stats.over_window == server.stats.malformed == 0


def test_compacted_claude_code_session_is_accepted_by_the_anthropic_sdk(tmp_path: Path) -> None:
    from anthropic import Anthropic

    out = tmp_path / "session.json"
    argv = ["compact", str(DATA / "claude_code_coverage_test_fix.jsonl"), "-o", str(out), "--max-tokens", "4000"]
    assert main([*argv, "--model", "claude-haiku-4-5", "--no-progress", "--force"]) == EXIT_OK
    body = json.loads(out.read_text(encoding="utf-8"))
    with FakeAnthropicServer(max_tokens=8000) as server:
        client = Anthropic(base_url=server.url, api_key="test", max_retries=0)
        client.messages.create(model="claude-haiku-4-5", max_tokens=1024, **body)
    assert server.stats.accepted == 1
    assert server.stats.orphaned == server.stats.over_window == server.stats.malformed == 0


def test_compacted_responses_request_is_accepted_by_the_openai_sdk(tmp_path: Path) -> None:
    out = tmp_path / "responses.json"
    argv = ["compact", str(DATA / "responses_pydantic_ai.json"), "-o", str(out), "--max-tokens", "6000"]
    assert main([*argv, "--no-progress", "--force"]) == EXIT_OK
    body = json.loads(out.read_text(encoding="utf-8"))
    assert body["model"] == "gpt-4o"  # the request's own fields are kept
    assert body["input"] == _json("responses_pydantic_ai.json")["input"]  # nothing to compact: exactly the input
    with FakeOpenAIServer(max_tokens=6000) as server:
        client = OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        client.responses.create(**body)
    assert server.stats.accepted == 1
    assert server.stats.orphaned == server.stats.over_window == server.stats.malformed == 0
