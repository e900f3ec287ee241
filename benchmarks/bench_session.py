"""Per-turn cost of keeping a conversation inside its budget, ctxbudget vs the peers, on one workload.

A turn = add a user message and an assistant reply, then build the next request. History is pre-filled to 1k, 5k
and 10k messages in a window large enough that nothing is dropped, so what is measured is the accounting itself:
ctxbudget's incremental session against LangChain ``trim_messages`` (exact tiktoken and approximate counters) and
LlamaIndex ``ChatMemoryBuffer`` / ``Memory``, each with an exact offline tiktoken tokenizer. ``tiktoken (turn
text)`` is the time bare tiktoken needs to encode the turn's new text: the floor any exact counter pays.

Run: ``python -m benchmarks.bench_session`` (writes ``benchmarks/results/session.md``).
"""

from __future__ import annotations

import statistics
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxbudget import ContextSession, Message, TiktokenCounter, get_encoding

SIZES = (1_000, 5_000, 10_000)
WINDOW = 10_000_000
ENCODING = get_encoding("o200k_base")
RESULTS = Path(__file__).parent / "results" / "session.md"


def user_text(n: int) -> str:
    return f"Turn {n}: please refactor module_{n}.py so the retry logic is shared; keep the public API stable."


def reply_text(n: int) -> str:
    return f"Done with module_{n}.py: extracted `retry()` into utils, updated 3 call sites, tests pass. " * 2


def median_ms(run_turn: Callable[[Any], None], turns: list[Any]) -> float:
    """Median wall time of ``run_turn`` over pre-built turns (message objects are built outside the timing)."""
    samples = []
    for turn in turns:
        t0 = time.perf_counter()
        run_turn(turn)
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def bench_ctxbudget(size: int, repeats: int) -> float:
    session = ContextSession(max_tokens=WINDOW, counter=TiktokenCounter(), system_prompt="You are helpful.")
    for n in range(size // 2):
        session.add(Message(role="user", content=user_text(n)), Message(role="assistant", content=reply_text(n)))

    def turn(pair: tuple[Message, Message]) -> None:
        session.add(*pair)
        session.build_request()

    pairs = [
        (Message(role="user", content=user_text(n)), Message(role="assistant", content=reply_text(n)))
        for n in range(size, size + repeats)
    ]
    return median_ms(turn, pairs)


def bench_tiktoken_floor(repeats: int) -> float:
    def turn(pair: tuple[str, str]) -> None:
        ENCODING.encode_ordinary(pair[0])
        ENCODING.encode_ordinary(pair[1])

    return median_ms(turn, [(user_text(n), reply_text(n)) for n in range(repeats * 5)])


def bench_trim_messages(size: int, repeats: int, *, approximate: bool) -> float:
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
    from langchain_core.messages.utils import count_tokens_approximately, trim_messages

    def exact(messages: list[BaseMessage]) -> int:
        return sum(3 + len(ENCODING.encode_ordinary(str(m.content))) for m in messages) + 3

    counter: Callable[[list[BaseMessage]], int] = count_tokens_approximately if approximate else exact
    history: list[BaseMessage] = [SystemMessage("You are helpful.")]
    for n in range(size // 2):
        history += [HumanMessage(user_text(n)), AIMessage(reply_text(n))]

    def turn(pair: list[BaseMessage]) -> None:
        history.extend(pair)
        trim_messages(
            history, max_tokens=WINDOW, token_counter=counter, strategy="last", include_system=True, start_on="human"
        )

    return median_ms(
        turn, [[HumanMessage(user_text(n)), AIMessage(reply_text(n))] for n in range(size, size + repeats)]
    )


def bench_llamaindex_memory(size: int, repeats: int, *, kind: str) -> float:
    """``ChatMemoryBuffer`` (``kind="buffer"``) or ``Memory`` (``kind="memory"``): put a turn, then get()."""
    from llama_index.core.llms import ChatMessage
    from llama_index.core.memory import ChatMemoryBuffer, Memory

    def pair(n: int) -> tuple[ChatMessage, ChatMessage]:
        return ChatMessage(role="user", content=user_text(n)), ChatMessage(role="assistant", content=reply_text(n))

    prefill = [m for n in range(size // 2) for m in pair(n)]
    memory: ChatMemoryBuffer | Memory
    if kind == "buffer":
        memory = ChatMemoryBuffer.from_defaults(token_limit=WINDOW, tokenizer_fn=ENCODING.encode_ordinary)
        memory.set(prefill)
    else:
        memory = Memory.from_defaults(token_limit=WINDOW, tokenizer_fn=ENCODING.encode_ordinary)
        memory.put_messages(prefill)

    def turn(messages: tuple[ChatMessage, ChatMessage]) -> None:
        memory.put(messages[0])
        memory.put(messages[1])
        memory.get()

    return median_ms(turn, [pair(n) for n in range(size, size + repeats)])


def main() -> None:
    warnings.filterwarnings("ignore")
    floor = bench_tiktoken_floor(200)
    rows: list[tuple[str, list[float]]] = []
    contenders: list[tuple[str, Callable[[int], float]]] = [
        ("ctxbudget ContextSession (exact)", lambda s: bench_ctxbudget(s, 200)),
        ("LangChain trim_messages (tiktoken)", lambda s: bench_trim_messages(s, 7, approximate=False)),
        ("LangChain trim_messages (approximate)", lambda s: bench_trim_messages(s, 7, approximate=True)),
        ("LlamaIndex ChatMemoryBuffer (tiktoken)", lambda s: bench_llamaindex_memory(s, 7, kind="buffer")),
        ("LlamaIndex Memory (tiktoken)", lambda s: bench_llamaindex_memory(s, 5, kind="memory")),
    ]
    for name, run in contenders:
        rows.append((name, [run(size) for size in SIZES]))
        print(f"{name}: {rows[-1][1]}", flush=True)
    ours = rows[0][1]
    lines = [
        f"tiktoken alone, encoding one turn's new text: **{floor * 1000:.1f} µs** (median)",
        "",
        "| per-turn cost (median ms) | "
        + " | ".join(f"{s // 1000}k msgs" for s in SIZES)
        + " | 10k / 1k | 10k vs ctxbudget |",
        "|---|" + "---:|" * (len(SIZES) + 2),
    ]
    for name, values in rows:
        cells = " | ".join(f"{v:.3f}" for v in values)
        lines.append(f"| {name} | {cells} | {values[-1] / values[0]:.2f} | {values[-1] / ours[-1]:.0f}x |")
    lines += [
        "",
        f"ctxbudget per-turn cost / tiktoken floor: {ours[0] / floor:.2f}x at 1k, {ours[-1] / floor:.2f}x at 10k "
        "(the floor counts the new text only; ctxbudget also builds and validates the request).",
    ]
    table = "\n".join(lines)
    print(table)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("# Per-turn cost: ctxbudget vs peers\n\n" + table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
