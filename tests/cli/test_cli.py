"""The ctxbudget command: inspect, compact and demo, in-process through main(argv) and once as a real process."""

from __future__ import annotations

import builtins
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.cli import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, main
from ctxbudget.cli._analysis import COMPACTED_FORMAT, originals_from_compacted
from ctxbudget.cli._files import document_path
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import UsageError
from ctxbudget.transcripts import load_transcript

from .conftest import long_session, openai_messages, write, write_jsonl

CTXBUDGET = Path(sys.executable).with_name("ctxbudget")


def _inspect_json(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    assert main(["inspect", str(path), "--json", *extra]) == EXIT_OK
    return json.loads(capsys.readouterr().out)


def test_inspect_json_structure(transcripts: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    report = _inspect_json(transcripts["langchain"], capsys)
    assert set(report) == {
        "transcript",
        "model",
        "model_from",
        "counter",
        "reported_usage",
        "window",
        "by_role",
        "by_tool",
        "largest",
        "tool_pairs",
        "late_system_messages",
        "compaction",
    }
    assert report["transcript"]["format"] == "langchain"
    assert report["transcript"]["messages"] == 5
    assert report["window"]["max_tokens"] == 128_000 - 16_384  # gpt-4o's input budget
    assert report["counter"] == "tiktoken:o200k_base"
    assert {role: v["messages"] for role, v in report["by_role"].items()} == {
        "system": 1,
        "user": 1,
        "assistant": 2,
        "tool": 1,
    }
    assert sum(v["tokens"] for v in report["by_role"].values()) + 3 == report["window"]["used_tokens"]
    tool_tokens = report["by_role"]["tool"]["tokens"]
    assert report["by_tool"] == {"weather": {"calls": 1, "results": 1, "result_tokens": tool_tokens}}
    assert len(report["largest"]) == 5
    assert report["largest"][0]["tokens"] >= report["largest"][-1]["tokens"]
    assert report["tool_pairs"] == {"problems": 0, "details": []}
    assert report["compaction"]["would_auto_trigger"] is False
    assert report["compaction"]["error"] is None


def test_inspect_reports_orphans_and_a_trial_compaction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [*long_session(40), {"role": "tool", "tool_call_id": "ghost", "content": "lost result"}]
    report = _inspect_json(write(tmp_path / "long.json", rows), capsys, "--max-tokens", "40000", "--top", "3")
    window = report["window"]
    assert window["max_tokens"] == 40_000
    assert window["over_window"] is True
    assert report["tool_pairs"]["problems"] == 1
    assert "ghost" in report["tool_pairs"]["details"][0]
    assert [item["tool"] for item in report["largest"]] == ["read_file"] * 3
    trial = report["compaction"]
    assert trial["would_auto_trigger"] is True
    assert trial["after"]["used_tokens"] < trial["before"]["used_tokens"] <= window["used_tokens"]
    assert trial["after"]["used_tokens"] <= 0.6 * 40_000
    assert trial["archived"] > 0
    assert trial["tiers"][0] == "clear"


def test_inspect_renders_tables(transcripts: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(transcripts["llamaindex"]), "--model", "gpt-4o-mini"]) == EXIT_OK
    out = capsys.readouterr().out
    for expected in ("By role", "By tool", "weather", "Largest items", "Orphaned tool pairs: 0", "auto-compaction"):
        assert expected in out


def test_compact_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [*long_session(40), {"role": "tool", "tool_call_id": "ghost", "content": "lost result"}]
    source = write_jsonl(tmp_path / "long.jsonl", rows)
    out = tmp_path / "compacted.json"
    code = main(["compact", str(source), "-o", str(out), "--max-tokens", "40000", "--instructions", "keep file names"])
    assert code == EXIT_OK, capsys.readouterr().err
    # OpenAI JSONL in, OpenAI JSONL out (plain Chat messages); the full document beside it
    sent = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert all(set(m) <= {"role", "content", "name", "tool_calls", "tool_call_id"} for m in sent)
    document = json.loads(document_path(out).read_text(encoding="utf-8"))
    assert [m["role"] for m in sent] == [m["role"] for m in document["messages"]]
    assert document["format"] == COMPACTED_FORMAT
    assert document["tokens"] <= 0.6 * 40_000 < document["compaction"]["before"]["used_tokens"]
    # Clearing old tool outputs reached the target; the manual compaction then summarizes the older half, whose
    # ledger (built from the originals) costs less than the cleared markers it replaces.
    assert document["compaction"]["tiers"] == ["clear", "summarize"]
    assert document["messages"][0]["role"] == "system"
    assert any(e["reason"] == "dropped" for e in document["archive"])  # the orphaned result: archived, not sent
    # Exactly the transcript's messages: each one, equal to its original, and nothing the session generated
    # (the summary message in the document is not an original).
    transcript = load_transcript(source).messages
    originals = originals_from_compacted(document)
    assert len(originals) == len(transcript)
    assert {m.id: m for m in originals} == {m.id: m for m in transcript}
    has_summary = any(m.get("metadata", {}).get("ctxbudget") == "summary" for m in document["messages"])
    assert has_summary == (document["summary"] is not None)
    compacted = load_transcript(out)  # the output is itself a readable transcript
    assert [m.role for m in compacted.messages][:2] == ["system", "user"]
    assert compacted.format == "openai"
    assert compacted.jsonl
    assert "Wrote" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "suffix", "expected"),
    [
        (b'{"role": "user", "content": "a"}\n{"role": "user", "content": \n', ".jsonl", "line 2: invalid JSON"),
        (b'{"role": "user", "content": "a"}\n{"content": "b"}\n', ".jsonl", "line 2: field 'role': missing"),
        (b'[{"role": "user", "content": "a\xff"}]', ".json", "invalid UTF-8 at byte offset 31"),
    ],
)
def test_malformed_transcripts_exit_2_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, suffix: str, expected: str
) -> None:
    source = tmp_path / f"bad{suffix}"
    source.write_bytes(content)
    out = tmp_path / "out" / "compacted.json"
    out.parent.mkdir()
    assert main(["compact", str(source), "-o", str(out)]) == EXIT_USAGE
    assert expected in capsys.readouterr().err
    assert list(out.parent.iterdir()) == []
    assert main(["inspect", str(source), "--json"]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert expected in captured.err
    assert captured.out == ""


def test_compact_failure_leaves_an_existing_output_untouched(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    source = write(tmp_path / "t.json", openai_messages())
    out = tmp_path / "compacted.json"
    out.write_text("previous", encoding="utf-8")
    code = main(["compact", str(source), "-o", str(out), "--model", "no-such-model"])
    assert code == EXIT_USAGE
    assert "no-such-model" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compacted.json", "t.json"]


def test_a_failed_write_removes_its_temporary_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write(tmp_path / "t.json", openai_messages())

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("ctxbudget.cli._files.os.replace", broken_replace)
    assert main(["compact", str(source), "-o", str(tmp_path / "out.json"), "--force"]) == EXIT_FAILURE
    assert "No space left on device" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_compact_into_a_missing_directory_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write(tmp_path / "t.json", openai_messages())
    assert main(["compact", str(source), "-o", str(tmp_path / "nowhere" / "out.json")]) == EXIT_USAGE
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("output", ["", ".", "/"])
def test_compact_into_a_path_with_no_file_name_is_a_usage_error(
    output: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Hostile review 5: "-o ''", "-o ." and "-o /" exited 1 with a ValueError traceback (no name for the document).
    monkeypatch.chdir(tmp_path)
    source = write(tmp_path / "t.json", openai_messages())
    assert main(["compact", str(source), "-o", output, "--force"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "is a directory, not a file to write" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


@pytest.mark.parametrize(
    "argv", [[], ["inspect"], ["compact", "t.json"], ["demo", "--turns", "0"], ["demo", "--turns", "x"], ["nope"]]
)
def test_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == EXIT_USAGE
    assert "usage: ctxbudget" in capsys.readouterr().err


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "0  success" in out
    assert "1  runtime failure" in out
    assert "2  usage error or bad input" in out


def test_demo_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--turns", "30", "--quiet"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "turn  1" not in out
    assert "ctxbudget demo summary" in out
    assert "(all)" in out
    assert "compactions" in out


def test_demo_verbose_prints_every_turn_and_each_compaction(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--turns", "16", "--max-tokens", "20000", "--verbose"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "Each turn line: the window used after the turn" in out  # the per-turn columns are explained first
    assert sum(line.startswith("turn ") for line in out.splitlines()) == 16
    assert "compaction (auto)" in out
    assert "tool output bounded" in out


def test_missing_rich_names_the_install_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_rich(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "rich" or name.startswith("rich."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_rich)
    source = write(tmp_path / "t.json", openai_messages())
    assert main(["inspect", str(source)]) == EXIT_FAILURE
    assert 'pip install "ctxbudget[cli]"' in capsys.readouterr().err
    assert main(["inspect", str(source), "--json"]) == EXIT_OK  # --json needs no rich


def test_console_script_runs_as_a_process(tmp_path: Path) -> None:
    source = write(tmp_path / "t.json", openai_messages())
    done = subprocess.run(
        [str(CTXBUDGET), "inspect", str(source), "--json"], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout)["transcript"]["messages"] == 5
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "a"}\n{"content": "b"}\n', encoding="utf-8")
    argv = [str(CTXBUDGET), "inspect", str(bad)]
    failed = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    assert failed.returncode == EXIT_USAGE
    assert "line 2: field 'role'" in failed.stderr


def _session_with_big_outputs(tmp_path: Path) -> Path:
    """A long session with two tool outputs over the per-output limit (bounded on arrival) and one orphaned result."""
    rows = long_session(40)
    for turn, at in ((90, 9), (91, 30)):
        call = f"big_{turn}"
        rows[at * 4 + 1 : at * 4 + 1] = [
            {"role": "user", "content": f"Run the whole test suite ({turn})."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call, "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": call, "content": "".join(f"test_{i} PASSED\n" for i in range(4000))},
            {"role": "assistant", "content": "All tests pass."},
        ]
    rows.append({"role": "tool", "tool_call_id": "ghost", "content": "lost result"})
    return write_jsonl(tmp_path / "long.jsonl", rows)


def test_inspect_and_compact_report_the_same_archived_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One definition: distinct transcript messages whose original is in the archive after the compaction."""
    source = _session_with_big_outputs(tmp_path)
    trial = _inspect_json(source, capsys, "--max-tokens", "40000")["compaction"]
    out = tmp_path / "compacted.json"
    assert main(["compact", str(source), "-o", str(out), "--max-tokens", "40000"]) == EXIT_OK
    printed = " ".join(capsys.readouterr().out.split())
    document = json.loads(document_path(out).read_text(encoding="utf-8"))
    distinct = {entry["message"]["id"] for entry in document["archive"] if entry.get("message")}
    assert trial["bounded_on_arrival"] == document["compaction"]["bounded_on_arrival"] == 2
    assert trial["archived"] == document["compaction"]["archived"] == len(distinct) > 2
    assert any(entry["reason"] == "dropped" for entry in document["archive"])  # the orphan counts in both
    assert f"{len(distinct):,} archived originals (of them 2 oversized tool outputs bounded on arrival)" in printed
    assert main(["inspect", str(source), "--max-tokens", "40000"]) == EXIT_OK
    assert f"{len(distinct):,} archived originals (of them 2" in " ".join(capsys.readouterr().out.split())


def test_target_and_keep_recent_set_the_compaction_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write(tmp_path / "long.json", long_session(40))
    default = _inspect_json(source, capsys, "--max-tokens", "40000")["compaction"]
    lower = _inspect_json(source, capsys, "--max-tokens", "40000", "--target", "0.3")["compaction"]
    assert default["after"]["used_percentage"] <= 60.0
    assert lower["after"]["used_tokens"] < default["after"]["used_tokens"]
    assert lower["after"]["used_percentage"] <= 31.0  # compaction aims at the target
    policies: list[CompactionPolicy | None] = []

    def spy(stream: Any, settings: Any, *args: Any, **kwargs: Any) -> Any:
        policies.append(settings.policy)
        raise UsageError("spied")

    monkeypatch.setattr("ctxbudget.cli._commands.run_transcript", spy)
    for extra in ([], ["--target", "0.25", "--keep-recent", "9"], ["--keep-recent", "3"]):
        assert main(["inspect", str(source), "--json", *extra]) == EXIT_USAGE
    assert policies == [
        None,
        CompactionPolicy(target=0.25, keep_recent_messages=9),
        CompactionPolicy(keep_recent_messages=3),
    ]


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--target", "abc", "--target: expected a fraction such as 0.5, got 'abc'"),
        ("--target", "0", "--target: must be a fraction in (0, 1], got 0.0"),
        ("--target", "0.9", "--target: must be <= threshold (0.8), got 0.9"),
        ("--target", "nan", "--target: must be a fraction in (0, 1], got nan"),
        ("--keep-recent", "0", "--keep-recent: must be >= 1, got 0"),
        ("--keep-recent", "2.5", "--keep-recent: expected a whole number of messages, got '2.5'"),
    ],
)
def test_bad_policy_flags_exit_2_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, expected: str
) -> None:
    source = write(tmp_path / "t.json", openai_messages())
    for argv in (["inspect", str(source), "--json"], ["compact", str(source), "-o", str(tmp_path / "o.json")]):
        assert main([*argv, flag, value]) == EXIT_USAGE
        captured = capsys.readouterr()
        assert captured.err == f"ctxbudget: error: {expected}\n"
        assert captured.out == ""
    assert not (tmp_path / "o.json").exists()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    import ctxbudget

    assert main(["--version"]) == EXIT_OK
    assert capsys.readouterr().out == f"ctxbudget {ctxbudget.__version__}\n"
    assert ctxbudget.__version__ == version("ctxbudget")


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write(tmp_path / "long.json", long_session(10))
    assert main(["inspect", str(source), "--json"]) == EXIT_OK
    assert capsys.readouterr().err == ""
    assert main(["compact", str(source), "-o", str(tmp_path / "c.json")]) == EXIT_OK
    assert capsys.readouterr().err == ""


def test_forced_progress_goes_to_stderr_with_counts_and_never_into_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write(tmp_path / "long.json", long_session(40))  # 161 messages: a system prompt and 160 more
    argv = ["inspect", str(source), "--json", "--progress", "--max-tokens", "40000", "--target", "0.3"]
    assert main(argv) == EXIT_OK
    captured = capsys.readouterr()
    report = json.loads(captured.out)  # stdout is the JSON alone
    assert "clear" in report["compaction"]["tiers"]
    for step in ("reading", "counting", "clearing"):
        assert step in captured.err
    assert "161/161 messages" in captured.err  # counted as they streamed in
    assert " MB" in captured.err  # the bytes read
    cleared = re.findall(r"(\d+)/(\d+) tool outputs", captured.err)
    assert cleared
    assert cleared[-1][0] == cleared[-1][1]  # the final compaction's bar closes at the number cleared
    assert main(["compact", str(source), "-o", str(tmp_path / "c.json"), "--progress", "--force"]) == EXIT_OK
    captured = capsys.readouterr()
    assert "161/161 messages" in captured.err
    assert "clearing" not in captured.out
    assert main(["inspect", str(source), "--json", "--no-progress"]) == EXIT_OK
    assert capsys.readouterr().err == ""
