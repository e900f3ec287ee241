"""The simulated agent session behind ``ctxbudget demo``: offline, deterministic, no key, no server.

A coding agent works through a long task list: every turn the user asks for something, the model calls tools
(sometimes several in parallel), reads their outputs (one in a while a huge test log) and answers. Each model call
is checked by :class:`~ctxbudget.testing.StrictProvider`, which rejects an orphaned tool call or result and any
request over the window exactly as a real provider would, and reports the prompt tokens it billed.

The driver is a plain function ``(DemoConfig, on_turn) -> DemoResult``; :func:`default_driver` picks the one the
demo uses, so moving the demo onto a framework adapter is a change to that one function.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .events import ContextCompacted, Event, ToolOutputBounded
from .messages import Message, ToolCall, ToolSchema
from .session import ContextSession
from .testing import StrictProvider
from .tokens import TiktokenCounter
from .toolpairs import find_tool_pair_problems

__all__ = ["DemoConfig", "DemoResult", "Driver", "TurnReport", "core_driver", "default_driver", "run_demo"]

SYSTEM_PROMPT = (
    "You are a careful coding agent working in the 'payments' repository. Read before you edit, run the tests "
    "after every change, and explain each decision in one or two sentences."
)
TOOLS = (
    ToolSchema(
        name="read_file",
        description="Read a file from the repository.",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    ToolSchema(
        name="search",
        description="Search the repository for a pattern.",
        parameters={"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
    ),
    ToolSchema(
        name="run_tests",
        description="Run the test suite, optionally for one path.",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
    ),
)
_TASKS = (
    "Add retries with exponential backoff to {module}",
    "Find why {module} leaks connections under load",
    "Type-annotate {module} and fix what mypy reports",
    "Split {module} into smaller functions",
    "Make {module} log the request id on every error",
    "Write tests for the refund path in {module}",
)
_MODULES = ("payments/client.py", "payments/ledger.py", "payments/refunds.py", "payments/webhooks.py", "api/auth.py")
_WORDS = "account amount balance charge client currency customer ledger payment refund request retry status token"


@dataclass(frozen=True)
class DemoConfig:
    """What to simulate: how many turns, the window, the model name (for counting) and the random seed."""

    turns: int = 60
    max_tokens: int = 32_000
    model: str = "gpt-4o-mini"
    seed: int = 7


@dataclass(frozen=True)
class TurnReport:
    """One finished turn: usage after it, model calls so far, and what happened to the context during it."""

    turn: int
    used_tokens: int
    max_tokens: int
    model_calls: int
    compactions: tuple[ContextCompacted, ...]
    bounded: tuple[ToolOutputBounded, ...]

    @property
    def used_percentage(self) -> float:
        """Used tokens as a percentage of the window."""
        return round(100.0 * self.used_tokens / self.max_tokens, 2)


@dataclass
class DemoResult:
    """The figures the demo's summary table shows."""

    driver: str
    turns: int = 0
    model_calls: int = 0
    max_tokens: int = 0
    compactions: Counter[str] = field(default_factory=Counter)
    bounded_outputs: int = 0
    max_usage_percentage: float = 0.0
    orphaned_pairs: int = 0
    originals_total: int = 0
    originals_recovered: int = 0
    usage_per_turn: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no orphaned pair was ever sent and every original is recoverable."""
        return self.orphaned_pairs == 0 and self.originals_recovered == self.originals_total


Driver = Callable[[DemoConfig, Callable[[TurnReport], None]], DemoResult]
"""Runs the simulated session, calling ``on_turn`` after every turn."""


@dataclass(frozen=True)
class _Step:
    calls: tuple[tuple[ToolCall, str], ...]


@dataclass(frozen=True)
class _Turn:
    user: str
    steps: tuple[_Step, ...]
    answer: str
    interrupted: bool


def _text(rng: random.Random, words: int) -> str:
    vocab = _WORDS.split()
    return " ".join(rng.choice(vocab) for _ in range(words))


def _file_body(rng: random.Random, path: str, lines: int) -> str:
    body = [f"# {path}", "from __future__ import annotations", ""]
    for i in range(lines):
        name = rng.choice(_WORDS.split())
        body.append(f"def {name}_{i}(value: int) -> int:  # {_text(rng, 4)}\n    return value * {rng.randint(2, 97)}")
    return "\n".join(body)


def _test_log(rng: random.Random, tests: int, failing: int) -> str:
    lines = [f"tests/test_{rng.choice(_WORDS.split())}_{i}.py::test_case PASSED" for i in range(tests)]
    lines += [
        f"FAILED tests/test_refund.py::test_{i} - AssertionError: expected {i}, got {i + 1}" for i in range(failing)
    ]
    return "\n".join([*lines, f"== {tests} passed, {failing} failed =="])


def _output(rng: random.Random, name: str, path: str, turn: int) -> str:
    if name == "read_file":
        return _file_body(rng, path, rng.randint(25, 70))
    if name == "search":
        return "\n".join(f"{path}:{rng.randint(1, 400)}: {_text(rng, 8)}" for _ in range(rng.randint(5, 15)))
    huge = turn % 11 == 5  # now and then a full, verbose test run
    return _test_log(rng, rng.randint(900, 1100) if huge else rng.randint(20, 60), rng.randint(0, 3))


def _script(config: DemoConfig) -> Iterator[_Turn]:
    rng = random.Random(config.seed)  # a deterministic simulation, not cryptography
    for turn in range(1, config.turns + 1):
        module = _MODULES[turn % len(_MODULES)]
        steps = []
        for step in range(rng.randint(1, 2)):
            names = rng.sample(["read_file", "search", "run_tests"], k=rng.randint(1, 3))
            calls = tuple(
                (
                    ToolCall(id=f"call_{turn}_{step}_{i}", name=name, args={"path": module}),
                    _output(rng, name, module, turn),
                )
                for i, name in enumerate(names)
            )
            steps.append(_Step(calls=calls))
        yield _Turn(
            user=_TASKS[turn % len(_TASKS)].format(module=module) + ". " + _text(rng, rng.randint(10, 40)),
            steps=tuple(steps),
            answer=f"Done with turn {turn}: {_text(rng, rng.randint(30, 90))}.",
            interrupted=turn % 9 == 4,
        )


def core_driver(config: DemoConfig, on_turn: Callable[[TurnReport], None]) -> DemoResult:
    """Drive a framework-neutral :class:`ContextSession`; every model call goes through a StrictProvider."""
    counter = TiktokenCounter()
    session = ContextSession(
        model=config.model, max_tokens=config.max_tokens, counter=counter, system_prompt=SYSTEM_PROMPT, tools=TOOLS
    )
    provider = StrictProvider(max_tokens=config.max_tokens, counter=counter)
    result = DemoResult(driver="ctxbudget.ContextSession + StrictProvider", max_tokens=config.max_tokens)
    seen: list[Event] = []
    session.subscribe(seen.append, "context_compacted")
    session.subscribe(seen.append, "tool_output_bounded")
    added: list[Message] = []

    def add(message: Message) -> None:
        added.append(message)
        session.add(message)

    def call_model() -> None:
        request = session.build_request()
        result.orphaned_pairs += len(find_tool_pair_problems(request.messages))
        session.record_usage(provider.complete(request.messages, request.tools))
        result.max_usage_percentage = max(result.max_usage_percentage, request.state.used_percentage)

    for number, turn in enumerate(_script(config), start=1):
        seen.clear()
        add(Message(role="user", content=turn.user, id=f"user-{number}"))
        for index, step in enumerate(turn.steps):
            call_model()
            calls = tuple(call for call, _ in step.calls)
            add(Message(role="assistant", content="", tool_calls=calls, id=f"assistant-{number}-{index}"))
            for call, output in step.calls:
                add(Message(role="tool", tool_call_id=call.id, name=call.name, content=output, id=f"tool-{call.id}"))
        call_model()
        state = "interrupted" if turn.interrupted else "complete"
        add(Message(role="assistant", content=turn.answer, state=state, id=f"answer-{number}"))
        report = _turn_report(number, session, provider.calls, seen)
        _record(result, report)
        on_turn(report)
    _check_originals(result, session, added)
    return result


def _turn_report(number: int, session: ContextSession, calls: int, seen: list[Event]) -> TurnReport:
    state = session.state
    return TurnReport(
        turn=number,
        used_tokens=state.used_tokens,
        max_tokens=state.max_tokens,
        model_calls=calls,
        compactions=tuple(e for e in seen if isinstance(e, ContextCompacted)),
        bounded=tuple(e for e in seen if isinstance(e, ToolOutputBounded)),
    )


def _record(result: DemoResult, report: TurnReport) -> None:
    result.turns = report.turn
    result.model_calls = report.model_calls
    result.bounded_outputs += len(report.bounded)
    result.usage_per_turn.append(report.used_percentage)
    for event in report.compactions:
        result.compactions[event.tier] += 1


def _check_originals(result: DemoResult, session: ContextSession, added: list[Message]) -> None:
    recovered = {m.id: m for m in session.originals()}
    result.originals_total = len(added)
    result.originals_recovered = sum(1 for m in added if recovered.get(m.id) == m)


def default_driver() -> Driver:
    """The driver ``ctxbudget demo`` uses (switch the demo onto another stack here)."""
    return core_driver


def run_demo(
    config: DemoConfig, *, on_turn: Callable[[TurnReport], None] | None = None, driver: Driver | None = None
) -> DemoResult:
    """Run the simulated session with ``driver`` (default :func:`default_driver`) and return its figures."""
    return (driver or default_driver())(config, on_turn or (lambda _report: None))
