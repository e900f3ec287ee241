"""Per-turn cost on a realistic agent workload, ctxbudget vs the peers, with and without compaction.

The workload (seeded, :func:`make_turns`): every turn is a user message, an assistant message with 1-2 parallel tool
calls, their tool results (outputs of 100-6,000 words of code/log-like text with paths and numbers; one output in
seven is large, 2,000-6,000 words), then an assistant reply. One turn in 25 leaves a tool call unanswered, one in six
ends with an interrupted reply (a partial text, ``state="interrupted"`` for ctxbudget). History is pre-filled to
1k, 5k and 10k messages, and a measured turn = add the turn's messages + build the next request (one model call per
turn for every system). Medians; the slow peers run fewer turns at the larger sizes (the count is in the notes) and a
turn over :data:`DEADLINE_S` is stopped and reported as a lower bound.

Two windows:

* **no compaction**: a window larger than the whole history (10k messages of this workload are ~6M tokens, more
  than a 1M-token window holds, so the window is :data:`LARGE_WINDOW`; up to ~2.5k messages this is the 1M-token
  case). Nothing is summarized, trimmed or cleared; ctxbudget still bounds an output over 8,000 tokens on arrival
  (its default policy, the original archived), which adds work, never removes it.
* **100k budget**: compaction fires. ctxbudget's default policy (compact at 80%, to 60%); ``trim_messages``,
  ``ChatMemoryBuffer`` and ``Memory`` keep what fits 100k tokens; ``SummarizationMiddleware`` triggers at 80,000
  tokens and keeps the last 60,000 (a fake chat model writes the summary, no network); ``ContextEditingMiddleware``
  clears tool outputs (``ClearToolUsesEdit``) over 80,000 tokens, keeping 3.

The systems, each on its own copy of the workload in its own message types (converted before timing):

* ctxbudget ``ContextSession`` (exact ``o200k_base``): ``session.add(*turn)`` then ``session.build_request()``.
* ``langchain_ctxbudget.ContextBudgetRunnable`` stateless (no session, exact): the whole list each call, as an LCEL
  chain passes it. It tokenizes a message only when the fit needs its count: in the no-compaction window the
  history's UTF-8 bytes (an upper bound on its tokens) stay under the window, so it only bounds the new messages,
  and counts just the outputs that may be over the output limit; it can therefore cost less than the floor.
  ``trim_messages`` (strategy "last", start_on "human", include_system) with an exact tiktoken
  counter (content and tool-call arguments) and with LangChain's ``count_tokens_approximately``.
* LangChain v1 ``SummarizationMiddleware`` / ``ContextEditingMiddleware``: their hooks are called directly
  (``before_model`` with a state dict whose messages grow by the turn and are replaced by the summary update when
  it fires; ``wrap_model_call`` with a ``ModelRequest`` of the whole history and a handler that returns at once),
  as ``benchmarks/bench_langchain.py`` does: this is the per-turn hook cost alone, without LangGraph's checkpointing
  and ``add_messages`` reducer, which every ``create_agent`` middleware pays alike. Both count approximately (their
  default counter).
* LlamaIndex ``ChatMemoryBuffer`` (``put`` each message, ``get()``) and ``Memory`` (``put_messages`` the turn,
  ``get()``), each with the exact offline ``o200k_base`` tokenizer.
* ``tiktoken encode_ordinary``: bare tiktoken encoding only the turn's new text (user, call arguments, outputs,
  reply): the floor any counter pays that counts every message (``ContextSession`` does: its events and state
  report exact usage).

Each system's ratio to the floor divides by the floor timed right after each of that system's own measured turns
(same turn, same text), so a busy spell on the shared machine weighs on both; the floor's own row is its own run.
Approximate ``trim_messages`` is also timed right after each of the runnable's measured turns (same turn, its own
copy of the history), for the paired runnable-vs-trim ratio at the end of the report.

Also measured: adding 1k and 4k messages one by one to a fresh ``ContextSession`` (no request built), and the
memory a ``ContextSession`` holds at 10k messages (tracemalloc; the messages are built before tracing starts, so
the figure is what the session allocates on top of the messages it is given: counts, indexes, archive, bounded
copies).

Run: ``python -m benchmarks.bench_agent`` (writes ``benchmarks/results/agent.md``), then ``python -m
benchmarks.readme_table`` for the README. The peers' exact counters over ~11M tokens cost about 3 minutes of CPU
whatever ctxbudget does; the whole run took 7 minutes of CPU on the core before issue #12 (its O(history) turns,
pre-fill and one-by-one adds), 19 minutes wall on a loaded 2-core machine. ``--quick`` runs tiny sizes and prints
only.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbudget import ContextSession, Message, TiktokenCounter, ToolCall, get_encoding

SIZES = (1_000, 5_000, 10_000)
ADD_SIZES = (1_000, 4_000)
LARGE_WINDOW = 20_000_000
BUDGET = 100_000
SEED = 12
DEADLINE_S = 10.0
"""A turn still running after this many seconds is stopped; the cell reports the lower bound."""
CELL_S = 4.0
"""A peer stops repeating turns at one size once its measured turns add up to this many seconds."""
ADD_CAP_S = 60.0
"""Adding messages one by one stops after this many seconds (the cell then reports the lower bound)."""
PREFILL_TURNS = 10
"""ctxbudget pre-fills a compacting window this many turns per request (one per turn took minutes at 10k messages)."""
MEMORY_TAIL_TURNS = 20
"""LlamaIndex ``Memory`` pre-fills a compacting window by putting only this many last turns (see its ``extend``)."""
OURS_REPEATS = 30
PEER_REPEATS = 10
ENCODING = get_encoding("o200k_base")
RESULTS = Path(__file__).parent / "results" / "agent.md"
SYSTEM_PROMPT = "You are a coding agent. Use the tools to inspect and change the repository; cite paths."
FLOOR_NAME = "tiktoken encode_ordinary (turn's new text: the floor)"
OURS_NAME = "ctxbudget ContextSession (exact)"
RUNNABLE_NAME = "langchain_ctxbudget ContextBudgetRunnable (stateless, exact)"
TRIM_EXACT = "LangChain trim_messages (tiktoken)"
TRIM_APPROX = "LangChain trim_messages (approximate)"

# -- the workload ----------------------------------------------------------------------------------------------

_PACKAGES = ("billing", "auth", "scheduler", "ingest", "search", "reports", "api", "storage", "notify", "cli")
_MODULES = ("handlers", "models", "retry", "client", "cache", "views", "tasks", "utils", "schema", "worker")
_FUNCTIONS = ("process_batch", "load_config", "retry_call", "render", "flush", "connect", "parse_row", "resolve")
_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARNING", "ERROR")
_TOOLS = ("read_file", "run_tests", "grep", "shell", "list_dir")


def _path(rng: random.Random) -> str:
    return f"src/{rng.choice(_PACKAGES)}/{rng.choice(_MODULES)}_{rng.randrange(40)}.py"


def _line(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return (
            f"{_path(rng)}:{rng.randrange(1, 900)}: {rng.choice(_LEVELS)} {rng.choice(_FUNCTIONS)} failed after "
            f"{rng.randrange(1, 6)} retries (status={rng.choice((429, 500, 502, 503))}, "
            f"elapsed={rng.randrange(5, 9000)}ms)"
        )
    if kind == 1:
        return (
            f"    def {rng.choice(_FUNCTIONS)}(self, batch_id: int = {rng.randrange(1000)}, "
            f"timeout: float = {rng.randrange(1, 60)}.{rng.randrange(10)}) -> dict[str, int]:"
        )
    if kind == 2:
        return f'  File "/srv/app/{_path(rng)}", line {rng.randrange(1, 2000)}, in {rng.choice(_FUNCTIONS)}'
    if kind == 3:
        return (
            f"2026-11-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:"
            f"{rng.randrange(60):02d}Z worker-{rng.randrange(16)} processed batch {rng.randrange(10**6)} "
            f"rows={rng.randrange(10**5)} bytes={rng.randrange(10**8)}"
        )
    if kind == 4:
        outcome = "PASSED" if rng.random() < 0.9 else "FAILED"
        return f"tests/test_{rng.choice(_MODULES)}.py::test_{rng.choice(_FUNCTIONS)}[{rng.randrange(64)}] {outcome}"
    return (
        f"        result = self.{rng.choice(_FUNCTIONS)}(payload[{rng.randrange(100)}], "
        f"limit={rng.randrange(10, 5000)})  # see {_path(rng)}"
    )


def tool_output(rng: random.Random, words: int) -> str:
    """Code/log-like text of about ``words`` whitespace-separated words."""
    lines: list[str] = []
    count = 0
    while count < words:
        line = _line(rng)
        lines.append(line)
        count += len(line.split())
    return "\n".join(lines)


@dataclass(frozen=True)
class Turn:
    """One agent turn: its messages in order, and how it ends."""

    index: int
    messages: tuple[Message, ...]
    interrupted: bool
    unanswered: bool
    texts: tuple[str, ...] = field(repr=False)
    """The turn's new text (what a tokenizer must encode): contents and call arguments."""


def make_turn(rng: random.Random, index: int, scale: float = 1.0) -> Turn:
    """One seeded agent turn (see the module docstring for the mix); ``scale`` multiplies the output sizes."""
    path = _path(rng)
    user = Message(
        role="user",
        content=f"Turn {index}: the nightly job fails in {path} with status 503 after retries; find out why, "
        f"fix it and run the {rng.choice(_MODULES)} tests. Keep the public API of {rng.choice(_FUNCTIONS)} stable.",
        id=f"u{index}",
    )
    calls = tuple(
        ToolCall(
            id=f"call_{index}_{k}",
            name=rng.choice(_TOOLS),
            args={"path": _path(rng), "pattern": rng.choice(_FUNCTIONS), "max_lines": rng.randrange(50, 2000)},
        )
        for k in range(rng.choice((1, 2)))
    )
    call_message = Message(role="assistant", content="", tool_calls=calls, id=f"a{index}")
    unanswered = index % 25 == 7 and len(calls) == 2
    results = []
    for call in calls[: 1 if unanswered else len(calls)]:
        large = rng.randrange(7) == 0
        words = rng.randrange(2_000, 6_001) if large else rng.randrange(100, 801)
        results.append(
            Message(
                role="tool",
                tool_call_id=call.id,
                name=call.name,
                content=tool_output(rng, max(1, int(words * scale))),
                id=call.id,
            )
        )
    interrupted = rng.randrange(6) == 0
    reply_text = (
        f"Found it: {path} retries without backoff, so the 503s pile up. I changed retry_call to back off "
        f"exponentially (base {rng.randrange(100, 900)}ms, {rng.randrange(3, 8)} attempts) and updated "
        f"{rng.randrange(2, 9)} call sites; tests/test_{rng.choice(_MODULES)}.py passes "
        f"({rng.randrange(20, 300)} tests). "
    ) * rng.randrange(1, 4)
    if interrupted:
        reply_text = reply_text[: len(reply_text) // 3]
    reply = Message(
        role="assistant", content=reply_text, state="interrupted" if interrupted else "complete", id=f"r{index}"
    )
    messages = (user, call_message, *results, reply)
    texts = (user.text, *(call.args_json() for call in calls), *(m.text for m in results), reply.text)
    return Turn(index, messages, interrupted, unanswered, texts)


def make_turns(count: int, seed: int = SEED, scale: float = 1.0) -> list[Turn]:
    """``count`` seeded turns (``scale`` < 1 shrinks the outputs, for tests)."""
    rng = random.Random(seed)
    return [make_turn(rng, index, scale) for index in range(count)]


def prefix_turns(turns: Sequence[Turn], size: int) -> int:
    """How many leading turns hold at least ``size`` messages."""
    total = 0
    for index, turn in enumerate(turns):
        if total >= size:
            return index
        total += len(turn.messages)
    raise ValueError(f"the workload holds fewer than {size} messages")


# -- timing helpers ----------------------------------------------------------------------------------------------


class Stopped(Exception):
    """A turn ran past its deadline."""


class Deadline:
    """Checked by the exact counters the peers are given: raises :class:`Stopped` once the turn is over time."""

    def __init__(self) -> None:
        self.until = float("inf")

    def arm(self, seconds: float) -> None:
        self.until = time.perf_counter() + seconds

    def disarm(self) -> None:
        self.until = float("inf")

    def check(self) -> None:
        if time.perf_counter() > self.until:
            raise Stopped

    def encode(self, text: str) -> list[int]:
        self.check()
        return ENCODING.encode_ordinary(text)


DEADLINE = Deadline()


class System:
    """A contender: ``extend`` adds turns untimed (pre-fill), ``turn`` is the timed per-turn step."""

    name = ""
    peer: System | None = None
    """A system timed right after each of this one's measured turns, on the same turn (see ``Cell.peer_samples``)."""

    def extend(self, turns: Sequence[Turn]) -> None:
        raise NotImplementedError

    def turn(self, turn: Turn) -> None:
        raise NotImplementedError


@dataclass
class Cell:
    """One system at one size: its per-turn samples (ms), or the lower bound it was stopped at."""

    samples: list[float] = field(default_factory=list)
    stopped_ms: float | None = None
    skipped: bool = False
    by_kind: dict[str, list[float]] = field(default_factory=dict)
    floor_samples: list[float] = field(default_factory=list)
    """The floor (encoding the same turn's new text), timed right after each measured turn: load on the shared
    machine then weighs on a system and its floor alike."""

    peer_samples: list[float] = field(default_factory=list)
    """The system's ``peer``, timed right after each measured turn (after the floor) on the same turn."""

    @property
    def floor(self) -> float | None:
        """Median ms of the floor paired with this cell's turns."""
        return statistics.median(self.floor_samples) if self.floor_samples else None

    @property
    def median(self) -> float | None:
        return None if self.stopped_ms is not None or not self.samples else statistics.median(self.samples)

    def text(self) -> str:
        if self.stopped_ms is not None:
            return f"> {self.stopped_ms:,.0f} (stopped)"
        median = self.median
        return "—" if median is None else f"{median:.3f}"


def encode_new_text(turn: Turn) -> None:
    """The floor: tiktoken encoding only the turn's new text (what a counter pays that counts every message)."""
    for text in turn.texts:
        ENCODING.encode_ordinary(text)


def run_system(
    system: System, turns: Sequence[Turn], sizes: Sequence[int], *, repeats: int, cap_s: float, collect: bool = True
) -> list[Cell]:
    """Grow ``system`` through ``sizes``, timing up to ``repeats`` turns at each (fewer once ``cap_s`` is spent).

    ``collect`` runs a full garbage collection before each size's turns (``False`` in tests: it dominates there).
    """
    cells: list[Cell] = []
    done = 0
    for size in sizes:
        start = prefix_turns(turns, size)
        if cells and (cells[-1].stopped_ms is not None or cells[-1].skipped):
            cells.append(Cell(stopped_ms=cells[-1].stopped_ms, skipped=True))
            continue
        system.extend(turns[done:start])
        if system.peer is not None:
            system.peer.extend(turns[done:start])
        cell = Cell()
        spent = 0.0
        if collect:  # once per cell: a full collection over a 10k-message heap takes longer than most turns
            gc.collect()
        for turn in turns[start : start + repeats]:
            DEADLINE.arm(DEADLINE_S)
            t0 = time.perf_counter()
            try:
                system.turn(turn)
            except Stopped:
                cell.stopped_ms = (time.perf_counter() - t0) * 1000
                break
            finally:
                DEADLINE.disarm()
            elapsed = (time.perf_counter() - t0) * 1000
            cell.samples.append(elapsed)
            t1 = time.perf_counter()
            encode_new_text(turn)  # after the system's turn: the encoder is as warm as the system left it
            cell.floor_samples.append((time.perf_counter() - t1) * 1000)
            if system.peer is not None:
                t2 = time.perf_counter()
                system.peer.turn(turn)
                cell.peer_samples.append((time.perf_counter() - t2) * 1000)
            kind = "interrupted" if turn.interrupted else "complete"
            cell.by_kind.setdefault(kind, []).append(elapsed)
            spent += elapsed / 1000
            if spent > cap_s and len(cell.samples) >= 1:
                break
        done = start + len(cell.samples)
        cells.append(cell)
        print(f"  {system.name} @ {size:,}: {cell.text()} ms ({len(cell.samples)} turns)", flush=True)
    return cells


# -- the systems ---------------------------------------------------------------------------------------------------


class Ours(System):
    name = OURS_NAME

    def __init__(self, window: int) -> None:
        self.session = ContextSession(max_tokens=window, counter=TiktokenCounter(), system_prompt=SYSTEM_PROMPT)
        self.compacting = window < LARGE_WINDOW

    def extend(self, turns: Sequence[Turn]) -> None:
        if self.compacting:  # as an agent runs, a request (and compaction when it fires) every PREFILL_TURNS turns
            for first in range(0, len(turns), PREFILL_TURNS):
                self.session.add(*(m for turn in turns[first : first + PREFILL_TURNS] for m in turn.messages))
                self.session.build_request()
        elif turns:
            self.session.add(*(m for turn in turns for m in turn.messages))
            self.session.build_request()

    def turn(self, turn: Turn) -> None:
        self.session.add(*turn.messages)
        self.session.build_request()


def _langchain(turn: Turn) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    converted: list[Any] = []
    for m in turn.messages:
        if m.role == "user":
            converted.append(HumanMessage(m.text, id=m.id))
        elif m.role == "tool":
            converted.append(ToolMessage(m.text, tool_call_id=m.tool_call_id or "", name=m.name, id=m.id))
        else:
            calls = [{"id": c.id, "name": c.name, "args": c.args, "type": "tool_call"} for c in m.tool_calls]
            converted.append(AIMessage(m.text, tool_calls=calls, id=m.id))
    return converted


class LangChainSide(System):
    """Keeps the turns as LangChain messages (converted once, before timing)."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        from langchain_core.messages import SystemMessage

        self.system = SystemMessage(SYSTEM_PROMPT, id="system")
        self.converted = {turn.index: _langchain(turn) for turn in turns}
        self.history: list[Any] = [self.system]

    def extend(self, turns: Sequence[Turn]) -> None:
        for turn in turns:
            self.history.extend(self.converted[turn.index])


def exact_langchain_count(messages: Sequence[Any]) -> int:
    """Exact o200k tokens of LangChain messages: content, tool-call arguments, 3 per message."""
    total = 3
    for m in messages:
        DEADLINE.check()
        total += 3 + len(ENCODING.encode_ordinary(m.content if isinstance(m.content, str) else str(m.content)))
        for call in getattr(m, "tool_calls", None) or ():
            total += len(ENCODING.encode_ordinary(call["name"] + json.dumps(call["args"])))
    return total


class TrimMessages(LangChainSide):
    def __init__(self, turns: Sequence[Turn], window: int, *, approximate: bool) -> None:
        from langchain_core.messages.utils import count_tokens_approximately

        super().__init__(turns)
        self.name = TRIM_APPROX if approximate else TRIM_EXACT
        self.window = window
        self.counter: Callable[..., int] = count_tokens_approximately if approximate else exact_langchain_count

    def turn(self, turn: Turn) -> None:
        from langchain_core.messages.utils import trim_messages

        self.history.extend(self.converted[turn.index])
        trim_messages(
            self.history,
            max_tokens=self.window,
            token_counter=self.counter,
            strategy="last",
            include_system=True,
            start_on="human",
        )


class Runnable(LangChainSide):
    name = RUNNABLE_NAME

    def __init__(self, turns: Sequence[Turn], window: int) -> None:
        from langchain_ctxbudget import ContextBudgetRunnable

        super().__init__(turns)
        self.runnable = ContextBudgetRunnable(max_tokens=window)
        # Approximate trim_messages on the same turns, timed right after each: the comparison.
        self.peer = TrimMessages(turns, window, approximate=True)

    def extend(self, turns: Sequence[Turn]) -> None:
        super().extend(turns)
        if turns:
            self.runnable.invoke(self.history)  # as a chain would have called it on the previous turn

    def turn(self, turn: Turn) -> None:
        self.history.extend(self.converted[turn.index])
        self.runnable.invoke(self.history)


class Summarization(LangChainSide):
    name = "LangChain SummarizationMiddleware (approximate)"

    def __init__(self, turns: Sequence[Turn], window: int) -> None:
        from langchain.agents.middleware import SummarizationMiddleware
        from langchain_core.language_models.fake_chat_models import FakeListChatModel

        super().__init__(turns)
        summary = "Summary: " + " ".join(f"src/api/handlers_{k}.py retry fixed, tests pass;" for k in range(60))
        model = FakeListChatModel(responses=[summary])
        self.middleware = SummarizationMiddleware(
            model=model, trigger=("tokens", int(window * 0.8)), keep=("tokens", int(window * 0.6))
        )
        self.history = []  # the agent state's messages; the system prompt is the agent's, not in the state

    def _hook(self) -> None:
        update = self.middleware.before_model({"messages": self.history}, None)  # type: ignore[typeddict-item, arg-type]
        if update:  # RemoveMessage(REMOVE_ALL_MESSAGES), then the summary and the kept messages
            self.history = list(update["messages"][1:])

    def extend(self, turns: Sequence[Turn]) -> None:
        super().extend(turns)
        if turns:
            self._hook()

    def turn(self, turn: Turn) -> None:
        self.history.extend(self.converted[turn.index])
        self._hook()


class ContextEditing(LangChainSide):
    name = "LangChain ContextEditingMiddleware (approximate)"

    def __init__(self, turns: Sequence[Turn], window: int) -> None:
        from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware

        from langchain_ctxbudget import StrictFakeChatModel

        super().__init__(turns)
        self.middleware = ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=int(window * 0.8), keep=3)])
        self.model = StrictFakeChatModel(max_input_tokens=10**9)
        self.history = []

    def turn(self, turn: Turn) -> None:
        from langchain.agents.middleware.types import ModelRequest, ModelResponse
        from langchain_core.messages import AIMessage

        self.history.extend(self.converted[turn.index])

        def handler(_: ModelRequest[Any]) -> ModelResponse[Any]:
            return ModelResponse(result=[AIMessage(content="ok")])

        request = ModelRequest(
            model=self.model,
            messages=self.history,
            system_message=self.system,
            tools=[],
            state={"messages": self.history},  # type: ignore[arg-type]
        )
        self.middleware.wrap_model_call(request, handler)


def _llamaindex(turn: Turn) -> list[Any]:
    from llama_index.core.llms import ChatMessage

    converted = []
    for m in turn.messages:
        kwargs: dict[str, Any] = {}
        if m.tool_calls:
            kwargs["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args_json()}}
                for c in m.tool_calls
            ]
        if m.tool_call_id:
            kwargs["tool_call_id"] = m.tool_call_id
        converted.append(ChatMessage(role=m.role, content=m.text, additional_kwargs=kwargs))
    return converted


class ChatMemoryBufferSystem(System):
    name = "LlamaIndex ChatMemoryBuffer (tiktoken)"

    def __init__(self, turns: Sequence[Turn], window: int) -> None:
        from llama_index.core.memory import ChatMemoryBuffer

        self.converted = {turn.index: _llamaindex(turn) for turn in turns}
        self.memory = ChatMemoryBuffer.from_defaults(token_limit=window, tokenizer_fn=DEADLINE.encode)
        self.initial = len(ENCODING.encode_ordinary(SYSTEM_PROMPT))

    def extend(self, turns: Sequence[Turn]) -> None:
        stored = self.memory.get_all()
        self.memory.set([*stored, *(m for turn in turns for m in self.converted[turn.index])])

    def turn(self, turn: Turn) -> None:
        for message in self.converted[turn.index]:
            self.memory.put(message)
        self.memory.get(initial_token_count=self.initial)


class MemorySystem(System):
    name = "LlamaIndex Memory (tiktoken)"

    def __init__(self, turns: Sequence[Turn], window: int) -> None:
        from llama_index.core.memory import Memory

        self.converted = {turn.index: _llamaindex(turn) for turn in turns}
        self.memory = Memory.from_defaults(token_limit=window, tokenizer_fn=DEADLINE.encode)
        self.compacting = window < LARGE_WINDOW

    def extend(self, turns: Sequence[Turn]) -> None:
        if not turns:
            return
        if not self.compacting:
            self.memory.put_messages([m for turn in turns for m in self.converted[turn.index]])
            return
        # put_messages of a long history re-estimates the whole remaining queue per flushed chunk (quadratic: a
        # 4k-message pre-fill ran for minutes), so the older turns are stored as archived directly, the state
        # Memory's own waterfall leaves them in (no memory blocks), and the last turns are put one turn at a time.
        from llama_index.core.async_utils import asyncio_run
        from llama_index.core.storage.chat_store.base_db import MessageStatus

        early = [m for turn in turns[:-MEMORY_TAIL_TURNS] for m in self.converted[turn.index]]
        if early:
            store = self.memory.sql_store
            asyncio_run(store.add_messages(self.memory.session_id, early, status=MessageStatus.ARCHIVED))
        for turn in turns[-MEMORY_TAIL_TURNS:]:
            self.memory.put_messages(self.converted[turn.index])

    def turn(self, turn: Turn) -> None:
        self.memory.put_messages(self.converted[turn.index])
        self.memory.get()


class Floor(System):
    name = FLOOR_NAME

    def extend(self, turns: Sequence[Turn]) -> None:
        pass

    def turn(self, turn: Turn) -> None:
        encode_new_text(turn)


# -- the other measurements -----------------------------------------------------------------------------------


@dataclass
class AddResult:
    """Adding ``size`` messages one by one to a fresh session: seconds, or the count reached within the cap."""

    size: int
    seconds: float
    added: int


def bench_add(turns: Sequence[Turn], sizes: Sequence[int], cap_s: float, runs: int = 3) -> list[AddResult]:
    """Median of ``runs`` fresh sessions per size (one run is at the mercy of a noisy shared machine)."""
    messages = [m for turn in turns for m in turn.messages]
    results = []
    for size in sizes:
        timings: list[tuple[float, int]] = []
        for _ in range(runs):
            session = ContextSession(max_tokens=LARGE_WINDOW, counter=TiktokenCounter(), system_prompt=SYSTEM_PROMPT)
            gc.collect()
            t0 = time.perf_counter()
            added = 0
            for message in messages[:size]:
                session.add(message)
                added += 1
                if added % 100 == 0 and time.perf_counter() - t0 > cap_s:
                    break
            timings.append((time.perf_counter() - t0, added))
            if added < size:
                break  # capped: a slower run will not finish either
        seconds, added = sorted(timings)[len(timings) // 2]
        results.append(AddResult(size, seconds, added))
        print(f"  add {size:,} one by one: {seconds:.2f} s ({added:,} added; median of {len(timings)})", flush=True)
    return results


@dataclass
class MemoryResult:
    messages: int
    session_bytes: int
    message_bytes: int


def bench_memory(turns: Sequence[Turn], size: int) -> MemoryResult:
    gc.collect()
    tracemalloc.start()
    messages = [m for turn in make_turns(len(turns)) for m in turn.messages][:size]
    message_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    gc.collect()
    tracemalloc.start()
    session = ContextSession(max_tokens=LARGE_WINDOW, counter=TiktokenCounter(), system_prompt=SYSTEM_PROMPT)
    session.add(*messages)
    session.build_request()
    gc.collect()
    session_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del session
    return MemoryResult(size, session_bytes, message_bytes)


# -- the report -------------------------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    large: list[Cell]
    budget: list[Cell]


def _growth(cells: Sequence[Cell]) -> str:
    first, last = cells[0].median, cells[-1].median
    return "—" if first is None or last is None or first == 0 else f"{last / first:.2f}"


def _ratio(cell: Cell, floor: Cell) -> str:
    """``cell`` over the floor timed with its own turns (else over the floor's own run)."""
    median, base = cell.median, cell.floor or floor.median
    if cell.stopped_ms is not None and base:
        return f"> {cell.stopped_ms / base:,.0f}x"
    return "—" if median is None or not base else f"{median / base:,.1f}x"


def _times(theirs: Cell, mine: float | None) -> str:
    """How many times ``mine`` (ms) fits in ``theirs``: a lower bound when they were stopped."""
    if theirs.stopped_ms is not None and mine:
        return f"> {theirs.stopped_ms / mine:.2f}x"
    return "—" if theirs.median is None or not mine else f"{theirs.median / mine:.2f}x"


def _size(size: int) -> str:
    return f"{size // 1000}k" if size >= 1000 else str(size)


def _runnable_vs_trim(rows: Sequence[Row], sizes: Sequence[int]) -> list[str]:
    """The report's section on the issue's comparison: the stateless runnable against ``trim_messages``."""
    runnable = next((row for row in rows if row.name == RUNNABLE_NAME), None)
    trims = [row for row in rows if row.name in (TRIM_APPROX, TRIM_EXACT)]
    if runnable is None or not trims:
        return []
    paired = any(cell.peer_samples for cell in (*runnable.large, *runnable.budget))
    columns = [f"{row.name.split(' ', 1)[1]} / runnable" for row in trims]
    columns += ["approximate, paired / runnable"] if paired else []
    lines = [
        "",
        f"## Stateless ContextBudgetRunnable vs trim_messages at {_size(sizes[-1])} messages",
        "",
        "| window | " + " | ".join(columns) + " |",
        "|---|" + "---:|" * len(columns),
    ]
    for label, large in (("no compaction", True), ("100k budget", False)):
        cells = []
        mine_cell = (runnable.large if large else runnable.budget)[-1]
        for row in trims:
            theirs = (row.large if large else row.budget)[-1]
            cells.append(_times(theirs, mine_cell.median))
        if paired:
            peer, mine = mine_cell.peer_samples, mine_cell.median
            cells.append(f"{statistics.median(peer) / mine:.2f}x" if peer and mine else "—")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append(
        "\n(> 1 means the runnable is faster. *Paired*: approximate `trim_messages` timed right after each of the"
        " runnable's measured turns, on the same turn, so load on the shared machine weighs on both alike. It also"
        " means each runnable turn starts with caches as cold as after another chain step walked the list, which"
        " makes its figures in the tables above higher than a loop of runnable calls alone would show.)"
    )
    return lines


def report(
    rows: Sequence[Row],
    sizes: Sequence[int],
    tokens: dict[int, int],
    *,
    adds: Sequence[AddResult],
    memory: MemoryResult | None,
    notes: dict[str, str],
) -> str:
    floor = next(row for row in rows if row.name == FLOOR_NAME)
    heads = " | ".join(f"{_size(s)} msgs" for s in sizes)
    header = (
        f"| per-turn cost (median ms) | no compaction: {heads} | 10k / 1k | 100k budget: {heads} | 10k / 1k |"
    ).replace("10k / 1k", f"{_size(sizes[-1])} / {_size(sizes[0])}")
    lines = [
        "# Per-turn cost on an agent workload: ctxbudget vs peers",
        "",
        "Written by `python -m benchmarks.bench_agent` (workload, systems and method in its docstring). A turn = a "
        "user message, an assistant message with 1-2 parallel tool calls, their outputs (100-6,000 words, one in "
        "seven large), a reply; one turn in 25 leaves a call unanswered, one in six ends with an interrupted reply. "
        "History tokens (o200k): " + ", ".join(f"{tokens[s]:,} at {s:,} messages" for s in sizes) + ".",
        "",
        header,
        "|---|" + "---:|" * (2 * len(sizes) + 2),
    ]
    for row in rows:
        lines.append(
            f"| {row.name} | "
            + " | ".join(c.text() for c in row.large)
            + f" | {_growth(row.large)} | "
            + " | ".join(c.text() for c in row.budget)
            + f" | {_growth(row.budget)} |"
        )
    lines += [
        "",
        "## Each system / the tiktoken floor (same turns)",
        "",
        "Each system's median over the median of the floor timed right after each of its own measured turns (the",
        "same turns, encoding the same text), so a busy spell on the shared machine weighs on both.",
        "",
        f"| system / floor | no compaction: {heads} | 100k budget: {heads} |",
        "|---|" + "---:|" * (2 * len(sizes)),
    ]
    for row in rows:
        if row is floor:
            continue
        lines.append(
            f"| {row.name} | "
            + " | ".join(_ratio(c, f) for c, f in zip(row.large, floor.large, strict=True))
            + " | "
            + " | ".join(_ratio(c, f) for c, f in zip(row.budget, floor.budget, strict=True))
            + " |"
        )
    ours = next(row for row in rows if row.name == OURS_NAME)
    lines += [
        "",
        "## ctxbudget by how the turn ends (median ms, turn count)",
        "",
        f"| ContextSession | no compaction: {heads} | 100k budget: {heads} |",
        "|---|" + "---:|" * (2 * len(sizes)),
    ]
    for kind in ("complete", "interrupted"):
        cells = []
        for cell in [*ours.large, *ours.budget]:
            samples = cell.by_kind.get(kind, [])
            cells.append(f"{statistics.median(samples):.3f} ({len(samples)})" if samples else "—")
        lines.append(
            f"| turn ends with {'an' if kind == 'interrupted' else 'a'} {kind} reply | " + " | ".join(cells) + " |"
        )
    if adds:
        lines += [
            "",
            "## Adding messages one by one to a fresh ContextSession",
            "",
            "Median of three fresh sessions per size. The messages are the workload's, in order, so the later ones"
            " carry their own mix of large outputs (bounded on arrival).",
            "",
            "| messages | seconds | µs per message |",
            "|---:|---:|---:|",
        ]
        for add in adds:
            stopped = f" (stopped at {add.added:,})" if add.added < add.size else ""
            lines.append(f"| {add.size:,} | {add.seconds:.2f}{stopped} | {add.seconds / add.added * 1e6:,.0f} |")
        if len(adds) >= 2 and all(a.added == a.size for a in adds):
            lines.append(
                f"\n{_size(adds[-1].size)} / {_size(adds[0].size)} messages: "
                f"**{adds[-1].seconds / adds[0].seconds:.1f}x** the time for "
                f"{adds[-1].size / adds[0].size:.0f}x the messages."
            )
    if memory is not None:
        lines += [
            "",
            "## Memory held by a ContextSession",
            "",
            f"At {memory.messages:,} messages (no compaction): **{memory.session_bytes / memory.messages:,.0f} "
            f"bytes per message** allocated by the session on top of the messages it was given (tracemalloc, "
            f"messages built before tracing; {memory.session_bytes / 2**20:,.1f} MiB in all). The messages "
            f"themselves: {memory.message_bytes / memory.messages:,.0f} bytes per message "
            f"({memory.message_bytes / 2**20:,.1f} MiB).",
        ]
    lines += _runnable_vs_trim(rows, sizes)
    lines += ["", "## Notes", ""]
    lines += [f"- {name}: {note}" for name, note in notes.items()]
    lines.append(
        f"- Python {'.'.join(map(str, sys.version_info[:3]))}; medians on a shared machine; a turn over "
        f"{DEADLINE_S:.0f} s is stopped (a lower bound; larger sizes are then not run)."
    )
    return "\n".join(lines) + "\n"


def run(sizes: Sequence[int], add_sizes: Sequence[int], *, quick: bool = False) -> str:
    warnings.filterwarnings("ignore")
    ours_repeats = 5 if quick else OURS_REPEATS
    peer_repeats = 2 if quick else PEER_REPEATS
    turns = make_turns(sizes[-1] // 3 + 50)
    count = prefix_turns(turns, sizes[-1]) + ours_repeats + 5
    del turns[count:]
    running, counted, tokens = 0, 0, {}
    for size in sizes:
        upto = prefix_turns(turns, size)
        running += sum(len(ENCODING.encode_ordinary(t)) for turn in turns[counted:upto] for t in turn.texts)
        counted, tokens[size] = upto, running
    print(f"workload: {count:,} turns; history tokens {tokens}", flush=True)
    budget = min(BUDGET, max(4_000, tokens[sizes[0]] // 4)) if quick else BUDGET
    notes: dict[str, str] = {}
    factories: list[tuple[str, Callable[[int], System], int]] = [
        (FLOOR_NAME, lambda w: Floor(), ours_repeats),
        (OURS_NAME, Ours, ours_repeats),
        (RUNNABLE_NAME, lambda w: Runnable(turns, w), ours_repeats),  # cheap, and its paired trim too
        (TRIM_EXACT, lambda w: TrimMessages(turns, w, approximate=False), peer_repeats),
        (TRIM_APPROX, lambda w: TrimMessages(turns, w, approximate=True), peer_repeats),
        ("LangChain SummarizationMiddleware (approximate)", lambda w: Summarization(turns, w), peer_repeats),
        ("LangChain ContextEditingMiddleware (approximate)", lambda w: ContextEditing(turns, w), peer_repeats),
        ("LlamaIndex ChatMemoryBuffer (tiktoken)", lambda w: ChatMemoryBufferSystem(turns, w), peer_repeats),
        ("LlamaIndex Memory (tiktoken)", lambda w: MemorySystem(turns, w), peer_repeats),
    ]
    rows = []
    for name, factory, repeats in factories:
        cap = float("inf") if repeats == ours_repeats else CELL_S
        windows: list[list[Cell]] = []
        for window in (LARGE_WINDOW, budget):
            if name == FLOOR_NAME and windows:  # the floor does not depend on the window
                windows.append(windows[0])
                continue
            print(f"{name}, window {window:,}", flush=True)
            started = time.perf_counter()
            cells = run_system(factory(window), turns, sizes, repeats=repeats, cap_s=cap)
            print(f"  ({time.perf_counter() - started:.1f} s with pre-fill)", flush=True)
            windows.append(cells)
            gc.collect()
        rows.append(Row(name, windows[0], windows[1]))
        counts = [len(c.samples) for c in [*windows[0], *windows[1]]]
        if name != FLOOR_NAME:
            notes[name] = "turns timed per cell (no compaction, then 100k budget): " + ", ".join(map(str, counts))
    adds = bench_add(turns, add_sizes, ADD_CAP_S)
    memory = bench_memory(turns, sizes[-1])
    print(f"  memory: {memory}", flush=True)
    return report(rows, sizes, tokens, adds=adds, memory=memory, notes=notes)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (60/120/240 messages); prints only")
    args = parser.parse_args(argv)
    if args.quick:
        print(run((60, 120, 240), (60, 240), quick=True))
        return 0
    text = run(SIZES, ADD_SIZES)
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
