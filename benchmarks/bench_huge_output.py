"""Memory of adding one huge tool output (issue 26 finding 8): peak over the output's size, per add path.

Each case runs in its own process: build the output (log lines, non-ASCII text or a hex blob), open a session whose
last message is the tool call, then add the output as its result (bounded on arrival: archived whole, an excerpt
kept), and for the adapters also build the next request. Reported per case:

* ``traced``: the ``tracemalloc`` peak of the add over the output's size (Python allocations: the copies);
* ``rss``: how far the process's resident size rose at its peak during the add (the peak is reset first, Linux
  ``/proc/self/clear_refs``), over the output's size: everything, tiktoken's and pydantic's own buffers included;
* the wall time of the add (one run per case, on a shared machine: a rough figure, not a comparison).

Run: ``python -m benchmarks.bench_huge_output`` (writes ``benchmarks/results/huge_output.md``; a few minutes).
``--sizes 50`` or ``--cases tiktoken-log-lines`` for a subset (printed, not written).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results" / "huge_output.md"
SIZES_MB = (50, 60)


def _log_lines(size: int) -> str:
    return "".join(f"{i:>8} INFO worker-{i % 7} processed batch ok, 12 items\n" for i in range(size // 48 + 1))[:size]


def _non_ascii(size: int) -> str:
    return "".join(f"ligne {i} \u2013 r\u00e9sum\u00e9 \u4e2d\u6587 \U0001f600 ok\n" for i in range(size // 28 + 1))[
        :size
    ]


def _hex_blob(size: int) -> str:
    return os.urandom(size // 2 + 1).hex()[:size]


SHAPES: dict[str, Callable[[int], str]] = {"log-lines": _log_lines, "non-ascii": _non_ascii, "hex-blob": _hex_blob}


def _context_session(counter: str) -> Callable[[str], Callable[[], object]]:
    def prepare(output: str) -> Callable[[], object]:
        from ctxbudget import ContextSession, ToolCall
        from ctxbudget.messages.tokens import CharCounter, TiktokenCounter
        from ctxbudget.providers.counting import counter_for_model

        counters: dict[str, Callable[[], Any]] = {
            "tiktoken": TiktokenCounter,
            "estimating": lambda: counter_for_model("claude-sonnet-4-5"),
            "chars": CharCounter,
        }
        session = ContextSession(max_tokens=100_000, counter=counters[counter]())
        session.add_user("run it")
        session.add_assistant(tool_calls=[ToolCall(id="c1", name="run")])
        return lambda: session.add_tool_result("c1", output)

    return prepare


def _shared_session(output: str) -> Callable[[], object]:
    from ctxbudget import ContextSession, Message, ToolCall
    from ctxbudget.shared_session import SharedSession
    from ctxbudget.stores import InMemorySnapshotStore

    shared = SharedSession.create(InMemorySnapshotStore(), ContextSession(max_tokens=100_000, session_id="s"))
    call = Message(role="assistant", tool_calls=[ToolCall(id="c1", name="run")])
    shared.add(Message(role="user", content="run it"), call)
    message = Message(role="tool", tool_call_id="c1", content=output)
    return lambda: (shared.add(message), shared.build_request())


def _llamaindex(output: str) -> Callable[[], object]:
    from llama_index.core.base.llms.types import ChatMessage

    from llamaindex_ctxbudget import BudgetedMemory

    memory = BudgetedMemory.from_defaults(max_tokens=100_000)
    memory.put(ChatMessage(role="user", content="run it"))
    call = {"id": "c1", "type": "function", "function": {"name": "run", "arguments": "{}"}}
    memory.put(ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [call]}))
    result = ChatMessage(role="tool", content=output, additional_kwargs={"tool_call_id": "c1"})
    return lambda: (memory.put(result), memory.get())


CASES: dict[str, tuple[str, Callable[[str], Callable[[], object]]]] = {
    "tiktoken-log-lines": ("log-lines", _context_session("tiktoken")),
    "tiktoken-non-ascii": ("non-ascii", _context_session("tiktoken")),
    "tiktoken-hex-blob": ("hex-blob", _context_session("tiktoken")),
    "estimating-log-lines": ("log-lines", _context_session("estimating")),
    "chars-log-lines": ("log-lines", _context_session("chars")),
    "shared-session-log-lines": ("log-lines", _shared_session),
    "llamaindex-log-lines": ("log-lines", _llamaindex),
}


def _status_bytes(field: str) -> int:
    """``VmRSS`` / ``VmHWM`` of this process from ``/proc/self/status`` (Linux), in bytes."""
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise OSError(f"/proc/self/status has no {field}")


def _reset_peak_rss() -> int:
    """Reset the peak resident size to the current one (Linux ``clear_refs`` 5); return the current size."""
    Path("/proc/self/clear_refs").write_text("5", encoding="ascii")
    return _status_bytes("VmRSS")


def measure(case: str, size_mb: int) -> dict[str, Any]:
    """Run one case in this process; the figures as a dict."""
    shape, prepare = CASES[case]
    output = SHAPES[shape](size_mb * 1024 * 1024)
    action = prepare(output)
    rss_before = _reset_peak_rss()
    tracemalloc.start()
    started = time.perf_counter()
    action()
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_rise = max(0, _status_bytes("VmHWM") - rss_before)
    return {"case": case, "mb": size_mb, "traced": peak / len(output), "rss": rss_rise / len(output), "s": seconds}


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| case | output | traced peak / size | RSS rise / size | add time |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [f"| {r['case']} | {r['mb']} MB | {r['traced']:.2f}x | {r['rss']:.2f}x | {r['s']:.1f} s |" for r in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES_MB)), help="output sizes in MB, comma-separated")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    parser.add_argument("--one", nargs=2, metavar=("CASE", "MB"), help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]))))
        return 0
    sizes = [int(size) for size in args.sizes.split(",")]
    cases = [case.strip() for case in args.cases.split(",") if case.strip()]
    rows = []
    for size in sizes:
        for case in cases:
            child = [sys.executable, "-m", "benchmarks.bench_huge_output", "--one", case, str(size)]
            output = subprocess.run(child, check=True, capture_output=True, text=True).stdout
            rows.append(json.loads(output.strip().splitlines()[-1]))
            print(_table(rows[-1:]).splitlines()[-1], flush=True)
    table = _table(rows)
    print(table)
    if args.sizes == ",".join(map(str, SIZES_MB)) and args.cases == ",".join(CASES):
        header = "# Adding one huge tool output: memory\n\nGenerated by `python -m benchmarks.bench_huge_output`.\n\n"
        RESULTS.write_text(header + table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
