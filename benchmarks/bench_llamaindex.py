"""Per-turn cost of BudgetedMemory vs LlamaIndex's ChatMemoryBuffer and Memory.

A turn = ``put`` one user message + ``get()`` the history to send, on a memory already holding N messages, with a
window large enough that everything fits (so no one trims or compacts: this measures the bookkeeping itself).
Reports the median over repeats and the ratio to BudgetedMemory. Run: ``python -m benchmarks.bench_llamaindex``.
"""

from __future__ import annotations

import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from llama_index.core.llms import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer, Memory

from llamaindex_ctxbudget import BudgetedMemory

SIZES = (1_000, 5_000, 10_000)
WINDOW = 50_000_000
RESULTS = Path(__file__).parent / "results" / "llamaindex.md"


def _history(n: int) -> list[ChatMessage]:
    words = "the quick brown fox jumps over the lazy dog while the agent reads files and runs commands"
    return [
        ChatMessage(role="user" if i % 2 == 0 else "assistant", content=f"message {i}: {words} {i * 7}")
        for i in range(n)
    ]


def _budgeted(history: list[ChatMessage]) -> BudgetedMemory:
    return BudgetedMemory.from_defaults(chat_history=history, max_tokens=WINDOW)


def _buffer(history: list[ChatMessage]) -> ChatMemoryBuffer:
    return ChatMemoryBuffer.from_defaults(chat_history=history, token_limit=WINDOW)


def _memory(history: list[ChatMessage]) -> Memory:
    return Memory.from_defaults(chat_history=history, token_limit=WINDOW, token_flush_size=1000)


def _per_turn(memory: object, repeats: int) -> float:
    put: Callable[[ChatMessage], None] = memory.put  # type: ignore[attr-defined]
    get: Callable[[], list[ChatMessage]] = memory.get  # type: ignore[attr-defined]
    get()  # warm caches once, as a live conversation would be
    samples = []
    for turn in range(repeats):
        start = time.perf_counter()
        put(ChatMessage(role="user", content=f"new turn {turn}: what changed in the last run?"))
        got = get()
        samples.append(time.perf_counter() - start)
        assert got, "get() returned nothing"
    return statistics.median(samples) * 1000


def run() -> list[tuple[int, float, float, float]]:
    rows = []
    for n in SIZES:
        history = _history(n)
        ours = _per_turn(_budgeted(history), repeats=25)
        buffer = _per_turn(_buffer(history), repeats=25)
        memory = _per_turn(_memory(history), repeats=7 if n >= 5_000 else 11)
        rows.append((n, ours, buffer, memory))
        print(f"  {n:>6,} messages: ours {ours:.2f} ms, ChatMemoryBuffer {buffer:.2f} ms, Memory {memory:.2f} ms")
    return rows


def table(rows: list[tuple[int, float, float, float]]) -> str:
    lines = [
        "| history | BudgetedMemory (ms/turn) | ChatMemoryBuffer (ms/turn) | Memory (ms/turn) "
        "| ChatMemoryBuffer / ours | Memory / ours |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n, ours, buffer, memory in rows:
        lines.append(
            f"| {n:,} | {ours:.2f} | {buffer:.2f} | {memory:.2f} | {buffer / ours:.1f}x | {memory / ours:.1f}x |"
        )
    return "\n".join(lines)


def main() -> None:
    print("per-turn cost (put 1 message + get), median, window large enough that everything fits")
    rows = run()
    body = table(rows)
    print()
    print(body)
    note = (
        "# LlamaIndex memory: per-turn cost\n\n"
        "A turn = `put` one user message + `get()` on a memory already holding N messages (user/assistant, ~20 "
        "words each), window large enough that nothing is trimmed or compacted. Median wall time over 25 turns "
        "(Memory: 7-11, it is slow), warm caches. `ChatMemoryBuffer.get()` re-tokenizes the whole history with the "
        "process-global tokenizer every call; `Memory` (SQLAlchemy in-memory SQLite) re-reads and re-estimates the "
        "whole queue on every `put` and `get`; `BudgetedMemory` counts each message once, on `put`, and builds the "
        "list from cached conversions.\n\n"
        f"Python {platform.python_version()}, {platform.machine()}. Run: "
        "`.venv/bin/python -m benchmarks.bench_llamaindex`.\n\n" + body + "\n"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(note, encoding="utf-8")
    print(f"\nwritten to {RESULTS}")


if __name__ == "__main__":
    main()
