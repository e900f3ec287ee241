"""``ctxbudget inspect`` and ``compact`` on long generated agent transcripts, beside the tiktoken encode floor.

The transcripts (seeded, :func:`benchmarks.bench_agent.make_turns`): every turn a user message, an assistant message
with 1-2 parallel tool calls, their results (outputs of 100-6,000 words of code/log-like text; one in seven is
large, 2,000-6,000 words), then a reply; written as OpenAI Chat Completions JSONL of 5k, 20k and 60k messages. Each
command runs in its own process (``python -m benchmarks.bench_cli --child``), timed there: CPU seconds (user +
system, steadier than wall time on a shared machine) and the peak resident set (``VmHWM`` of the child's own
memory; not ``ru_maxrss``, which Linux carries over from the parent across fork and exec: it reported this
process's peak, which holds every text of the transcript for the floor and so grew with the file). The process also
times what it spends inside the session's compaction (``ContextSession.build_request`` when it compacts, and
``compact``), so the table can say which part is reading, counting and writing and which is compaction.

The floor is ``tiktoken``'s ``encode_ordinary`` of every text of the transcript (contents and call arguments), once
each, in CPU seconds in this process: what any counter that counts every message pays. Ratios are each run's CPU
time over the floor measured right before it (medians of the repeats).

Run: ``python -m benchmarks.bench_cli`` (writes ``benchmarks/results/cli.md``); ``--sizes 5000`` for a subset
(printed, not written). On a loaded 2-core machine the 60k run takes tens of minutes.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxbudget import Message, get_encoding
from ctxbudget.providers import to_openai_request

from .bench_agent import make_turns

SIZES = (5_000, 20_000, 60_000)
REPEATS = {5_000: 3, 20_000: 2, 60_000: 1}
RESULTS = Path(__file__).parent / "results" / "cli.md"


def write_transcript(path: Path, messages: int) -> list[str]:
    """An OpenAI JSONL agent transcript of ``messages`` messages at ``path``; returns its texts (for the floor)."""
    flat: list[Message] = [Message(role="system", content="You are a careful coding agent.", id="sys")]
    for turn in make_turns(messages // 4 + 10):
        flat.extend(turn.messages)
        if len(flat) >= messages:
            break
    flat = flat[:messages]
    body = to_openai_request(flat, [])["messages"]
    with path.open("w", encoding="utf-8") as handle:
        for row in body:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    texts = [m.text for m in flat]
    texts += [call.args_json() for m in flat for call in m.tool_calls]
    return texts


def floor_seconds(texts: Sequence[str]) -> float:
    """CPU seconds of ``encode_ordinary`` over ``texts`` (the encoding already loaded)."""
    encoding = get_encoding("o200k_base")
    started = time.process_time()
    for text in texts:
        encoding.encode_ordinary(text)
    return time.process_time() - started


@dataclass
class Sample:
    cpu: float
    wall: float
    peak_mb: float
    compaction_cpu: float
    compactions: int


def run_child(argv: Sequence[str]) -> Sample:
    """One CLI command in a fresh process, measured there."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_cli", "--child", *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{argv}: exit {done.returncode}: {done.stderr[-2000:]}")
    figures = json.loads(done.stderr.strip().splitlines()[-1])
    return Sample(figures["cpu"], wall, figures["peak_kb"] / 1024, figures["compaction_cpu"], figures["compactions"])


def child(argv: Sequence[str]) -> int:
    """Run the CLI with ``argv``, timing the session's compaction; print the figures as the last stderr line."""
    from ctxbudget.cli import main
    from ctxbudget.session import ContextSession

    spent = {"cpu": 0.0, "count": 0}

    def timed(method):  # type: ignore[no-untyped-def]
        def wrapper(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            started = time.process_time()
            try:
                result = method(self, *args, **kwargs)
            finally:
                spent["cpu"] += time.process_time() - started
            spent["count"] += 1
            return result

        return wrapper

    ContextSession.build_request = timed(ContextSession.build_request)  # type: ignore[method-assign]
    ContextSession.compact = timed(ContextSession.compact)  # type: ignore[method-assign]
    code = main(list(argv))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    figures = {
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_kb": peak_kb(usage.ru_maxrss),
        "compaction_cpu": spent["cpu"],
        "compactions": spent["count"],
    }
    print(json.dumps(figures), file=sys.stderr)
    return code


def peak_kb(fallback: int) -> int:
    """This process's own peak resident set in KiB: ``VmHWM`` (Linux), else ``fallback`` (``ru_maxrss``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return fallback


@dataclass
class Row:
    messages: int
    megabytes: float
    tokens: int
    floor: float
    inspect: list[Sample]
    compact: list[Sample]
    floors: list[float]


def measure(size: int, directory: Path, repeats: int) -> Row:
    path = directory / f"agent-{size}.jsonl"
    texts = write_transcript(path, size)
    encoding = get_encoding("o200k_base")
    tokens = sum(len(encoding.encode_ordinary(t)) for t in texts)
    inspects: list[Sample] = []
    compacts: list[Sample] = []
    floors: list[float] = []
    for _ in range(repeats):
        floors.append(floor_seconds(texts))
        inspects.append(run_child(["inspect", str(path), "--json", "--no-progress"]))
        floors.append(floor_seconds(texts))
        out = directory / f"out-{size}.json"
        compacts.append(run_child(["compact", str(path), "-o", str(out), "--no-progress", "--force"]))
    return Row(size, path.stat().st_size / 1e6, tokens, statistics.median(floors), inspects, compacts, floors)


def _median(samples: Sequence[Sample], attribute: str) -> float:
    return statistics.median(getattr(s, attribute) for s in samples)


def table(rows: Sequence[Row]) -> str:
    lines = [
        "| messages | file | tokens | floor CPU s | inspect CPU s (x floor) | of it compaction | compact CPU s "
        "(x floor) | of it compaction | reading, counting, writing (x floor) | peak RSS inspect / compact |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        inspect_cpu, compact_cpu = _median(row.inspect, "cpu"), _median(row.compact, "cpu")
        inspect_cmp, compact_cmp = _median(row.inspect, "compaction_cpu"), _median(row.compact, "compaction_cpu")
        rest = compact_cpu - compact_cmp
        lines.append(
            f"| {row.messages:,} | {row.megabytes:,.0f} MB | {row.tokens / 1e6:,.1f}M | {row.floor:,.1f} | "
            f"{inspect_cpu:,.1f} ({inspect_cpu / row.floor:.1f}x) | {inspect_cmp:,.1f} | "
            f"{compact_cpu:,.1f} ({compact_cpu / row.floor:.1f}x) | {compact_cmp:,.1f} | "
            f"{rest:,.1f} ({rest / row.floor:.1f}x) | "
            f"{_median(row.inspect, 'peak_mb'):,.0f} / {_median(row.compact, 'peak_mb'):,.0f} MB |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--child"]:
        return child(args[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--repeats", type=int, help="runs per size (default: 3 at 5k, 2 at 20k, 1 at 60k)")
    options = parser.parse_args(args)
    sizes = [int(s) for s in options.sizes.split(",") if s]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        for size in sizes:
            row = measure(size, Path(tmp), options.repeats or REPEATS.get(size, 1))
            rows.append(row)
            print(table([row]).splitlines()[-1], flush=True)
    text = table(rows)
    print(text)
    if tuple(sizes) == SIZES:
        RESULTS.write_text(
            "# ctxbudget inspect / compact on long agent transcripts\n\n"
            "Generated by `python -m benchmarks.bench_cli` (see its docstring). CPU seconds, medians of the repeats "
            f"({', '.join(f'{REPEATS[s]} at {s:,}' for s in SIZES)}); the floor is tiktoken's encode_ordinary of every "
            "text once. 'Of it compaction' is the CPU spent inside the session's compaction "
            "(ContextSession.build_request when it compacts, and compact).\n\n" + text + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
