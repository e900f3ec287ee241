"""Per-call cost of the stateless ``ContextBudgetRunnable`` against ``trim_messages`` on an agent workload.

Where an LCEL chain would put ``trim_messages``, ``ContextBudgetRunnable()`` (no session) is passed the whole list
every call. The workload (seeded): every turn is a user message, an assistant message with 1-2 parallel tool calls,
their tool results (100-6,000 words of log-like text with paths and figures; one output in seven is large, 2,000 to
6,000 words) and an assistant reply. History is pre-filled to 1k, 5k and 10k messages (one call made, untimed);
a measured call = append one turn to the list, then fit the whole list to the budget. Every system starts on a
human turn and keeps the leading system message; a 100k-token budget, so the oldest messages are dropped, and (in
the paired table at the end) a window holding the whole history, where nothing is dropped.

* ``ContextBudgetRunnable`` stateless, exact ``o200k_base`` (its default): the previous call's per-message results
  are cached, so a list that extends the last one costs its new messages, and a message is tokenized only when the
  fit needs its count (while upper bounds, UTF-8 bytes, show the request fits, none is).
* ``fit_messages``: the same fit with nothing cached (the runnable's previous behaviour), for reference.
* ``trim_messages`` (strategy "last", ``start_on="human"``, ``include_system=True``) with an exact tiktoken counter
  (content and tool-call arguments, ``o200k_base``) and with LangChain's ``count_tokens_approximately``.
* ``tiktoken encode_ordinary``: bare tiktoken encoding only the turn's new text, the floor a counter pays that
  counts every message.

Medians over the measured calls; the slow systems stop repeating once their calls add up to :data:`CELL_S` seconds
(the count is in the table). Run: ``python -m benchmarks.bench_runnable`` (writes ``benchmarks/results/runnable.md``,
a few minutes on a shared 2-core machine); ``--quick`` runs tiny sizes and prints only.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxbudget import get_encoding
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages

from langchain_ctxbudget import ContextBudgetRunnable, fit_messages

SIZES = (1_000, 5_000, 10_000)
BUDGET = 100_000
MILLION_WINDOW = 1_000_000
"""The large window the issue names (GPT-4.1, Gemini, Claude): at 10k messages (about 9M tokens) most is dropped."""
LARGE_WINDOW = 50_000_000
"""Larger than the whole 10k-message history (about 9M tokens): nothing is dropped, every call keeps everything."""
SEED = 13
CELL_S = 15.0
"""A system stops repeating calls at one size once its measured calls add up to this many seconds."""
OURS_REPEATS = 40
PEER_REPEATS = 10
ENCODING = get_encoding("o200k_base")
RESULTS = Path(__file__).parent / "results" / "runnable.md"

Turn = list[BaseMessage]


def _output(rng: random.Random, tag: str) -> str:
    words = rng.randint(2_000, 6_000) if rng.randrange(7) == 0 else rng.randint(100, 600)
    lines: list[str] = []
    count = 0
    while count < words:
        n = rng.randrange(10_000)
        lines.append(f"{tag} src/pkg/module_{n % 97}.py:{n} value={n * 7 % 1013} status=ok elapsed={n % 53}ms")
        count += 6
    return "\n".join(lines)


def make_turn(rng: random.Random, t: int) -> Turn:
    """One agent turn: user, assistant with 1-2 parallel calls, their results, the reply."""
    calls = [
        {"id": f"call_{t}_{i}", "name": "grep", "args": {"pattern": f"retry_{t}", "path": f"src/m{t}_{i}"}}
        for i in range(rng.randint(1, 2))
    ]
    turn: Turn = [
        HumanMessage(f"Step {t}: find where retry_{t} is configured and fix module_{t}.py", id=f"h{t}"),
        AIMessage("", tool_calls=calls, id=f"a{t}"),
    ]
    turn += [ToolMessage(_output(rng, f"t{t}.{i}"), tool_call_id=c["id"], id=f"r{t}_{i}") for i, c in enumerate(calls)]
    turn.append(AIMessage(f"module_{t}.py: retry_{t} now reads the shared policy; 3 call sites updated.", id=f"f{t}"))
    return turn


def history(size: int, rng: random.Random) -> tuple[list[BaseMessage], int]:
    messages: list[BaseMessage] = [SystemMessage("You are a coding agent. Use the tools; cite paths.")]
    t = 0
    while len(messages) < size:
        messages += make_turn(rng, t)
        t += 1
    return messages, t


def _exact(messages: Sequence[BaseMessage]) -> int:
    total = 3
    for m in messages:
        total += 3 + len(ENCODING.encode_ordinary(m.text))
        for call in getattr(m, "tool_calls", None) or ():
            total += len(ENCODING.encode_ordinary(call["name"] + json.dumps(call["args"])))
    return total


def _trim(
    counter: Callable[[Sequence[BaseMessage]], int], budget: int = BUDGET
) -> Callable[[list[BaseMessage]], object]:
    def call(messages: list[BaseMessage]) -> object:
        return trim_messages(
            messages,
            max_tokens=budget,
            token_counter=counter,
            strategy="last",
            start_on="human",
            include_system=True,
        )

    return call


def _floor(turn: Turn) -> None:
    for m in turn:
        ENCODING.encode_ordinary(m.text)
        for call in getattr(m, "tool_calls", None) or ():
            ENCODING.encode_ordinary(json.dumps(call["args"]))


Measured = tuple[float, int]
Cell = Measured | None


def measure(size: int, make: Callable[[], Callable[[list[BaseMessage]], object]], repeats: int) -> Cell:
    """Median ms of one call (append a turn, fit the whole list) and the calls measured."""
    rng = random.Random(SEED)
    messages, t = history(size, rng)
    fit = make()
    samples: list[float] = []
    for _ in range(repeats):
        messages += make_turn(rng, t)
        t += 1
        start = time.perf_counter()
        fit(messages)
        samples.append((time.perf_counter() - start) * 1000)
        if sum(samples) > CELL_S * 1000:
            break
    return statistics.median(samples), len(samples)


Fit = Callable[[list[BaseMessage]], object]
Samples = tuple[list[float], list[float], list[float]]


def _time_in_turn(messages: list[BaseMessage], turn: Turn, fits: tuple[Fit, Fit], samples: Samples) -> None:
    """Append ``turn`` to ``messages``, then time the runnable, approximate trim and the floor on it, in turn (ms)."""
    messages += turn
    for fit, into in ((fits[0], samples[0]), (fits[1], samples[1]), (lambda _: _floor(turn), samples[2])):
        start = time.perf_counter()
        fit(messages)
        into.append((time.perf_counter() - start) * 1000)


def measure_paired(size: int, repeats: int, budget: int = BUDGET) -> tuple[Measured, Measured, Measured]:
    """The cached runnable, approximate ``trim_messages`` and the floor timed in turn on the same lists, call after
    call, so load on the shared machine weighs on all three alike; their medians.

    The floor (encoding the turn's new text) is what a fit pays that counts every message, so approximate
    ``trim_messages`` over the floor is the most such a fit can be faster than it; the runnable counts only what
    the fit needs, so where bounds show the request fits it can beat that ceiling."""
    rng = random.Random(SEED)
    messages, t = history(size, rng)
    ours, approximate = _ours(budget), _trim(count_tokens_approximately, budget)
    ours(messages)
    samples: Samples = ([], [], [])
    for _ in range(repeats):
        _time_in_turn(messages, make_turn(rng, t), (ours, approximate), samples)
        t += 1
    ours_ms, trim_ms, floor_ms = (statistics.median(times) for times in samples)
    return (ours_ms, repeats), (trim_ms, repeats), (floor_ms, repeats)


GROWTH_SIZE = 2_500
"""Messages a growing history reaches, from empty, in :func:`measure_growth` (about 2.3M tokens)."""


@dataclass(frozen=True)
class Growth:
    """Per-call ms of one system over every call of a history growing from empty."""

    samples: list[float]

    @property
    def total_s(self) -> float:
        return sum(self.samples) / 1000

    def quantile(self, q: float) -> float:
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure_growth(window: int, size: int = GROWTH_SIZE) -> tuple[Growth, Growth, Growth]:
    """Every call of a history growing a turn at a time from empty to ``size`` messages, through ``window``.

    The runnable, approximate ``trim_messages`` and the floor, in turn on the same lists. The runnable sizes new
    messages by their bounds while the bounds show the request fits, and counts what they left, a part per call,
    once they stop sufficing: the tail quantiles and the total are reported with the median.
    """
    rng = random.Random(SEED)
    messages: list[BaseMessage] = [SystemMessage("You are a coding agent. Use the tools; cite paths.")]
    ours, approximate = _ours(window), _trim(count_tokens_approximately, window)
    _ours(window)([*messages, HumanMessage("warm-up")])  # imports and first-use setup, on another runnable
    samples: Samples = ([], [], [])
    t = 0
    while len(messages) < size:
        _time_in_turn(messages, make_turn(rng, t), (ours, approximate), samples)
        t += 1
    return Growth(samples[0]), Growth(samples[1]), Growth(samples[2])


def render_growth(size: int, growths: list[tuple[int, tuple[Growth, Growth, Growth]]]) -> list[str]:
    """Median, p99 and worst call and the total of each system, growing from empty through each window."""
    lines = [
        "",
        f"## Growing from empty to {size:,} messages",
        "",
        "Every call of one history growing a turn at a time (all calls timed, the three systems in turn on the same",
        "lists). While the history's UTF-8 bytes (an upper bound on its tokens) fit the window, the runnable",
        "tokenizes only the outputs that may need cutting; once they do not, each call counts its new messages and",
        "part of what earlier calls left uncounted (newest first, each message once) until none is left, so no call",
        "pays for the backlog alone. The worst calls are those with a large output to cut; the total is the run's.",
        "",
        "| window | system | median ms | p99 ms | worst ms | total s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for window, systems in growths:
        for name, growth in zip((OURS, APPROXIMATE, FLOOR), systems, strict=True):
            lines.append(
                f"| {window:,} | {name} | {statistics.median(growth.samples):.3f} | {growth.quantile(0.99):.3f} | "
                f"{max(growth.samples):.3f} | {growth.total_s:.2f} |"
            )
    return lines


def _ours(budget: int = BUDGET) -> Callable[[list[BaseMessage]], object]:
    return ContextBudgetRunnable(max_tokens=budget).invoke


def _uncached() -> Callable[[list[BaseMessage]], object]:
    return lambda messages: fit_messages(messages, max_tokens=BUDGET)


OURS = "`ContextBudgetRunnable` stateless (exact, cached)"
APPROXIMATE = "`trim_messages` (approximate)"
FLOOR = "tiktoken `encode_ordinary` (the turn's new text)"
UNCACHED_MAX = 1_000
"""``fit_messages`` re-bounds every large output on every call (seconds per call at 1k messages): larger sizes are
not run."""

SEPARATE: list[tuple[str, Callable[[int], Cell]]] = [
    ("`fit_messages` (exact, nothing cached)", lambda s: measure(s, _uncached, 3) if s <= UNCACHED_MAX else None),
    ("`trim_messages` (tiktoken, exact)", lambda s: measure(s, lambda: _trim(_exact), PEER_REPEATS)),
]
"""The systems timed on their own; the runnable, approximate trim and the floor are timed in turn (measure_paired)."""


def measure_memory(size: int) -> tuple[int, int]:
    """Bytes the runnable's cache allocates for a ``size``-message list (tracemalloc; messages built before), and
    the characters of text in the list."""
    rng = random.Random(SEED)
    messages, _ = history(size, rng)
    runnable = ContextBudgetRunnable(max_tokens=BUDGET)
    gc.collect()
    tracemalloc.start()
    runnable.invoke(messages)
    gc.collect()
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return held, sum(len(m.text) for m in messages)


def check_same_output(size: int) -> None:
    """The cached runnable returns exactly what the uncached fit returns, call after call (checked, not timed)."""
    rng = random.Random(SEED)
    messages, t = history(size, rng)
    runnable = ContextBudgetRunnable(max_tokens=BUDGET)
    for _ in range(3):
        assert runnable.invoke(messages) == fit_messages(messages, max_tokens=BUDGET)
        messages += make_turn(rng, t)
        t += 1


def _cell(cell: Cell) -> str:
    return "not run" if cell is None else f"{cell[0]:.3f} ({cell[1]})"


def _ratio(cell: Cell, ours: Cell) -> str:
    return "—" if cell is None or ours is None else f"{cell[0] / ours[0]:.0f}x"


Paired = list[tuple[Measured, Measured, Measured]]


def render_windows(sizes: Sequence[int], windows: list[tuple[int, Paired]]) -> list[str]:
    """The paired runnable / approximate trim / floor medians in each window, with the ratios."""
    lines = [
        "",
        "## Three windows, paired",
        "",
        "The runnable, approximate `trim_messages` and the floor (tiktoken encoding only the turn's new text, what",
        "a fit that counts every message pays) timed in turn on the same lists. Approximate trim over the floor is",
        "the most such a fit could be faster than it; the runnable counts only what its fit needs, so where the",
        "history's UTF-8 bytes (an upper bound on its tokens) fit the window, it tokenizes only the large outputs",
        f"(which may need cutting) and can cost less than the floor. {MILLION_WINDOW:,} tokens is the large window",
        f"models offer; {LARGE_WINDOW:,} tokens (no model's) holds the whole history: nothing is dropped, and every",
        "call returns all of it.",
        "",
        "| window | messages | runnable ms | approximate trim ms | floor ms | trim / runnable | trim / floor "
        "(ceiling) | runnable / floor |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for window, cells in windows:
        for size, (ours, trim, floor) in zip(sizes, cells, strict=True):
            lines.append(
                f"| {window:,} | {size:,} | {ours[0]:.3f} | {trim[0]:.3f} | {floor[0]:.3f} | "
                f"{trim[0] / ours[0]:.1f}x | {trim[0] / floor[0]:.1f}x | {ours[0] / floor[0]:.2f} |"
            )
    return lines


def render(
    sizes: Sequence[int],
    rows: list[tuple[str, list[Cell]]],
    memory: tuple[int, int, int],
    windows: list[tuple[int, Paired]],
    growths: tuple[int, list[tuple[int, tuple[Growth, Growth, Growth]]]],
) -> str:
    ours = rows[0][1]
    head = " | ".join(f"{s // 1000}k msgs" if s >= 1000 else f"{s} msgs" for s in sizes)
    lines = [
        "# Stateless `ContextBudgetRunnable` vs `trim_messages` (agent workload)",
        "",
        f"Median ms per call (append one turn, fit the whole list to a {BUDGET:,}-token budget), the calls measured",
        "in brackets; generated by `python -m benchmarks.bench_runnable` on a shared 2-core machine. The runnable's",
        "output was checked equal to `fit_messages` (nothing cached) on the same lists. The runnable and approximate",
        "`trim_messages` are timed back to back on the same lists, call after call (load on the shared machine weighs",
        "on both alike). `fit_messages` bounds every large tool output again on every call: run up to",
        f"{UNCACHED_MAX:,} messages only.",
        "",
        f"| system | {head} | last / first |",
        "|---|" + "---:|" * (len(sizes) + 1),
    ]
    for name, cells in rows:
        first, last = cells[0], cells[-1]
        growth = f"{last[0] / first[0]:.2f}" if first is not None and last is not None else "—"
        lines.append(f"| {name} | " + " | ".join(_cell(c) for c in cells) + f" | {growth} |")
    lines += ["", f"| slower than the cached runnable | {head} |", "|---|" + "---:|" * len(sizes)]
    for name, cells in rows[1:-1]:
        lines.append(f"| {name} | " + " | ".join(_ratio(c, o) for c, o in zip(cells, ours, strict=True)) + " |")
    size, held, chars = memory
    lines += [
        "",
        f"Memory: at {size:,} messages ({chars:,} characters of text) the runnable's cache holds {held:,} bytes, "
        f"{held / size:,.0f} per message (tracemalloc), most of it the bounded head + tail of the large tool outputs.",
    ]
    lines += render_windows(sizes, windows)
    lines += render_growth(*growths)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, print only")
    args = parser.parse_args()
    sizes: Sequence[int] = (200, 600) if args.quick else SIZES
    check_same_output(sizes[0])
    paired = [measure_paired(size, OURS_REPEATS) for size in sizes]
    million = [measure_paired(size, OURS_REPEATS, MILLION_WINDOW) for size in sizes]
    large = [measure_paired(size, OURS_REPEATS, LARGE_WINDOW) for size in sizes]
    grown = 150 if args.quick else GROWTH_SIZE
    growths = [(window, measure_growth(window, grown)) for window in (MILLION_WINDOW, BUDGET)]
    separate: list[tuple[str, list[Cell]]] = [(name, [run(size) for size in sizes]) for name, run in SEPARATE]
    rows: list[tuple[str, list[Cell]]] = [
        (OURS, [pair[0] for pair in paired]),
        *separate,
        (APPROXIMATE, [pair[1] for pair in paired]),
        (FLOOR, [pair[2] for pair in paired]),
    ]
    for name, cells in rows:
        print(f"{name}: {cells}", flush=True)
    held, chars = measure_memory(sizes[-1])
    windows = [(BUDGET, paired), (MILLION_WINDOW, million), (LARGE_WINDOW, large)]
    table = render(sizes, rows, (sizes[-1], held, chars), windows, (grown, growths))
    print(table)
    if not args.quick:
        RESULTS.write_text(table)


if __name__ == "__main__":
    main()
