"""The simulated agent session behind ``ctxbudget demo``: offline, deterministic, no key, no server.

A coding agent works through a long task list: every turn the user asks for something, the model calls tools
(sometimes several in parallel), reads their outputs (one in a while a huge test log) and answers. Each model call
is checked by a strict fake provider (:class:`~ctxbudget.testing.StrictProvider` here, ``StrictFakeChatModel`` in
the LangChain driver), which rejects an orphaned tool call or result and any request over the window exactly as a
real provider would.

The driver is a plain function ``(DemoConfig, on_turn) -> DemoResult``. Two exist: ``core`` (here: a bare
:class:`ContextSession`) and ``langchain`` (``langchain_ctxbudget.demo``: a real ``create_agent`` graph with
``ContextBudgetMiddleware``). :func:`driver_named` resolves a name; :func:`default_driver` prefers ``langchain``
when the adapter and LangChain are installed. The adapter is imported by name, at call time, so the core never
imports a framework. Both drivers replay the same script (:func:`simulated_turns`), so their figures compare.
"""

from __future__ import annotations

import importlib
import math
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from ..errors import UsageError
from ..messages.message import Message, ToolCall, ToolSchema
from ..messages.tokens import TiktokenCounter
from ..messages.toolpairs import find_tool_pair_problems
from ..session.events import ContextCompacted, Event, ToolOutputBounded
from ..session.session import ContextSession
from ..testing import StrictProvider

__all__ = [
    "DRIVER_NAMES",
    "SYSTEM_PROMPT",
    "TOOLS",
    "DemoConfig",
    "DemoResult",
    "Driver",
    "SimulatedStep",
    "SimulatedTurn",
    "Stage",
    "TurnReport",
    "core_driver",
    "default_driver",
    "driver_named",
    "run_demo",
    "simulated_turns",
    "stages",
]

DRIVER_NAMES = ("core", "langchain")
"""The drivers ``ctxbudget demo --driver`` accepts."""
_LANGCHAIN_MODULE = "langchain_ctxbudget.demo"
_LANGCHAIN_INSTALL = (
    'the langchain demo driver needs LangChain and langchain_ctxbudget: pip install -e ".[langchain]" from the root '
    'of your ctxbudget clone (once ctxbudget is published on PyPI: pip install "ctxbudget[langchain]")'
)

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

    turns: int = 300
    max_tokens: int = 32_000
    model: str = "gpt-4o-mini"
    seed: int = 7


@dataclass(frozen=True)
class TurnReport:
    """One finished turn: usage after it, model calls so far, and what happened to the context during it.

    ``request_tokens`` holds the size of every request sent to the model during the turn, in order.
    """

    turn: int
    used_tokens: int
    max_tokens: int
    model_calls: int
    compactions: tuple[ContextCompacted, ...]
    bounded: tuple[ToolOutputBounded, ...]
    request_tokens: tuple[int, ...] = ()

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
    rejected_requests: int = 0
    usage_per_turn: list[float] = field(default_factory=list)

    def add_turn(self, report: TurnReport) -> None:
        """Fold one finished turn into the totals."""
        self.turns = report.turn
        self.model_calls = report.model_calls
        self.bounded_outputs += len(report.bounded)
        self.usage_per_turn.append(report.used_percentage)
        for event in report.compactions:
            self.compactions[event.tier] += 1

    @property
    def ok(self) -> bool:
        """True when no request was rejected or orphaned a tool pair, and every original is recoverable."""
        return (
            self.orphaned_pairs == 0
            and self.rejected_requests == 0
            and self.originals_recovered == self.originals_total
        )


@dataclass(frozen=True)
class Stage:
    """A run of consecutive turns folded into one row of the demo's final table."""

    first_turn: int
    last_turn: int
    model_calls: int
    """Requests sent to the model during these turns."""
    tokens_sent: int
    """Those requests' tokens, together."""
    largest_request: int
    """The biggest of those requests, in tokens."""
    used_at_end: float
    """Percentage of the window the history fills after the last turn."""
    compactions: int
    bounded: int
    """Tool outputs bounded as they arrived."""


def stages(reports: Sequence[TurnReport], count: int = 10) -> list[Stage]:
    """``reports`` cut into at most ``count`` runs of consecutive turns of equal length (the last may be shorter)."""
    size = max(1, math.ceil(len(reports) / count))
    return [_stage(reports[start : start + size]) for start in range(0, len(reports), size)]


def _stage(reports: Sequence[TurnReport]) -> Stage:
    sizes = [tokens for report in reports for tokens in report.request_tokens]
    return Stage(
        first_turn=reports[0].turn,
        last_turn=reports[-1].turn,
        model_calls=len(sizes),
        tokens_sent=sum(sizes),
        largest_request=max(sizes, default=0),
        used_at_end=reports[-1].used_percentage,
        compactions=sum(len(report.compactions) for report in reports),
        bounded=sum(len(report.bounded) for report in reports),
    )


Driver = Callable[[DemoConfig, Callable[[TurnReport], None]], DemoResult]
"""Runs the simulated session, calling ``on_turn`` after every turn."""


@dataclass(frozen=True)
class SimulatedStep:
    """One model step of a turn: the parallel tool calls it asks for, each with the output its tool returns."""

    calls: tuple[tuple[ToolCall, str], ...]


@dataclass(frozen=True)
class SimulatedTurn:
    """One user turn: the request, the tool steps, the final answer and whether the answer was interrupted."""

    user: str
    steps: tuple[SimulatedStep, ...]
    answer: str
    interrupted: bool

    def user_message(self, number: int) -> Message:
        """The user's message opening turn ``number``."""
        return Message(role="user", content=self.user, id=f"user-{number}")

    def step_message(self, number: int, index: int) -> Message:
        """The assistant message asking for step ``index``'s tool calls."""
        calls = tuple(call for call, _ in self.steps[index].calls)
        return Message(role="assistant", content="", tool_calls=calls, id=f"assistant-{number}-{index}")

    def tool_results(self, index: int) -> tuple[Message, ...]:
        """The tool results answering step ``index``, in call order."""
        return tuple(
            Message(role="tool", tool_call_id=call.id, name=call.name, content=output, id=f"tool-{call.id}")
            for call, output in self.steps[index].calls
        )

    def answer_message(self, number: int) -> Message:
        """The final answer of turn ``number`` (``state="interrupted"`` when the turn was cut short)."""
        state = "interrupted" if self.interrupted else "complete"
        return Message(role="assistant", content=self.answer, state=state, id=f"answer-{number}")


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


def _args(name: str, module: str) -> dict[str, str]:
    if name == "search":
        return {"pattern": module.rsplit("/", 1)[-1].removesuffix(".py")}
    return {"path": module}


def simulated_turns(config: DemoConfig) -> Iterator[SimulatedTurn]:
    """The deterministic session every driver replays: ``config.turns`` turns from ``config.seed``."""
    rng = random.Random(config.seed)  # a deterministic simulation, not cryptography
    for turn in range(1, config.turns + 1):
        module = _MODULES[turn % len(_MODULES)]
        steps = []
        for step in range(rng.randint(1, 2)):
            names = rng.sample(["read_file", "search", "run_tests"], k=rng.randint(1, 3))
            calls = tuple(
                (
                    ToolCall(id=f"call_{turn}_{step}_{i}", name=name, args=_args(name, module)),
                    _output(rng, name, module, turn),
                )
                for i, name in enumerate(names)
            )
            steps.append(SimulatedStep(calls=calls))
        yield SimulatedTurn(
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
    result = DemoResult(driver="core (ContextSession + StrictProvider)", max_tokens=config.max_tokens)
    seen: list[Event] = []
    session.subscribe(seen.append, "context_compacted")
    session.subscribe(seen.append, "tool_output_bounded")
    added: list[Message] = []

    def add(message: Message) -> None:
        added.append(message)
        session.add(message)

    sizes: list[int] = []

    def call_model() -> None:
        request = session.build_request()
        result.orphaned_pairs += len(find_tool_pair_problems(request.messages))
        session.record_usage(provider.complete(request.messages, request.tools))
        sizes.append(request.tokens)
        result.max_usage_percentage = max(result.max_usage_percentage, request.state.used_percentage)

    for number, turn in enumerate(simulated_turns(config), start=1):
        seen.clear()
        sizes.clear()
        add(turn.user_message(number))
        for index in range(len(turn.steps)):
            call_model()
            add(turn.step_message(number, index))
            for message in turn.tool_results(index):
                add(message)
        call_model()
        add(turn.answer_message(number))
        report = _turn_report(number, session, provider.calls, seen, tuple(sizes))
        result.add_turn(report)
        on_turn(report)
    _check_originals(result, session, added)
    return result


def _turn_report(
    number: int, session: ContextSession, calls: int, seen: list[Event], sizes: tuple[int, ...]
) -> TurnReport:
    state = session.state
    return TurnReport(
        turn=number,
        used_tokens=state.used_tokens,
        max_tokens=state.max_tokens,
        model_calls=calls,
        compactions=tuple(e for e in seen if isinstance(e, ContextCompacted)),
        bounded=tuple(e for e in seen if isinstance(e, ToolOutputBounded)),
        request_tokens=sizes,
    )


def _check_originals(result: DemoResult, session: ContextSession, added: list[Message]) -> None:
    recovered = {m.id: m for m in session.originals()}
    result.originals_total = len(added)
    result.originals_recovered = sum(1 for m in added if recovered.get(m.id) == m)


def _langchain_driver() -> Driver:
    """The LangChain driver, imported by name so the core has no import of the adapter or of LangChain."""
    module = importlib.import_module(_LANGCHAIN_MODULE)
    driver: Driver = module.langchain_driver
    return driver


def driver_named(name: str) -> Driver:
    """The driver called ``name`` (one of :data:`DRIVER_NAMES`).

    Raises:
        UsageError: ``name`` is not a driver.
        ImportError: ``name`` is ``"langchain"`` and LangChain or ``langchain_ctxbudget`` is not installed; the
            message has the ``pip install`` line.
    """
    if name == "core":
        return core_driver
    if name == "langchain":
        try:
            return _langchain_driver()
        except ModuleNotFoundError as exc:
            raise ImportError(f"{_LANGCHAIN_INSTALL} ({exc})") from exc
    raise UsageError(f"driver: expected one of {', '.join(DRIVER_NAMES)}, got {name!r}", field="driver")


def default_driver() -> Driver:
    """The LangChain driver when ``langchain_ctxbudget`` and LangChain import, else the core driver."""
    try:
        return _langchain_driver()
    except ModuleNotFoundError:
        return core_driver


def run_demo(
    config: DemoConfig, *, on_turn: Callable[[TurnReport], None] | None = None, driver: Driver | None = None
) -> DemoResult:
    """Run the simulated session with ``driver`` (default :func:`default_driver`) and return its figures."""
    return (driver or default_driver())(config, on_turn or (lambda _report: None))
