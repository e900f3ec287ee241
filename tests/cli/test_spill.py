"""What the CLI remembers of every message is exact whether it stays in memory or spills to disk.

:class:`~ctxbudget.transcripts.formats._spill.SpillIndex` (ids read, archive handles, add positions), the archive
sink's counts and read-back, a repeated id found past the spill, and a session's add positions moved into one.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from ctxbudget.archive.store import ArchiveEntry
from ctxbudget.cli import main
from ctxbudget.cli._archive import ArchiveSink
from ctxbudget.errors import TranscriptError
from ctxbudget.messages.message import Message
from ctxbudget.session import ContextSession
from ctxbudget.transcripts import load_transcript
from ctxbudget.transcripts.formats import _providers
from ctxbudget.transcripts.formats import _spill as spill
from ctxbudget.transcripts.formats._spill import SpillIndex
from hypothesis import given, settings
from hypothesis import strategies as st

_OPS = st.lists(
    st.tuples(st.sampled_from(["set", "del", "get", "in"]), st.integers(0, 40), st.integers(-5, 5)), max_size=300
)


@settings(max_examples=60, deadline=None)
@given(_OPS)
def test_spill_index_is_a_dict(ops: list[tuple[str, int, int]]) -> None:
    """Every operation answers as a dict would, with most entries spilled (a budget of a few entries)."""
    index: SpillIndex[int] = SpillIndex(memory_bytes=400)
    model: dict[str, int] = {}
    for op, k, value in ops:
        key = f"id-{k}"
        if op == "set":
            index[key] = value
            model[key] = value
        elif op == "del":
            if key in model:
                del index[key]
                del model[key]
            else:
                with pytest.raises(KeyError):
                    del index[key]
        elif op == "get":
            assert index.get(key) == model.get(key)
        else:
            assert (key in index) == (key in model)
        assert len(index) == len(model)
    assert list(index) == list(model)
    assert dict(index.items()) == model
    index.close()
    assert len(index) == 0


def test_a_small_index_never_opens_a_database() -> None:
    index: SpillIndex[str] = SpillIndex()
    for i in range(1000):
        index[f"transcript-{i}"] = f"line {i + 1}"
    assert index._db is None
    assert index["transcript-999"] == "line 1000"


def test_a_repeated_id_past_the_spill_names_the_first_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_providers, "SpillIndex", lambda: SpillIndex(memory_bytes=2_000))
    rows = [{"role": "user", "content": f"message {i}", "id": f"m{i}"} for i in range(300)]
    rows.append({"role": "user", "content": "again", "id": "m3"})
    path = tmp_path / "repeated.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with pytest.raises(TranscriptError, match=r"line 301: field 'id': id 'm3' is already used by line 4"):
        load_transcript(path)


def test_the_sink_counts_and_reads_back_past_the_spill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ctxbudget.cli._archive.SpillIndex", lambda: SpillIndex(memory_bytes=2_000))
    with ArchiveSink(keep=True, directory=tmp_path) as sink:
        for i in range(200):
            message = Message(role="tool", content=f"output {i}\nsecond line", tool_call_id=f"c{i}", id=f"t{i}")
            sink.arriving = i % 3 == 0
            sink.put(ArchiveEntry(handle=f"ctx://archive/t{i}.bounded", reason="bounded", message=message))
            sink.arriving = False
            sink.put(ArchiveEntry(handle=f"ctx://archive/t{i}.summarized", reason="summarized", message=message))
            sink.put(ArchiveEntry(handle=f"ctx://archive/t{i}.bounded", reason="bounded", message=message))
        assert (sink.count, sink.archived, sink.bounded) == (400, 200, 67)
        entry = sink.read("ctx://archive/t5.summarized")
        assert entry is not None
        assert entry.message is not None
        assert entry.message.text == "output 5\nsecond line"
        assert sink.read("ctx://archive/t5.cleared") is None
        assert len(list(sink.lines())) == 400
    assert (sink.count, sink.archived, sink.bounded) == (400, 200, 67)  # the counts outlive the files


def test_a_session_keeps_its_add_positions_in_an_index() -> None:
    session = ContextSession(model="gpt-4o")
    session.add(Message(role="user", content="first", id="a"))
    index: SpillIndex[int] = SpillIndex(memory_bytes=500)
    session.conversation.keep_order_in(index)
    for i in range(50):
        session.add(Message(role="user", content=f"more {i}", id=f"b{i}"))
    assert session.conversation.order == {"a": 0, **{f"b{i}": i + 1 for i in range(50)}}
    assert index._db is not None  # most of them spilled
    with pytest.raises(Exception, match="already in this session"):
        session.add(Message(role="user", content="again", id="b3"))


def test_inspect_and_compact_agree_with_everything_spilled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI's figures and document are the same when every index spills at once."""
    source = tmp_path / "long.jsonl"
    rows = [{"role": "system", "content": "You are careful."}]
    for i in range(120):
        rows += [
            {"role": "user", "content": f"step {i}: look at file_{i}.py"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"call_{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": f"call_{i}", "content": f"def f{i}():\n    return {i}\n" * 200},
        ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    def run(tag: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
        out = tmp_path / f"{tag}.json"
        args = ["--max-tokens", "20000", "--no-progress"]
        assert main(["compact", str(source), "-o", str(out), "--output-format", "ctxbudget", "--force", *args]) == 0
        capsys.readouterr()
        assert main(["inspect", str(source), "--json", *args]) == 0
        return out.read_text(encoding="utf-8"), capsys.readouterr().out

    plain = run("plain", capsys)
    for module in ("ctxbudget.cli._archive", "ctxbudget.transcripts.formats._providers"):
        monkeypatch.setattr(f"{module}.SpillIndex", lambda: SpillIndex(memory_bytes=1))
    spilled = run("spilled", capsys)
    assert json.loads(plain[0])["archive"]
    assert spilled == plain


def test_an_index_that_cannot_write_its_temporary_file_keeps_everything_in_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index: SpillIndex[int] = SpillIndex(memory_bytes=2_000)
    for i in range(100):  # past the limit: spilled to a working database
        index[f"id-{i}"] = i

    def unwritable() -> object:
        raise sqlite3.OperationalError("unable to open database file")

    broken: SpillIndex[int] = SpillIndex(memory_bytes=2_000)
    monkeypatch.setattr(spill, "_open", unwritable)
    for i in range(5_000):
        broken[f"id-{i}"] = i
    assert len(broken) == 5_000
    assert all(broken[f"id-{i}"] == i for i in range(5_000))
    assert list(broken) == [f"id-{i}" for i in range(5_000)]
    assert index["id-0"] == 0
    assert len(index) == 100
