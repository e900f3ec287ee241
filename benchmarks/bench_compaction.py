"""What a compaction event costs, beside the tiktoken floor of the text it evicts.

A compaction reads what it evicts (each message once) to build the summary, counts what it writes, and archives the
originals. Its floor is what any exact compactor pays at the least: tiktoken encoding the evicted text once. This
benchmark grows the agent workload of ``bench_agent`` (a user message, 1-2 parallel tool calls, outputs of 100-6,000
words, one in seven large, a reply) in a :class:`~ctxbudget.ContextSession` with the default policy and offline
summarizer, in windows of 16k, 100k and 1M tokens, and times every ``build_request()`` that compacts. The evicted
text of an event is what left the prompt: every message its receipt names (summarized, truncated, cleared or
bounded) as it stood in the history just before the event (a tool output the first time it is cleared; its marker,
not the output again, when the marker is later summarized). Its floor is encoding that text with the session's own
tiktoken encoding, timed right after the event, in the same process. Ratios are per event; the table gives their
median and worst, with the medians of both times, and the whole run's ratio (all events' time over all floors).

Tables before 2026-12-03 took the archived originals of the receipt's messages as the evicted text: an output
cleared at one event and summarized (as its marker) at a later one was counted at both, which made the floor 2-4x
what left the prompt and the ratios read 2-4x lower than they were.

Tables before 2026-12-03 (second change) stopped after 24, 16 and 8 events: at 100k half of those, at 1M all of
them, were the first events of the run, which only clear tool outputs (no summary exists yet) and cost the least per
character evicted. The table now splits each run: the warm-up (the events before the first summary) and the steady
state (the first event that summarizes and every event after it, summaries of summaries), timed until it holds
:data:`EVENTS` events; the ratios that say what compaction costs are the steady state's.

Also timed: a user message holding a 60,000-letter word (no digit, no space) compacted away, beside its floor.

Run: ``python -m benchmarks.bench_compaction`` (writes ``benchmarks/results/compaction.md``); ``--windows 16000`` and
``--events 3`` for a quicker look.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxbudget import ContextSession, Message
from ctxbudget.messages.encodings import get_encoding

from benchmarks.bench_agent import SEED, make_turn, make_turns

RESULTS = Path(__file__).parent / "results" / "compaction.md"
WINDOWS = (16_000, 100_000, 1_000_000)
EVENTS = {16_000: 24, 100_000: 24, 1_000_000: 12}
"""Steady-state events timed per window (from the first that summarizes): enough to reach summaries of summaries."""
_ENCODING = get_encoding("o200k_base")  # gpt-4o's and gpt-4.1's: what the sessions here count with


@dataclass(frozen=True)
class Event:
    """One compaction event: its time, the floor of what it evicted, and how much that was."""

    seconds: float
    floor: float
    evicted_chars: int
    evicted_messages: int
    tiers: tuple[str, ...]

    @property
    def ratio(self) -> float:
        return self.seconds / self.floor if self.floor else float("inf")


def encode_floor(texts: Sequence[str], repeats: int = 3) -> float:
    """The least time tiktoken takes to encode ``texts`` (best of ``repeats``: the floor, not a noisy sample).

    The encoding itself, not a counter: a session's counter has seen these texts and caches their counts.
    """
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for text in texts:
            _ENCODING.encode_ordinary(text)
        best = min(best, time.perf_counter() - started)
    return best


def evicted_texts(before: dict[str, Message], receipt: Sequence[object]) -> list[str]:
    """The texts (tool-call arguments included) of every message an event's receipt names, as they were ``before``."""
    texts = []
    for item in receipt:
        message = before.get(getattr(item, "message_id", ""))
        if message is not None:
            texts.append(message.text)
            texts.extend(call.args_json() for call in message.tool_calls)
    return texts


def model_for(window: int) -> str:
    """gpt-4o up to its 128k window, gpt-4.1 (the same o200k encoding, a 1,047,576-token window) above it."""
    return "gpt-4o" if window <= 111_616 else "gpt-4.1"


def run_window(window: int, events: int) -> list[Event]:
    """Grow the workload in ``window`` until ``events`` compactions have run from the first that summarized; time each.

    The events before that one (the warm-up: tool outputs cleared, no summary yet) are returned too, first.
    """
    session = ContextSession(model=model_for(window), max_tokens=window)
    found: list[Event] = []
    rng = random.Random(SEED)
    for index in range(100_000):
        turn = make_turn(rng, index)
        session.add(*turn.messages)
        before = {message.id: message for message in session.history}
        started = time.perf_counter()
        request = session.build_request()
        seconds = time.perf_counter() - started
        if request.compaction is None:
            continue
        texts = evicted_texts(before, request.compaction.receipt)
        found.append(
            Event(
                seconds=seconds,
                floor=encode_floor(texts),
                evicted_chars=sum(map(len, texts)),
                evicted_messages=len(request.compaction.receipt),
                tiers=request.compaction.tiers,
            )
        )
        if len(steady(found)) >= events:
            break
    return found


def steady(events: list[Event]) -> list[Event]:
    """The events from the first that summarized (or folded into the summary) on: the run's steady state."""
    first = next((i for i, e in enumerate(events) if {"summarize", "truncate", "extractive"} & set(e.tiers)), None)
    return [] if first is None else events[first:]


def _row(label: str, events: list[Event]) -> str:
    if not events:
        return f"| {label} | 0 | | | | | | | |"
    ratios = [e.ratio for e in events]
    return (
        f"| {label} | {len(events)} | {statistics.median(e.evicted_chars for e in events):,.0f} chars, "
        f"{statistics.median(e.evicted_messages for e in events):.0f} msgs | "
        f"{statistics.median(e.seconds for e in events) * 1000:.1f} | "
        f"{statistics.median(e.floor for e in events) * 1000:.1f} | {statistics.median(ratios):.2f}x | "
        f"{max(ratios):.2f}x | {sum(e.seconds for e in events) / sum(e.floor for e in events):.2f}x | "
        f"{', '.join(sorted({tier for e in events for tier in e.tiers}))} |"
    )


def long_word() -> tuple[float, float]:
    """A user message holding a 60,000-letter word, compacted away: (compaction seconds, floor seconds)."""
    session = ContextSession(model="gpt-4o", max_tokens=16_000)
    word = "a" * 60_000
    session.add(Message(role="user", content=f"Please keep this token: {word} and summarize the rest."))
    for turn in make_turns(6, scale=0.3):
        session.add(*turn.messages)
    started = time.perf_counter()
    session.compact()
    return time.perf_counter() - started, encode_floor([word])


def markdown(rows: dict[int, list[Event]], word: tuple[float, float], elapsed: float) -> str:
    lines = [
        "# What a compaction event costs, beside tiktoken encoding what it evicts",
        "",
        f"Generated by `python -m benchmarks.bench_compaction` (Python {platform.python_version()}, {elapsed:.0f}s). "
        "Each event is one `build_request()` that compacted (default policy, offline summarizer, agent workload of "
        "`bench_agent`); its floor is tiktoken encoding the originals it evicted (best of 3, same run). Times are "
        "medians over the events. Steady state: from the first event that summarizes on (summaries of summaries); "
        "warm-up: the events before it, which only clear tool outputs.",
        "",
        "| window, events | events | evicted per event (median) | compaction (median ms) | floor (median ms) "
        "| ratio median | ratio worst | whole run | tiers |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for window, events in rows.items():
        settled = steady(events)
        lines.append(_row(f"**{window:,}, steady state**", settled))
        lines.append(_row(f"{window:,}, warm-up", events[: len(events) - len(settled)]))
    lines += [
        "",
        f"A user message holding a 60,000-letter word, compacted: {word[0] * 1000:.0f} ms (its encode floor "
        f"{word[1] * 1000:.1f} ms).",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--windows", default=",".join(str(w) for w in WINDOWS))
    parser.add_argument(
        "--events", type=int, help="steady-state events per window (default: 24 at 16k and 100k, 12 at 1M)"
    )
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    _ENCODING.encode_ordinary("warm up the encoding")
    rows = {int(w): run_window(int(w), args.events or EVENTS.get(int(w), 12)) for w in args.windows.split(",")}
    page = markdown(rows, long_word(), time.perf_counter() - started)
    print(page)
    if not args.no_write:
        RESULTS.write_text(page + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
