"""The simulated agent session behind ``ctxbudget demo``: offline, deterministic, no key, no server.

Each model call of the simulated coding agent (:mod:`ctxbudget.cli._demo_script`) is checked by a strict fake
provider (:class:`~ctxbudget.testing.StrictProvider` here, ``StrictFakeChatModel`` in the LangChain driver), which
rejects an orphaned tool call or result and any request over the window exactly as a real provider would.

The driver is a plain function ``(DemoConfig, on_turn) -> DemoResult``. Two exist: ``core`` (here: a bare
:class:`ContextSession`) and ``langchain`` (``langchain_ctxbudget.demo``: a real ``create_agent`` graph with
``ContextBudgetMiddleware``). :func:`driver_named` resolves a name; :func:`default_driver` prefers ``langchain``
when the adapter and LangChain are installed. The adapter is imported by name, at call time, so the core never
imports a framework. Both drivers replay the same script (:func:`simulated_turns`), so their figures compare.

The script is :mod:`ctxbudget.cli._demo_script`'s (its names re-exported here); this module runs it and folds its
figures: :class:`TurnReport` per turn, :class:`DemoResult` in all, :func:`stages` for the final table.
"""

from __future__ import annotations

import importlib
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..errors import UsageError
from ..messages.message import Message
from ..messages.tokens import TiktokenCounter
from ..messages.toolpairs import find_tool_pair_problems
from ..session.events import ContextCompacted, Event, ToolOutputBounded
from ..session.session import ContextSession
from ..testing import StrictProvider
from ._demo_script import SYSTEM_PROMPT, TOOLS, DemoConfig, SimulatedStep, SimulatedTurn, simulated_turns

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
