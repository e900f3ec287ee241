"""The script every ``ctxbudget demo`` driver replays: a coding agent's long session, deterministic from a seed.

A coding agent works through a long task list: every turn the user asks for something, the model calls tools
(sometimes several in parallel), reads their outputs (one in a while a huge test log) and answers.
:func:`simulated_turns` yields the turns of a :class:`DemoConfig`; each :class:`SimulatedTurn` builds its own
messages, with the same ids whichever driver sends them, so the drivers' figures compare
(:mod:`ctxbudget.cli._demo` runs them).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from ..messages.message import Message, ToolCall, ToolSchema

__all__ = ["SYSTEM_PROMPT", "TOOLS", "DemoConfig", "SimulatedStep", "SimulatedTurn", "simulated_turns"]

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
