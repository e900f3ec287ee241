"""Counting benchmark: ctxbudget's cached counter vs bare tiktoken, and per-turn cost as a session grows.

Run: ``.venv/bin/python -m benchmarks.bench_counting``. Prints a Markdown report and writes it to
``benchmarks/results/counting.md``. Medians over repeats of ``time.perf_counter``; the whole run takes well under a
minute on one core. Everything is offline (the encodings are the bundled ones).
"""

from __future__ import annotations

import platform
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import tiktoken
from ctxbudget.messages import Message
from ctxbudget.messages.encodings import get_encoding
from ctxbudget.messages.tokens import REPLY_PRIMING, TiktokenCounter, count_request

ENCODING = "o200k_base"
SIZES = (1_000, 2_000, 5_000, 10_000)
RESULTS = Path(__file__).parent / "results" / "counting.md"

_TEXT = (
    "the session counts every message before each request so the window never overflows while tools return "
    "long logs grep output stack traces and json payloads naïve café 日本語 テスト 🎉 <|endoftext|> def main(): "
    'return 42 # comment {"key": [1, 2, 3]} https://example.com/path?q=1'
)
_WORDS = tuple(_TEXT.split())


def make_messages(count: int, seed: int) -> list[Message]:
    """``count`` chat messages of 10-80 words, alternating user/assistant, deterministic per seed."""
    rng = random.Random(seed)
    roles = ("user", "assistant")
    return [
        Message(role=roles[i % 2], content=" ".join(rng.choices(_WORDS, k=rng.randint(10, 80))), id=f"m{seed}_{i}")
        for i in range(count)
    ]


def median_seconds(action: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``action`` over ``repeats`` runs."""
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def bare_message_tokens(enc: tiktoken.Encoding, message: Message) -> int:
    """The cookbook formula on bare tiktoken: what a counter without a cache pays per message."""
    return 3 + len(enc.encode_ordinary(message.role)) + len(enc.encode_ordinary(message.text))


def bare_request_tokens(enc: tiktoken.Encoding, history: list[Message]) -> int:
    """Whole history through bare tiktoken: what trim_messages-style counting does every call."""
    return sum(bare_message_tokens(enc, m) for m in history) + REPLY_PRIMING


def throughput_rows(enc: tiktoken.Encoding) -> list[tuple[str, float]]:
    """Tokens per second for bare tiktoken and for the counter, cold (fresh cache) and warm (all cached)."""
    messages = make_messages(2_000, seed=1)
    texts = [m.text for m in messages]
    tokens = sum(len(enc.encode_ordinary(t)) for t in texts)
    warm = TiktokenCounter(ENCODING)
    for m in messages:
        warm.count_message(m)

    def cold_texts() -> list[int]:
        fresh = TiktokenCounter(ENCODING)
        return [fresh.count_text(t) for t in texts]

    def cold_messages() -> list[int]:
        fresh = TiktokenCounter(ENCODING)
        return [fresh.count_message(m) for m in messages]

    cases: list[tuple[str, Callable[[], object]]] = [
        ("bare tiktoken `encode_ordinary`", lambda: [enc.encode_ordinary(t) for t in texts]),
        (
            "bare tiktoken `encode(disallowed_special=())`",
            lambda: [enc.encode(t, disallowed_special=()) for t in texts],
        ),
        ("`TiktokenCounter.count_text`, cold cache", cold_texts),
        ("`TiktokenCounter.count_text`, warm cache", lambda: [warm.count_text(t) for t in texts]),
        ("`TiktokenCounter.count_message`, cold cache", cold_messages),
        ("`TiktokenCounter.count_message`, warm cache", lambda: [warm.count_message(m) for m in messages]),
    ]
    return [(label, tokens / median_seconds(action, repeats=5)) for label, action in cases]


def growth_rows(enc: tiktoken.Encoding) -> list[tuple[int, float, float, float]]:
    """Per-turn cost at each history size: (size, running total, cached full recount, bare full recount), in ms.

    A turn adds 2 new messages. "Running total" counts only those two and adds them to the session's total;
    "cached recount" re-counts the whole history through the cached counter (every old message is a cache hit);
    "bare recount" re-counts the whole history with bare tiktoken.
    """
    history = make_messages(max(SIZES), seed=2)
    counter = TiktokenCounter(ENCODING)
    for m in history:  # the session counted each message once as it arrived
        counter.count_message(m)
    return [_turn_timings(size, history[:size], counter, enc) for size in SIZES]


def _turn_timings(
    size: int, base: list[Message], counter: TiktokenCounter, enc: tiktoken.Encoding
) -> tuple[int, float, float, float]:
    turns = iter(make_messages(2 * 200, seed=size))
    running_total = count_request(counter, base)

    def running_turn() -> int:
        new = [next(turns), next(turns)]
        return running_total + sum(counter.count_message(m) for m in new)

    def cached_turn() -> int:
        return count_request(counter, [*base, next(turns), next(turns)])

    def bare_turn() -> int:
        return bare_request_tokens(enc, [*base, next(turns), next(turns)])

    return (
        size,
        median_seconds(running_turn, repeats=101) * 1e3,
        median_seconds(cached_turn, repeats=31) * 1e3,
        median_seconds(bare_turn, repeats=7) * 1e3,
    )


def report() -> str:
    """Run both benchmarks and return the Markdown report."""
    enc = get_encoding(ENCODING)
    lines = [
        "# Counting benchmark",
        "",
        f"Python {platform.python_version()}, tiktoken {tiktoken.__version__}, `{ENCODING}`, "
        f"{platform.machine()}; medians of `time.perf_counter`.",
        "",
        "## Throughput (2,000 messages of 10-80 words)",
        "",
        "| counter | tokens / s |",
        "|---|---:|",
    ]
    lines += [f"| {label} | {rate:,.0f} |" for label, rate in throughput_rows(enc)]
    growth = growth_rows(enc)
    first = growth[0]
    lines += [
        "",
        "## Per-turn cost as a session grows (each turn adds 2 messages)",
        "",
        "| history | running total (ms) | x 1k | cached full recount (ms) | x 1k "
        "| bare tiktoken full recount (ms) | x 1k |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, running, cached, bare in growth:
        lines.append(
            f"| {size:,} | {running:.3f} | {running / first[1]:.1f} | {cached:.2f} | {cached / first[2]:.1f} "
            f"| {bare:.1f} | {bare / first[3]:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print the report and write it to ``benchmarks/results/counting.md``."""
    start = time.perf_counter()
    text = report()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)
    print(f"(total run {time.perf_counter() - start:.1f} s; written to {RESULTS})")


if __name__ == "__main__":
    main()
