"""The ``ctxbudget demo`` session through LangChain: a real ``create_agent`` graph with ``ContextBudgetMiddleware``.

:func:`langchain_driver` replays the core demo's script (:func:`ctxbudget.cli._demo.simulated_turns`) through
``create_agent``: a :class:`~langchain_ctxbudget.testing.StrictFakeChatModel` (rejects orphaned tool pairs and
over-window requests, like a real provider) scripted with the session's replies, three real ``@tool`` tools whose
outputs are the script's (one in a while a test log far over the per-output limit), an ``InMemorySaver`` thread
across every user turn, and :class:`~langchain_ctxbudget.middleware.ContextBudgetMiddleware` placed last.

Compactions and bounded outputs are observed as the LangChain custom events the middleware dispatches
(``ctxbudget.context_compacted``, ``ctxbudget.tool_output_bounded``); per-call usage is read from the requests the
strict model accepted. At the end every original message is looked up in the checkpointed thread state (live
messages and ``ctxbudget_archive``): that is what survives the process.

``ctxbudget demo`` picks this driver when LangChain is installed (``--driver langchain`` forces it).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any
from uuid import UUID

from ctxbudget.cli._demo import SYSTEM_PROMPT, DemoConfig, DemoResult, SimulatedTurn, TurnReport, simulated_turns
from ctxbudget.messages import Message
from ctxbudget.messages.tokens import TiktokenCounter
from ctxbudget.messages.toolpairs import find_tool_pair_problems
from ctxbudget.session.events import ContextCompacted, Event, ToolOutputBounded
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver

from ._update import ARCHIVE_KEY
from .convert import from_langchain, to_langchain
from .events import EVENT_PREFIX
from .middleware import ContextBudgetMiddleware
from .testing import StrictFakeChatModel, StrictProviderError

__all__ = ["DRIVER_NAME", "DemoEventCollector", "langchain_driver", "run_langchain_demo"]

DRIVER_NAME = "langchain (create_agent + middleware)"
"""How the summary table names this driver."""
_THREAD = "ctxbudget-demo"
_EVENTS: dict[str, type[Event]] = {
    f"{EVENT_PREFIX}context_compacted": ContextCompacted,
    f"{EVENT_PREFIX}tool_output_bounded": ToolOutputBounded,
}


class DemoEventCollector(BaseCallbackHandler):
    """A LangChain callback handler keeping the middleware's compaction and bounding events, as ctxbudget events."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def on_custom_event(
        self,
        name: str,
        data: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Parse a ``ctxbudget.*`` custom event back into its ctxbudget event; ignore the rest."""
        kind = _EVENTS.get(name)
        if kind is not None:
            self.events.append(kind.model_validate(data))

    def take(self) -> list[Event]:
        """The events collected since the last call."""
        events, self.events = self.events, []
        return events


def _replies(turns: Sequence[SimulatedTurn]) -> list[AIMessage]:
    """Every model reply of the session, in order: each step's tool calls, then the turn's answer."""
    replies: list[AIMessage] = []
    for number, turn in enumerate(turns, start=1):
        steps = [turn.step_message(number, index) for index in range(len(turn.steps))]
        for message in [*steps, turn.answer_message(number)]:
            calls = [{"id": c.id, "name": c.name, "args": c.args, "type": "tool_call"} for c in message.tool_calls]
            replies.append(AIMessage(content=message.text, tool_calls=calls, id=message.id))
    return replies


def _tools(outputs: Mapping[str, str]) -> list[BaseTool]:
    """The repository tools; each returns the scripted output of the call it answers, under a stable id."""

    def result(call_id: str, name: str) -> ToolMessage:
        return ToolMessage(content=outputs[call_id], tool_call_id=call_id, name=name, id=f"tool-{call_id}")

    @tool
    def read_file(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Read a file from the repository."""
        return result(tool_call_id, "read_file")

    @tool
    def search(pattern: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Search the repository for a pattern."""
        return result(tool_call_id, "search")

    @tool
    def run_tests(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Run the test suite, optionally for one path."""
        return result(tool_call_id, "run_tests")

    return [read_file, search, run_tests]


def _originals(turns: Sequence[SimulatedTurn]) -> list[Message]:
    """Every message the session adds (user, tool-call steps, tool results, answers), as ctxbudget messages."""
    added: list[Message] = []
    for number, turn in enumerate(turns, start=1):
        added.append(turn.user_message(number))
        for index in range(len(turn.steps)):
            added += [turn.step_message(number, index), *turn.tool_results(index)]
        added.append(turn.answer_message(number))
    return added


def _fingerprint(message: Message) -> tuple[str, str, str, str | None]:
    calls = json.dumps([[c.id, c.name, c.args] for c in message.tool_calls], sort_keys=True)
    return (message.role, message.text, calls, message.tool_call_id)


def _recoverable(
    state: Mapping[str, Any], budget: ContextBudgetMiddleware
) -> dict[str, set[tuple[str, str, str, str | None]]]:
    """Every version of every message the thread holds: live messages and archived originals (in its store), by id."""
    found: dict[str, set[tuple[str, str, str, str | None]]] = defaultdict(set)
    for live in state.get("messages") or []:
        message = from_langchain(live.model_copy())
        found[message.id].add(_fingerprint(message))
    archive = budget.archives.of_state(state, None, None) if state.get(ARCHIVE_KEY) else None
    for entry in archive.entries() if archive is not None else ():
        if entry.message is not None:
            found[entry.message.id].add(_fingerprint(entry.message))
    return found


def _check_requests(model: StrictFakeChatModel, start: int, result: DemoResult) -> tuple[int, ...]:
    """Re-check the requests accepted since ``start``; fold their sizes into ``result``; return the sizes."""
    sizes = []
    for request in model.requests[start:]:
        sent = [from_langchain(m.model_copy()) for m in request.messages]
        result.orphaned_pairs += len(find_tool_pair_problems(sent))
        percentage = round(100.0 * request.tokens / model.max_input_tokens, 2)
        result.max_usage_percentage = max(result.max_usage_percentage, percentage)
        sizes.append(request.tokens)
    return tuple(sizes)


def run_langchain_demo(
    config: DemoConfig, on_turn: Callable[[TurnReport], None], *, middleware: bool = True
) -> DemoResult:
    """Run the demo session through ``create_agent``; ``middleware=False`` runs it without ctxbudget.

    Without the middleware the strict model rejects the first request over the window; the run stops there and
    the result counts the rejection (``result.ok`` is then false).

    Args:
        config: turns, window, seed.
        on_turn: called after every turn with its :class:`~ctxbudget.cli._demo.TurnReport`.
        middleware: add :class:`ContextBudgetMiddleware` (the point of the demo); ``False`` shows the baseline.

    Returns:
        The figures of the summary table.
    """
    turns = list(simulated_turns(config))
    counter = TiktokenCounter()
    outputs = {call.id: output for turn in turns for step in turn.steps for call, output in step.calls}
    model = StrictFakeChatModel(max_input_tokens=config.max_tokens, responses=_replies(turns), counter=counter)
    budget = ContextBudgetMiddleware(max_tokens=config.max_tokens, counter=counter)
    agent = create_agent(
        model,
        tools=_tools(outputs),
        system_prompt=SYSTEM_PROMPT,
        middleware=[budget] if middleware else [],
        checkpointer=InMemorySaver(),
    )
    collector = DemoEventCollector()
    run_config: Any = {"configurable": {"thread_id": _THREAD}, "callbacks": [collector], "recursion_limit": 50}
    name = DRIVER_NAME if middleware else "langchain (create_agent, no middleware)"
    result = DemoResult(driver=name, max_tokens=config.max_tokens)
    for number, turn in enumerate(turns, start=1):
        start = len(model.requests)
        try:
            agent.invoke({"messages": [to_langchain(turn.user_message(number))]}, run_config)
        except (StrictProviderError, ContextOverflowError):
            result.rejected_requests += 1
        sizes = _check_requests(model, start, result)
        events = collector.take()
        report = TurnReport(
            turn=number,
            used_tokens=sizes[-1] if sizes else 0,
            max_tokens=config.max_tokens,
            model_calls=len(model.requests),
            compactions=tuple(e for e in events if isinstance(e, ContextCompacted)),
            bounded=tuple(e for e in events if isinstance(e, ToolOutputBounded)),
            request_tokens=sizes,
        )
        result.add_turn(report)
        on_turn(report)
        if result.rejected_requests:
            break
    completed = result.turns - (1 if result.rejected_requests else 0)  # a rejected turn never finished
    _check_originals(result, agent.get_state(run_config).values, _originals(turns[:completed]), budget)
    return result


def _check_originals(
    result: DemoResult, state: Mapping[str, Any], originals: Sequence[Message], budget: ContextBudgetMiddleware
) -> None:
    found = _recoverable(state, budget)
    result.originals_total = len(originals)
    result.originals_recovered = sum(1 for m in originals if _fingerprint(m) in found.get(m.id, set()))


def langchain_driver(config: DemoConfig, on_turn: Callable[[TurnReport], None]) -> DemoResult:
    """The ``ctxbudget demo`` driver: :func:`run_langchain_demo` with the middleware."""
    return run_langchain_demo(config, on_turn)
