"""Bad input exits 2 with one line and writes nothing; outputs are all or nothing, follow the umask and links; compact
does nothing when it would not pay; a provider-format output is read back through the full document beside it.

Each case in issue 25's list: an endless stream, a 5,000-digit integer, arguments nested 50,000 deep, a document
that cannot be written, ``--in-place`` through a link, the mode of what is written, ``--json`` past 100%, tau-bench
without ``--key``, overflow errors in the CLI's own flag names, LangChain and LlamaIndex written back.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.cli import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, main
from ctxbudget.cli._files import document_path
from ctxbudget.transcripts import load_transcript

from .conftest import long_session, one_error_line, openai_messages, write

DATA = Path(__file__).parents[1] / "data" / "transcripts"


# -- bad input: exit 2, one line, nothing written ------------------------------------------------------------------
def test_an_endless_device_is_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "/dev/zero", "--json"]) == EXIT_USAGE
    one_error_line(capsys, "/dev/zero", "invalid JSON")
    assert main(["compact", "/dev/zero", "-o", str(tmp_path / "out.json")]) == EXIT_USAGE
    one_error_line(capsys, "invalid JSON")
    assert list(tmp_path.iterdir()) == []


def test_an_endless_valid_stream_stops_at_the_size_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    stop = threading.Event()

    def feed() -> None:
        row = (json.dumps({"role": "user", "content": "x" * 500}) + "\n").encode()
        try:
            with fifo.open("wb") as pipe:
                while not stop.is_set():
                    pipe.write(row * 100)
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        assert main(["inspect", str(fifo), "--json", "--max-bytes", "2M"]) == EXIT_USAGE
    finally:
        stop.set()
    one_error_line(capsys, "larger than 2,000,000 bytes", "--max-bytes")
    writer.join(timeout=30)


BAD = [
    pytest.param(
        "digits.json",
        '[{"role": "user", "content": "x", "n": ' + "7" * 5_000 + "}]",
        "messages[0]: a JSON integer has more digits than Python reads",
        id="5000-digit-integer",
    ),
    pytest.param(
        "deep.json",
        json.dumps(
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "[" * 50_000}}
                    ],
                }
            ]
        ),
        "field 'tool_calls[0].function.arguments': arguments are nested more than 128 levels deep",
        id="arguments-nested-50000-deep",
    ),
    pytest.param(
        "deep.jsonl",
        json.dumps({"role": "user", "content": "a"})
        + "\n"
        + json.dumps(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": "[" * 50_000 + "]" * 50_000},
                    }
                ],
            }
        )
        + "\n",
        "line 2: field 'tool_calls[0].function.arguments': arguments are nested more than 128 levels deep",
        id="arguments-nested-50000-deep-jsonl",
    ),
]


@pytest.mark.parametrize(("name", "text", "expected"), BAD)
def test_bad_values_are_exit_2_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, expected: str
) -> None:
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    assert main(["inspect", str(source), "--json"]) == EXIT_USAGE
    one_error_line(capsys, expected)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["compact", str(source), "-o", str(out / "c.json"), "--force"]) == EXIT_USAGE
    one_error_line(capsys, expected)
    assert list(out.iterdir()) == []


def test_a_document_that_cannot_be_written_leaves_nothing_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write(tmp_path / "long.json", long_session(40))
    out = tmp_path / "out.json"
    document_path(out).mkdir()  # the .ctxbudget.json beside the output cannot be a file
    assert main(["compact", str(source), "-o", str(out), "--max-tokens", "20000"]) == EXIT_USAGE
    one_error_line(capsys, "-o (its .ctxbudget.json document)", "is a directory")
    assert not out.exists()


def test_a_write_failing_half_way_puts_every_file_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write(tmp_path / "long.json", long_session(40))
    out = tmp_path / "out.json"
    out.write_text("previous output", encoding="utf-8")
    document_path(out).write_text("previous document", encoding="utf-8")
    real_replace = os.replace
    calls: list[str] = []

    def second_fails(src: Any, dst: Any) -> None:
        calls.append(str(dst))
        if len(calls) == 2:  # the document is in place, then the output cannot be renamed
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr("ctxbudget.cli._files.os.replace", second_fails)
    assert main(["compact", str(source), "-o", str(out), "--max-tokens", "20000"]) == EXIT_FAILURE
    assert "No space left on device" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "previous output"
    assert document_path(out).read_text(encoding="utf-8") == "previous document"  # put back
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.json", "out.ctxbudget.json", "out.json"]


# -- what is written ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_outputs_follow_the_umask(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], umask: int, mode: int
) -> None:
    source = write(tmp_path / "long.json", long_session(40))
    out = tmp_path / "out.json"
    previous = os.umask(umask)
    try:
        assert main(["compact", str(source), "-o", str(out), "--max-tokens", "20000"]) == EXIT_OK
    finally:
        os.umask(previous)
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert stat.S_IMODE(document_path(out).stat().st_mode) == mode
    capsys.readouterr()


def test_a_replaced_output_keeps_its_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write(tmp_path / "long.json", long_session(40))
    out = tmp_path / "out.json"
    out.write_text("old", encoding="utf-8")
    out.chmod(0o640)
    assert main(["compact", str(source), "-o", str(out), "--max-tokens", "20000"]) == EXIT_OK
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    capsys.readouterr()


def test_in_place_through_a_link_compacts_the_file_it_points_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = write(tmp_path / "real.json", long_session(40))
    link = tmp_path / "link.json"
    link.symlink_to(real)
    before = load_transcript(real).messages
    argv = [
        "compact",
        str(link),
        "-o",
        str(link),
        "--in-place",
        "--max-tokens",
        "20000",
        "--output-format",
        "ctxbudget",
    ]
    assert main(argv) == EXIT_OK
    assert link.is_symlink()  # the link stays a link
    document = json.loads(real.read_text(encoding="utf-8"))  # and the file it names is the compacted one
    assert document["format"] == "ctxbudget.compacted/1"
    archived = {e["message"]["id"] for e in document["archive"] if e.get("message")}
    live = {m["id"] for m in document["messages"]}
    assert {m.id for m in before} <= archived | live
    capsys.readouterr()


def test_json_reports_the_share_of_the_window_past_100(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write(tmp_path / "long.json", long_session(40))
    assert main(["inspect", str(source), "--json", "--max-tokens", "20000"]) == EXIT_OK
    window = json.loads(capsys.readouterr().out)["window"]
    assert window["used_percentage"] == round(100 * window["used_tokens"] / 20_000, 1)
    assert window["used_percentage"] > 300


def test_tau_bench_says_which_result_it_read(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(DATA / "tau_bench_gpt4o_airline.json"), "--json"]) == EXIT_OK
    notes = json.loads(capsys.readouterr().out)["transcript"]["notes"]
    assert notes == ["read result 0 (task_id 1) of the 2 in the file; --key N reads result N"]
    assert main(["inspect", str(DATA / "tau_bench_gpt4o_airline.json"), "--json", "--key", "1"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["transcript"]["key"] == "1"


def test_an_overflow_names_the_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A request that cannot fit is refused in the CLI's words (its flags), not the library's parameter names.

    Only the fixed part can overflow now: an oversized turn is folded into the summary (compaction always fits).
    """
    rows = [
        {"role": "system", "content": "word " * 6_000},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "ok"},
    ]
    source = write(tmp_path / "big.json", rows)
    assert main(["compact", str(source), "-o", str(tmp_path / "out.json"), "--max-tokens", "2000"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--max-tokens" in err
    assert "6,008 tokens" in err
    assert "max_tokens" not in err.replace("--max-tokens", "")
    assert not (tmp_path / "out.json").exists()


def test_an_oversized_turn_is_folded_into_the_summary_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"role": "user", "content": "word " * 6_000}, {"role": "assistant", "content": "ok"}]
    source = write(tmp_path / "big.json", rows)
    out = tmp_path / "out.json"
    assert main(["compact", str(source), "-o", str(out), "--max-tokens", "2000", "--no-progress"]) == EXIT_OK
    assert out.exists()


def test_langchain_and_llamaindex_input_is_written_back_in_its_own_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_core.messages import messages_from_dict
    from llama_index.core.storage.chat_store import SimpleChatStore

    for name, fmt in (
        ("langchain_tau_bench_airline.json", "langchain"),
        ("llamaindex_tau_bench_airline.json", "llamaindex"),
    ):
        out = tmp_path / f"{fmt}.json"
        argv = ["compact", str(DATA / name), "-o", str(out), "--max-tokens", "8000", "--output-format", fmt]
        assert main([*argv, "--no-progress"]) == EXIT_OK
        body = json.loads(out.read_text(encoding="utf-8"))
        if fmt == "langchain":
            messages = messages_from_dict(body)  # LangChain's own loader takes it
            assert [m.type for m in messages][:2] == ["system", "human"]
        else:
            store = SimpleChatStore.model_validate(body)
            assert store.get_messages("tau-bench-airline-52")
        again = load_transcript(out)
        assert again.format in (fmt, "langchain-dumpd")
        assert document_path(out).exists()
    capsys.readouterr()


# -- compact when it pays, and again ---------------------------------------------------------------------------
def test_compact_does_nothing_and_says_so_when_the_gain_is_too_small(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write(tmp_path / "short.json", openai_messages())
    out = tmp_path / "out.json"
    assert main(["compact", str(source), "-o", str(out)]) == EXIT_OK
    said = " ".join(capsys.readouterr().out.split())
    assert said.startswith("Nothing to do:")
    assert "--force" in said
    assert not out.exists()
    assert not document_path(out).exists()
    assert main(["inspect", str(source), "--json"]) == EXIT_OK
    trial = json.loads(capsys.readouterr().out)["compaction"]
    assert trial["worth_compacting"] is False
    assert trial["gain_tokens"] < trial["minimum_gain_tokens"]
    assert main(["compact", str(source), "-o", str(out), "--force"]) == EXIT_OK
    assert out.exists()
    capsys.readouterr()


def test_a_second_compact_of_a_provider_output_carries_its_archive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write(tmp_path / "long.json", long_session(60))  # a list of messages: written back as a list
    first = tmp_path / "first.json"
    assert main(["compact", str(source), "-o", str(first), "--max-tokens", "20000", "--output-format", "openai"]) == 0
    archived = json.loads(document_path(first).read_text(encoding="utf-8"))["compaction"]["archived"]
    second = tmp_path / "second.json"
    assert main(["compact", str(first), "-o", str(second), "--max-tokens", "12000"]) == EXIT_OK
    document = json.loads(document_path(second).read_text(encoding="utf-8"))
    assert document["compaction"]["archived"] >= archived  # the first run's originals are all still there
    ids = {e["message"]["id"] for e in document["archive"] if e.get("message")} | {
        m["id"] for m in document["messages"]
    }
    assert {m.id for m in load_transcript(source).messages} <= ids
    # a message appended to the file since is read after the document's
    body = json.loads(first.read_text(encoding="utf-8"))
    body.append({"role": "user", "content": "one more question"})
    first.write_text(json.dumps(body), encoding="utf-8")
    capsys.readouterr()
    assert main(["inspect", str(first), "--json", "--max-tokens", "12000"]) == EXIT_OK
    report = json.loads(capsys.readouterr().out)
    assert any("rows added to the file since" in note for note in report["transcript"]["notes"])
    # a file edited since its document was written is refused, not read without its archive
    body[3] = {"role": "user", "content": "edited"}
    first.write_text(json.dumps(body), encoding="utf-8")
    assert main(["inspect", str(first), "--json"]) == EXIT_USAGE
    one_error_line(capsys, "was written for another version of it", "--ignore-sidecar")
    assert main(["inspect", str(first), "--json", "--ignore-sidecar"]) == EXIT_OK
    capsys.readouterr()
