"""The LangChain adapter inside LangChain's objects, on the agent workload: per invoke, per model call, per chain call.

Workload (seeded): every turn is a user message, an assistant message with 1-2 parallel tool calls, their results
(100-600 words of log-like text with paths and figures; one output in seven is large, 2,000-6,000 words) and an
assistant reply. The model is a fast scripted fake (no token counting, no network), the same for every system, so
what differs between rows is the middleware and the checkpointer.

* **Agents** (``create_agent``, one thread, a checkpointer): no middleware; ``ContextBudgetMiddleware`` with a
  100,000-token budget (compaction firing: the archive goes to its store, the state keeps the live window and a
  reference), with its default policy (compacts to 60,000 tokens, clearing old tool results before summarizing,
  so the state keeps hundreds of short messages) and compacting to 20,000 tokens (about what the 20 messages
  SummarizationMiddleware keeps hold here); LangChain's ``SummarizationMiddleware`` (trigger at 80,000
  approximate tokens, keeps 20 messages, a fake summarizer model); ``ContextEditingMiddleware``
  (``ClearToolUsesEdit`` at 100,000 tokens: edits the request only, so the state keeps everything). Each with
  ``InMemorySaver`` and with ``SqliteSaver`` (a file). The thread is pre-filled to 1k / 5k / 10k messages
  (``update_state`` with the workload's own turns: what an agent without compaction would hold; a compacting
  system compacts it at its first invoke, reported apart), then each measured
  invoke runs one turn (two model calls and the tool calls). Checkpoint bytes per turn: what the saver stored
  during the invoke (InMemorySaver: the blobs and checkpoints it added; SqliteSaver: the rows' bytes).
* **Our share of a default-policy invoke**: ``ContextBudgetMiddleware`` (100,000-token budget, default policy) with
  its hooks' own CPU time summed (model and tool time left out), then an agent with no middleware whose state holds
  the very messages ours ended with, and what LangGraph's serializer takes to load and to store that list.
* **Per model call, nothing compacted**: ``ContextBudgetMiddleware`` with a window holding the whole history, its
  hook timed inside the agent (``wrap_model_call`` without the model's own time; it also writes the state update),
  against the floor: tiktoken ``encode_ordinary`` of the text added since the previous model call (what any exact
  counter pays), timed in the same call.
* **Inside a chain**: ``ChatPromptTemplate(system, MessagesPlaceholder) | ContextBudgetRunnable(max_tokens=100_000)``
  against ``prompt | trim_messages`` (approximate counter, ``strategy="last"``, ``start_on="human"``,
  ``include_system=True``): the chain per call (append one turn, invoke), and the step alone (chain minus the
  prompt, timed in turn on the same lists).

Medians (agents and model calls in CPU time, chains in wall time: see the notes the results end with); every
system in one run, in turn. Run: ``.venv/bin/python -m benchmarks.bench_langchain`` (writes
``benchmarks/results/langchain.md``; about 15 minutes on a shared 2-core machine); ``--quick`` runs small sizes and
prints only; ``--only calls`` (or ``share``) runs that section alone and replaces it in the results.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import timeit
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbudget import CompactionPolicy, get_encoding
from langchain.agents import create_agent
from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware, SummarizationMiddleware
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langchain_ctxbudget import ContextBudgetMiddleware, ContextBudgetRunnable

SIZES = (1_000, 5_000, 10_000)
BUDGET = 100_000
HUGE = 50_000_000
"""A window holding the whole 10k-message history (about 9M tokens): nothing is compacted."""
REPEATS = 20
SEED = 13
ENCODING = get_encoding("o200k_base")
RESULTS = Path(__file__).parent / "results" / "langchain.md"
SYSTEM = "You are a coding agent. Use the tools; cite paths."


# -- the workload ------------------------------------------------------------------------------------------------
def _output(seed: str) -> str:
    rng = random.Random(seed)
    words = rng.randint(2_000, 6_000) if rng.randrange(7) == 0 else rng.randint(100, 600)
    lines: list[str] = []
    count = 0
    while count < words:
        n = rng.randrange(10_000)
        lines.append(f"{seed} src/pkg/module_{n % 97}.py:{n} value={n * 7 % 1013} status=ok elapsed={n % 53}ms")
        count += 6
    return "\n".join(lines)


@tool
def grep(pattern: str, path: str) -> str:
    """Search files under ``path`` for ``pattern``."""
    return _output(f"{pattern}@{path}")


def _calls(t: int) -> list[dict[str, Any]]:
    n = random.Random(f"calls-{t}").randint(1, 2)
    return [
        {"id": f"call_{t}_{i}", "name": "grep", "args": {"pattern": f"retry_{t}", "path": f"src/m{t}_{i}"}}
        for i in range(n)
    ]


def _question(t: int) -> str:
    return f"Step {t}: find where retry_{t} is configured and fix module_{t}.py"


def _reply(t: int) -> str:
    return f"module_{t}.py: retry_{t} now reads the shared policy; 3 call sites updated."


def turn_messages(t: int) -> list[BaseMessage]:
    """Turn ``t`` as an agent without compaction holds it."""
    calls = _calls(t)
    out: list[BaseMessage] = [HumanMessage(_question(t), id=f"h{t}"), AIMessage("", tool_calls=calls, id=f"a{t}")]
    out += [
        ToolMessage(_output(f"{c['args']['pattern']}@{c['args']['path']}"), tool_call_id=c["id"], name="grep")
        for c in calls
    ]
    out.append(AIMessage(_reply(t), id=f"f{t}"))
    return out


def history(size: int) -> tuple[list[BaseMessage], int]:
    """At least ``size`` messages of whole turns, and the next turn's number."""
    messages: list[BaseMessage] = []
    t = 0
    while len(messages) < size:
        messages += turn_messages(t)
        t += 1
    return messages, t


class BenchModel(BaseChatModel):
    """The agent's model: after a user turn it calls ``grep`` (1-2 parallel calls), after the results it replies."""

    @property
    def _llm_type(self) -> str:
        return "bench-agent"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        """Tools are known to the script; binding changes nothing."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        last = messages[-1]
        question = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
        t = int(question.text.split(":", 1)[0].rsplit(" ", 1)[-1])
        reply = AIMessage(_reply(t)) if isinstance(last, ToolMessage) else AIMessage("", tool_calls=_calls(t))
        return ChatResult(generations=[ChatGeneration(message=reply)])


class SummaryModel(BaseChatModel):
    """SummarizationMiddleware's summarizer: a fixed short summary."""

    @property
    def _llm_type(self) -> str:
        return "bench-summary"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = "Summary: retry settings moved to the shared policy in the modules handled so far."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


def _settle_gc() -> None:
    """Collect, then freeze what exists: the prefilled history is not rescanned by every later collection.

    Without it a full collection over a 10k-message heap lands on a random call now and then (tens of ms), whichever
    system happens to be running.
    """
    gc.collect()
    gc.freeze()


# -- checkpointers -------------------------------------------------------------------------------------------------
class Saver:
    """A checkpointer and a measure of the bytes it has stored."""

    def __init__(self, kind: str, folder: Path) -> None:
        self.kind = kind
        if kind == "InMemorySaver":
            self.saver: Any = InMemorySaver()
        else:
            self._path = folder / f"checkpoints-{time.monotonic_ns()}.sqlite"
            self._conn = sqlite3.connect(self._path, check_same_thread=False)
            self.saver = SqliteSaver(self._conn)

    def stored(self) -> int:
        """Bytes of checkpoints, blobs and writes held."""
        if self.kind == "InMemorySaver":
            saver = self.saver
            blobs = sum(len(v[1]) for v in saver.blobs.values())
            checkpoints = sum(
                len(c[0][1]) + len(c[1][1])
                for ns in saver.storage.values()
                for per in ns.values()
                for c in per.values()
            )
            writes = sum(len(w[2][1]) for per in saver.writes.values() for w in per.values())
            return blobs + checkpoints + writes
        cursor = self._conn.execute(
            "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints)"
            " + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes)"
        )
        return int(cursor.fetchone()[0])

    def close(self) -> None:
        if self.kind != "InMemorySaver":
            self._conn.close()
            self._path.unlink(missing_ok=True)


# -- agents --------------------------------------------------------------------------------------------------------
def _middleware(system: str) -> list[Any]:
    if system == "none":
        return []
    if system == "ctxbudget":
        return [ContextBudgetMiddleware(max_tokens=BUDGET)]
    if system == MATCHED:
        return [ContextBudgetMiddleware(max_tokens=BUDGET, policy=CompactionPolicy(target=0.2))]
    if system == "ctxbudget (nothing compacted)":
        return [ContextBudgetMiddleware(max_tokens=HUGE)]
    if system == "SummarizationMiddleware":
        return [SummarizationMiddleware(model=SummaryModel(), trigger=("tokens", 80_000), keep=("messages", 20))]
    return [ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=BUDGET)])]


MATCHED = "ctxbudget, target 0.2"
"""Compacts to 20,000 tokens, about what SummarizationMiddleware's 20 kept messages hold on this workload."""
AGENT_SYSTEMS = ("none", "ctxbudget", MATCHED, "SummarizationMiddleware", "ContextEditingMiddleware")
SAVERS = ("InMemorySaver", "SqliteSaver")


@dataclass
class AgentCell:
    first_ms: float
    median_ms: float
    mean_ms: float
    bytes_per_turn: float
    state_messages: int


def run_agent(system: str, saver_kind: str, size: int, repeats: int, folder: Path) -> AgentCell:
    """Pre-fill a thread to ``size`` messages, then time ``repeats`` invokes of one turn each."""
    saver = Saver(saver_kind, folder)
    try:
        agent = create_agent(
            BenchModel(), tools=[grep], middleware=_middleware(system), system_prompt=SYSTEM, checkpointer=saver.saver
        )
        config: dict[str, Any] = {"configurable": {"thread_id": f"bench-{size}"}}
        messages, t = history(size)
        agent.update_state(config, {"messages": messages})
        del messages
        gc.collect()
        start = time.process_time()
        agent.invoke({"messages": [HumanMessage(_question(t))]}, config)
        first = (time.process_time() - start) * 1000
        _settle_gc()
        samples: list[float] = []
        sizes: list[int] = []
        for r in range(repeats):
            before = saver.stored()
            start = time.process_time()
            agent.invoke({"messages": [HumanMessage(_question(t + 1 + r))]}, config)
            samples.append((time.process_time() - start) * 1000)
            sizes.append(saver.stored() - before)
        held = len(agent.get_state(config).values["messages"])
        return AgentCell(first, statistics.median(samples), statistics.mean(samples), statistics.median(sizes), held)
    finally:
        saver.close()
        gc.unfreeze()


# -- where a default-policy invoke goes ------------------------------------------------------------------------------
class HookTimed(ContextBudgetMiddleware):
    """Our middleware with its hooks' own CPU time summed (the model's and the tools' own time left out)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spent = 0.0

    def _around(self, hook: Callable[[Any, Any], Any], request: Any, handler: Callable[[Any], Any]) -> Any:
        held: list[float] = []

        def timed(inner: Any) -> Any:
            start = time.thread_time()
            try:
                return handler(inner)
            finally:
                held.append(time.thread_time() - start)

        start = time.thread_time()
        try:
            return hook(request, timed)
        finally:
            self.spent += time.thread_time() - start - sum(held)

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._around(super().wrap_model_call, request, handler)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._around(super().wrap_tool_call, request, handler)

    def after_agent(self, state: Any, runtime: Any) -> Any:
        start = time.thread_time()
        try:
            return super().after_agent(state, runtime)
        finally:
            self.spent += time.thread_time() - start


@dataclass
class ShareCell:
    messages: int
    ours_ms: float
    compacted: int
    quiet_ms: float
    hooks_ms: float
    plain_ms: float
    loads_ms: float
    dumps_ms: float


def _timed_invoke(agent: Any, config: dict[str, Any], t: int) -> float:
    """One invoke of turn ``t`` (process CPU, ms)."""
    start = time.process_time()
    agent.invoke({"messages": [HumanMessage(_question(t))]}, config)
    return (time.process_time() - start) * 1000


def run_share(size: int, repeats: int) -> ShareCell:
    """Our default-policy agent and its hooks, in turn with an agent without middleware holding the messages ours holds.

    The plain agent starts from our state's messages after our first (compacting) invoke; the two then alternate
    invoke by invoke (which goes first alternates too), so the machine's drift moves both alike.
    """
    hooks = HookTimed(max_tokens=BUDGET)
    saver = InMemorySaver()
    agent = create_agent(BenchModel(), tools=[grep], middleware=[hooks], system_prompt=SYSTEM, checkpointer=saver)
    config: dict[str, Any] = {"configurable": {"thread_id": f"share-{size}"}}
    messages, t = history(size)
    agent.update_state(config, {"messages": messages})
    agent.invoke({"messages": [HumanMessage(_question(t))]}, config)
    session = hooks.session(f"share-{size}")
    assert session is not None
    compactions: list[object] = []
    session.events.subscribe(compactions.append, "context_compacted")
    plain = create_agent(BenchModel(), tools=[grep], system_prompt=SYSTEM, checkpointer=InMemorySaver())
    plain.update_state(config, {"messages": list(agent.get_state(config).values["messages"])})
    plain.invoke({"messages": [HumanMessage(_question(t + 1))]}, config)
    ours: list[tuple[float, float, bool]] = []  # each invoke's CPU, its hooks' own and whether it compacted
    alone: list[float] = []
    _settle_gc()
    try:
        for r in range(repeats):
            hooks.spent, before = 0.0, len(compactions)
            if r % 2:
                alone.append(_timed_invoke(plain, config, t + 2 + r))
            ours.append((_timed_invoke(agent, config, t + 2 + r), hooks.spent * 1000, len(compactions) > before))
            if not r % 2:
                alone.append(_timed_invoke(plain, config, t + 2 + r))
    finally:
        gc.unfreeze()
    held = list(agent.get_state(config).values["messages"])
    serde, blob = saver.serde, saver.serde.dumps_typed(held)
    loads = min(timeit.repeat(lambda: serde.loads_typed(blob), number=5, repeat=5)) / 5 * 1000
    dumps = min(timeit.repeat(lambda: serde.dumps_typed(held), number=5, repeat=5)) / 5 * 1000
    quiet = [turn for turn in ours if not turn[2]]
    median = statistics.median
    return ShareCell(
        messages=len(held),
        ours_ms=median(turn[0] for turn in ours),
        compacted=len(ours) - len(quiet),
        quiet_ms=median(turn[0] for turn in quiet),
        hooks_ms=median(turn[1] for turn in quiet),
        plain_ms=median(alone),
        loads_ms=loads,
        dumps_ms=dumps,
    )


# -- per model call, nothing compacted -------------------------------------------------------------------------------
class TimedMiddleware(ContextBudgetMiddleware):
    """Our middleware with its hooks timed (the model call excluded) and the floor of each call's new text."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls: list[float] = []
        self.floors: list[float] = []
        self._seen = 0

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        held: list[float] = []

        def timed_handler(inner: Any) -> Any:
            start = time.thread_time()
            try:
                return handler(inner)
            finally:
                held.append(time.thread_time() - start)

        new = request.messages[self._seen :]
        # Alternate which runs first, turn by turn (a turn makes two calls): each kind of call is timed both ways,
        # so neither side always gets the machine warmed by the other (the first to encode pays for a cold cache).
        floor_first = (len(self.calls) // 2) % 2 == 0
        floor = self._floor(new) if floor_first else 0.0
        start = time.thread_time()
        result = super().wrap_model_call(request, timed_handler)
        spent = time.thread_time() - start - sum(held)
        self._seen = len(request.messages)  # the reply is new at the next call: we count it, so does the floor
        self.floors.append(floor if floor_first else self._floor(new))
        self.calls.append(spent * 1000)
        return result

    @staticmethod
    def _floor(new: Sequence[BaseMessage]) -> float:
        start = time.thread_time()
        for message in new:  # every text the request sends: content, name, ids, each call's id, name and arguments
            ENCODING.encode_ordinary(message.text)
            for text in (message.name, getattr(message, "tool_call_id", None)):
                if text:
                    ENCODING.encode_ordinary(text)
            for call in getattr(message, "tool_calls", None) or ():
                ENCODING.encode_ordinary(call["id"] or "")
                ENCODING.encode_ordinary(call["name"])
                ENCODING.encode_ordinary(json.dumps(call["args"]))
        return (time.thread_time() - start) * 1000


@dataclass
class CallCell:
    ours_ms: float
    floor_ms: float
    turn_ratio: float
    call_ratio: float


def run_calls(size: int, repeats: int) -> CallCell:
    """Our hooks per model call with nothing to compact, and the floor, on a thread pre-filled to ``size``."""
    # Nothing compacted and nothing bounded: the window holds the history, the output limit the largest output.
    middleware = TimedMiddleware(max_tokens=HUGE, policy=CompactionPolicy(max_tool_output_tokens=HUGE))
    agent = create_agent(
        BenchModel(), tools=[grep], middleware=[middleware], system_prompt=SYSTEM, checkpointer=InMemorySaver()
    )
    config: dict[str, Any] = {"configurable": {"thread_id": f"calls-{size}"}}
    messages, t = history(size)
    agent.update_state(config, {"messages": messages})
    agent.invoke({"messages": [HumanMessage(_question(t))]}, config)  # the first call converts the history once
    _settle_gc()
    middleware.calls.clear()
    middleware.floors.clear()
    for r in range(repeats):
        agent.invoke({"messages": [HumanMessage(_question(t + 1 + r))]}, config)
    calls, floors = middleware.calls, middleware.floors
    turns = [(calls[i] + calls[i + 1], floors[i] + floors[i + 1]) for i in range(0, len(calls) - 1, 2)]
    return CallCell(
        ours_ms=statistics.median(calls),
        floor_ms=statistics.median(floors),
        turn_ratio=statistics.median(ours / floor for ours, floor in turns),
        call_ratio=sum(calls) / sum(floors),
    )


# -- inside a chain --------------------------------------------------------------------------------------------------
PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), MessagesPlaceholder("history")])


def _trim() -> Runnable[Any, Any]:
    return trim_messages(
        max_tokens=BUDGET,
        token_counter=count_tokens_approximately,
        strategy="last",
        start_on="human",
        include_system=True,
    )


@dataclass
class ChainCell:
    samples: dict[str, list[float]] = field(default_factory=dict)

    def median(self, name: str) -> float:
        return statistics.median(self.samples[name])


def _timed_step(step: Runnable[Any, Any], into: list[float]) -> Runnable[Any, Any]:
    """``step`` with its ``invoke`` timed (what the chain spends in this step, its own run included)."""
    inner = step.invoke

    def invoke(value: Any, config: Any = None, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(value, config, **kwargs)
        finally:
            into.append((time.perf_counter() - start) * 1000)

    step.invoke = invoke  # type: ignore[method-assign]  # an instance attribute: only this step is timed
    return step


def run_chain(size: int, repeats: int) -> ChainCell:
    """``prompt | runnable`` and ``prompt | trim_messages``, whole and step alone, timed in turn on the same lists."""
    messages, t = history(size)
    cell = ChainCell({name: [] for name in CHAIN_ROWS})
    ours = _timed_step(ContextBudgetRunnable(max_tokens=BUDGET), cell.samples["ContextBudgetRunnable step"])
    trim = _timed_step(_trim(), cell.samples["trim_messages step"])
    chains: dict[str, Runnable[Any, Any]] = {
        "prompt | ContextBudgetRunnable": PROMPT | ours,
        "prompt | trim_messages (approximate)": PROMPT | trim,
    }
    for _ in range(3):  # warm: the runnable's first call converts the history once
        messages += turn_messages(t)
        t += 1
        for chain in chains.values():
            chain.invoke({"history": messages})
    _settle_gc()
    for samples in cell.samples.values():
        samples.clear()
    for _ in range(repeats):
        turn = turn_messages(t)
        messages += turn
        t += 1
        for name, chain in chains.items():
            start = time.perf_counter()
            chain.invoke({"history": messages})
            cell.samples[name].append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        for message in turn:  # the floor: tiktoken over the turn's new text
            ENCODING.encode_ordinary(message.text)
        cell.samples["floor"].append((time.perf_counter() - start) * 1000)
    return cell


CHAIN_ROWS = (
    "prompt | ContextBudgetRunnable",
    "prompt | trim_messages (approximate)",
    "ContextBudgetRunnable step",
    "trim_messages step",
    "floor",
)


# -- rendering -------------------------------------------------------------------------------------------------------
def _size(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else f"{n:,}"


def _flat(values: Sequence[float]) -> str:
    return f"{values[-1] / values[0]:.2f}" if values[0] else "—"


def render_share(sizes: Sequence[int], shares: Sequence[ShareCell]) -> list[str]:
    """The lines of the default-policy breakdown section."""
    head = " | ".join(f"{_size(n)} msgs" for n in sizes)
    rule = "|".join("---:" for _ in sizes)

    def row(label: str, values: Sequence[float], form: str = "{:.1f}") -> str:
        return f"| {label} | {' | '.join(form.format(v) for v in values)} |"

    return [
        SHARE_HEADING,
        "",
        "Our middleware with its default policy (compacts at 80% of the 100,000-token window to 60%, clearing old tool "
        "results first, so its state keeps hundreds of short messages), in turn with the same agent with no middleware "
        "at all whose state started from ours after its first invoke (it grows by a turn per invoke). LangGraph loads "
        "the state's messages once per invoke and stores the whole list at every checkpoint (one per graph step).",
        "",
        f"| measure | {head} |",
        f"|---|{rule}|",
        row("messages in ctxbudget's state", [c.messages for c in shares], "{:,}"),
        row("invokes that compacted, of those timed", [c.compacted for c in shares], "{:d}"),
        row("ctxbudget, median ms per invoke", [c.ours_ms for c in shares]),
        row("ctxbudget, invokes that compacted nothing, median ms", [c.quiet_ms for c in shares]),
        row("its hooks' own CPU in those invokes, median ms", [c.hooks_ms for c in shares], "{:.2f}"),
        row("no middleware, state started from ours, median ms per invoke", [c.plain_ms for c in shares]),
        row("LangGraph loading those messages (once per invoke), ms", [c.loads_ms for c in shares], "{:.2f}"),
        row("LangGraph storing them (at each checkpoint), ms", [c.dumps_ms for c in shares], "{:.2f}"),
        "",
    ]


def render(
    sizes: Sequence[int],
    agents: dict[tuple[str, str], list[AgentCell]],
    calls: list[CallCell],
    chains: list[ChainCell],
    shares: Sequence[ShareCell] = (),
) -> str:
    head = " | ".join(f"{_size(n)} msgs" for n in sizes)
    rule = "|".join("---:" for _ in sizes)
    out = [
        "## Agents: per invoke (one turn: two model calls and their tool calls)",
        "",
        f"| system | checkpointer | {head} | last / first "
        f"| checkpoint bytes per turn ({', '.join(_size(n) for n in sizes)}) "
        "| messages in the state | first invoke ms |",
        f"|---|---|{rule}|---:|---|---|---|",
    ]
    for (system, saver), cells in agents.items():
        medians = [c.median_ms for c in cells]
        row = " | ".join(f"{m:.1f}" for m in medians)
        stored = ", ".join(f"{c.bytes_per_turn / 1024:,.0f} KiB" for c in cells)
        held = ", ".join(f"{c.state_messages:,}" for c in cells)
        first = ", ".join(f"{c.first_ms:,.0f}" for c in cells)
        out.append(f"| {system} | {saver} | {row} | {_flat(medians)} | {stored} | {held} | {first} |")
    out += [
        "",
        "| ours / SummarizationMiddleware: median (mean, compactions included) | checkpointer | " + head + " |",
        f"|---|---|{rule}|",
    ]
    for system in ("ctxbudget", MATCHED):
        for saver in SAVERS:
            ours = agents.get((system, saver))
            theirs = agents.get(("SummarizationMiddleware", saver))
            if ours and theirs:
                ratios = " | ".join(
                    f"{a.median_ms / b.median_ms:.2f}x ({a.mean_ms / b.mean_ms:.2f}x)"
                    for a, b in zip(ours, theirs, strict=True)
                )
                out.append(f"| {system} / SummarizationMiddleware | {saver} | {ratios} |")
    out.append("")
    if shares:
        out += render_share(sizes, shares)
    out += [
        "## Per model call, nothing compacted (window of 50M tokens, InMemorySaver)",
        "",
        "Our hooks and the floor are timed in the same call, alternating which runs first turn by turn (whichever "
        "encodes first pays for the caches the graph left cold).",
        "",
        f"| measure | {head} | last / first |",
        f"|---|{rule}|---:|",
        f"| ctxbudget hooks, median ms per model call | {' | '.join(f'{c.ours_ms:.3f}' for c in calls)} "
        f"| {_flat([c.ours_ms for c in calls])} |",
        f"| floor: tiktoken of the call's new text, median ms | {' | '.join(f'{c.floor_ms:.3f}' for c in calls)} "
        f"| {_flat([c.floor_ms for c in calls])} |",
        f"| ours / floor, median over turns (a turn's two calls) | {' | '.join(f'{c.turn_ratio:.2f}x' for c in calls)} "
        "| |",
        f"| ours / floor, all measured calls summed | {' | '.join(f'{c.call_ratio:.2f}x' for c in calls)} | |",
        "",
        "## Inside a chain: `ChatPromptTemplate | step` (100,000-token budget), median ms per call",
        "",
        "A step's time is its ``invoke`` as the chain calls it (its own run and config included), timed inside the "
        "chain; the whole chain adds the prompt (which converts every message of the placeholder) and the sequence.",
        "",
        f"| measure | {head} |",
        f"|---|{rule}|",
    ]
    for name in CHAIN_ROWS:
        label = f"`{name}`" if "|" in name else name
        if name == "floor":
            label = "floor: tiktoken `encode_ordinary` of the turn's new text"
        out.append(f"| {label} | {' | '.join(f'{c.median(name):.3f}' for c in chains)} |")
    steps = " | ".join(
        f"{c.median('trim_messages step') / c.median('ContextBudgetRunnable step'):.1f}x" for c in chains
    )
    out.append(f"| **`trim_messages` step / `ContextBudgetRunnable` step** | {steps} |")
    whole = " | ".join(f"{c.median(CHAIN_ROWS[1]) / c.median(CHAIN_ROWS[0]):.1f}x" for c in chains)
    out.append(f"| whole chain: trim / runnable | {whole} |")
    python = ".".join(map(str, sys.version_info[:3]))
    out += [
        "",
        f"Medians of {REPEATS} invokes or calls per cell after a warm-up, every system in one run, in turn; Python "
        f"{python}, a shared 2-core machine. Agents and model calls are timed in CPU time (an invoke: the process's, "
        "all threads, since the checkpointer writes from a background thread; a model call: the hook's own thread), "
        "which neither the machine's load nor GIL hand-offs move: while tiktoken encodes it releases the GIL, "
        "LangGraph's checkpoint thread takes it, and the hook waits up to the 5 ms switch interval for it back. "
        "Chains run in one thread and are timed in wall time. Checkpoint bytes: what the saver stored during one "
        "invoke (a turn writes several checkpoints). ctxbudget keeps archived originals in its archive store (here "
        "the process's in-memory SQLite), so its state holds the live window and a reference.",
        "",
    ]
    return "\n".join(out)


CALLS_HEADING = "## Per model call, nothing compacted"
SHARE_HEADING = "## Agents at the default policy: our share of an invoke (InMemorySaver)"


def render_calls(sizes: Sequence[int], calls: list[CallCell]) -> str:
    """The per-model-call section alone (``--only calls``), as :func:`render` writes it."""
    table = render(sizes, {}, calls, [ChainCell({name: [1.0] for name in CHAIN_ROWS}) for _ in sizes])
    section = table[table.index(CALLS_HEADING) :]
    return section[: section.index("\n## ")]


def _replace_section(text: str, heading: str, section: str) -> str:
    """``text`` (the results file) with the section under ``heading`` replaced by ``section`` (added before the
    per-model-call section when it has none)."""
    if heading not in text:
        at = text.index(CALLS_HEADING)
        return text[:at] + section.rstrip("\n") + "\n\n" + text[at:]
    start = text.index(heading)
    end = text.index("\n## ", start)
    return text[:start] + section.rstrip("\n") + "\n" + text[end:]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, print only")
    parser.add_argument(
        "--only",
        choices=("calls", "share"),
        help="run one section and replace it in the results: 'calls' (per model call, nothing compacted), 'share' "
        "(our share of a default-policy invoke)",
    )
    args = parser.parse_args(argv)
    sizes = (300, 600) if args.quick else SIZES
    repeats = 4 if args.quick else REPEATS
    if args.only is not None:
        if args.only == "calls":
            heading, section = CALLS_HEADING, render_calls(sizes, [run_calls(size, repeats * 3) for size in sizes])
        else:
            heading, section = SHARE_HEADING, "\n".join(render_share(sizes, [run_share(s, repeats) for s in sizes]))
        print(section)
        if not args.quick:
            RESULTS.write_text(_replace_section(RESULTS.read_text(), heading, section))
        return
    agents: dict[tuple[str, str], list[AgentCell]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            for system in AGENT_SYSTEMS:
                for saver in SAVERS:
                    started = time.perf_counter()
                    cell = run_agent(system, saver, size, repeats, Path(folder))
                    agents.setdefault((system, saver), []).append(cell)
                    print(
                        f"{system} / {saver} @ {size}: {cell.median_ms:.1f} ms ({time.perf_counter() - started:.0f}s)",
                        flush=True,
                    )
    shares = [run_share(size, repeats) for size in sizes]
    print("share done", flush=True)
    calls = [run_calls(size, repeats * 3) for size in sizes]
    print("calls done", flush=True)
    chains = [run_chain(size, repeats * 3) for size in sizes]
    table = render(sizes, agents, calls, chains, shares)
    print(table)
    if not args.quick:
        RESULTS.write_text("# LangChain adapter inside LangChain: agents, model calls, chains\n\n" + table)


if __name__ == "__main__":
    main()
