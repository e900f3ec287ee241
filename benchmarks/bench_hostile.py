"""Hostile text a model or a user can send, and what it costs: time at 25,000 and 100,000 characters, and their ratio.

A linear path costs about 4x for 4x the text; a path that retries from every position (a regex over an unclosed
run) or copies every tail of a long run costs 16x, and minutes at a few hundred kilobytes. Each case is one message
of hostile text among small ones, in a ``ContextSession`` (16k window, default policy, offline summarizer), then
what reads it: ``compact()`` or ``search_archive()``. The cases are the findings of the hostile-input review of
2026-12-07 (before their fixes: 12 s, 15 s, 47 s and 5.6 s at the sizes given there), with the patterns reviewed
before them that stayed linear.

Run: ``python -m benchmarks.bench_hostile`` (writes ``benchmarks/results/hostile.md``).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ctxbudget import ContextSession, Message, ToolCall
from ctxbudget.transcripts import load_transcript

RESULTS = Path(__file__).parent / "results" / "hostile.md"
SIZES = (25_000, 100_000)
REPEATS = 3


def _session(command: str, output: str, user: str = "Print the notes, then tidy up.") -> ContextSession:
    session = ContextSession(model="gpt-4o", max_tokens=16_000)
    session.add_user(user)
    for turn in range(4):
        call = ToolCall(id=f"c{turn}", name="bash", args={"command": command if turn == 0 else f"cat n{turn}.txt"})
        session.add_assistant(tool_calls=[call])
        session.add_tool_result(call.id, output if turn == 0 else f"line of output {turn}\n" * 300, name="bash")
        session.add_user(f"next step {turn}")
    return session


def _compact(session: ContextSession) -> None:
    session.compact()


def _search(session: ContextSession) -> None:
    session.compact()
    session.search_archive("why did the build fail in src/app.py")


def _statements(n: int) -> ContextSession:
    session = ContextSession(model="gpt-4o", max_tokens=128_000)
    for i in range(n // 25):  # "The count is 1234." and its reply: about 25 characters a turn
        session.add(Message(role="user", content=f"The count is {i + 1000}."), Message(role="assistant", content="ok"))
    return session


def _shell_mode(n: int) -> ContextSession:
    session = ContextSession(model="gpt-4o", max_tokens=128_000)
    session.add(Message(role="user", content="Run the tests."), Message(role="assistant", content="ok"))
    session.add(Message(role="user", content="<bash-input>make test</bash-input>"))
    session.add(Message(role="user", content="<bash-stdout>" * (n // 13)))
    return session


def _parallel(n: int) -> list[Message]:
    calls = tuple(ToolCall(id=f"c{j}", name="read_file", args={"path": f"src/f{j}.py"}) for j in range(n // 25))
    results = [Message(role="tool", tool_call_id=call.id, content="x") for call in calls]
    return [Message(role="user", content="Read every file."), Message(role="assistant", tool_calls=calls), *results]


def _add_and_compact(messages: list[Message]) -> None:
    session = ContextSession(model="gpt-4o", max_tokens=128_000)
    session.add(*messages)
    session.compact()


def _claude_code(n: int) -> Path:
    path = Path(tempfile.mkdtemp()) / "session.jsonl"
    user = {"type": "user", "uuid": "u", "parentUuid": None, "sessionId": "s", "isSidechain": False}
    rows = [{**user, "message": {"role": "user", "content": "Fix it " + "<system-reminder>" * (n // 17)}}]
    for line in range(n // 25):  # one API message written as a line per block, as Claude Code does
        block = {"type": "tool_use", "id": f"t{line}", "name": "Read", "input": {"file_path": f"f{line}.py"}}
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": [block]}
        rows.append({**user, "type": "assistant", "uuid": f"a{line}", "parentUuid": "u", "message": message})
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    return path


Case = tuple[str, Callable[[int], Any], Callable[[Any], None]]
CASES: tuple[Case, ...] = (
    ("tool output `a/a/a/...`, then search_archive", lambda n: _session("cat log.txt", "a/" * (n // 2)), _search),
    ('command `echo "\\"\\"...` never closed', lambda n: _session('echo "' + '\\"' * (n // 2), "ok"), _compact),
    ("command `cat .....!`", lambda n: _session("cat " + "." * n + "!", "ok"), _compact),
    ("command `rm ////!`", lambda n: _session("rm " + "/" * n + "!", "ok"), _compact),
    ("command `cat a/a/.../x.py`", lambda n: _session("cat " + "a/" * (n // 2) + "x.py", "ok"), _compact),
    ("user message of one letter run", lambda n: _session("cat a.txt", "ok", "keep " + "x" * n), _compact),
    ('tool output of unclosed `<!--` and `"x": "`', lambda n: _session("cat a", '<!-- "x": "' * (n // 12)), _compact),
    ("user turns `The count is N.` (one per 25 characters)", _statements, _compact),
    ("a `<bash-input>` turn, then `<bash-stdout>` never closed", _shell_mode, _compact),
    ("one message of parallel calls and their results (one per 25 characters)", _parallel, _add_and_compact),
    ("Claude Code file: `<system-reminder>` never closed, one message's lines", _claude_code, load_transcript),
)


def timed(build: Callable[[int], Any], run: Callable[[Any], None], size: int) -> float:
    """The median of :data:`REPEATS` runs on fresh inputs (the building not timed)."""
    times = []
    for _ in range(REPEATS):
        session = build(size)
        started = time.perf_counter()
        run(session)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    small, large = SIZES
    lines = [
        "# Hostile text: time at 25,000 and 100,000 characters",
        "",
        f"Generated by `python -m benchmarks.bench_hostile` (Python {platform.python_version()}); medians of "
        f"{REPEATS} runs. Linear: about 4x; quadratic: about 16x.",
        "",
        f"| case | {small:,} chars (ms) | {large:,} chars (ms) | ratio |",
        "|---|---:|---:|---:|",
    ]
    for name, build, run in CASES:
        first, second = timed(build, run, small), timed(build, run, large)
        lines.append(f"| {name} | {first * 1000:.1f} | {second * 1000:.1f} | {second / first:.1f}x |")
    page = "\n".join(lines) + "\n"
    print(page)
    if not args.no_write:
        RESULTS.write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
