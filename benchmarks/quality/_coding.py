"""The ``coding`` workload: a user and a coding agent over many turns, parallel tool calls, large outputs."""

from __future__ import annotations

import itertools

from ctxbudget import Message

from . import _filler as filler
from . import _plants as plants
from ._builder import Builder, Workload, scaled, spread
from .probes import Probe, ProbeKind

CODING_SYSTEM = (
    "You are a careful coding agent in the 'platform' monorepo. Read before you edit, run the tests after every "
    "change, and explain each decision briefly."
)
TASKS = (
    "Add retries with backoff to {m}",
    "Find why {m} leaks connections under load",
    "Type-annotate {m} and fix what mypy reports",
    "Split {m} into smaller functions",
    "Make {m} log the request id on every error",
    "Write tests for the error path in {m}",
)


def _tool_output(b: Builder, kind: str, planted: list[str], *, large: bool) -> str:
    rng = b.rng
    words = rng.randint(2000, 6000) if large else rng.randint(100, 900)
    lines = {
        "read_file": filler.code_lines,
        "run_tests": filler.test_lines,
        "run_command": filler.log_lines,
        "search": filler.search_lines,
    }[kind](rng, words)
    return "\n".join(filler.insert_middle(lines, planted, rng))


def _filler_call(b: Builder, kind: str) -> dict[str, str]:
    ident = b.rng.choice(filler.IDENTIFIERS)
    return {
        "read_file": {"path": f"lib/{ident}.py"},
        "run_tests": {"path": "lib/tests"},
        "run_command": {"command": f"make check-{ident}"},
        "search": {"pattern": ident},
    }[kind]


class Plan:
    """Which turn gets which plant."""

    def __init__(self, b: Builder, turns: int, full: int, counts: dict[str, int]) -> None:
        self.at: dict[str, dict[int, int]] = {}
        for kind, total in counts.items():
            chosen = spread(b.rng, scaled(total, turns, full), turns)
            self.at[kind] = {t: chosen.count(t) for t in chosen}

    def count(self, kind: str, turn: int) -> int:
        return self.at.get(kind, {}).get(turn, 0)


class _Facts:
    """Plants user facts and, a few times, a later update that supersedes one (the probe moves to the new value)."""

    def __init__(self, b: Builder, turns: int) -> None:
        self.b = b
        self.keys = [(key, svc) for key, _ in plants.FACT_KEYS for svc in plants.SERVICES]
        b.rng.shuffle(self.keys)
        self.numbers = itertools.count(1)
        self.planted: list[tuple[int, str, str, Probe]] = []  # (number, key, service, current probe)
        count = max(1, round(6 * turns / 300))
        chosen = b.rng.sample(range(turns // 2, turns), min(count, turns - turns // 2))
        self.updates = {turn: b.rng.random() for turn in chosen}

    def sentences(self, count: int) -> list[tuple[str, str, str, tuple[int, str, str]]]:
        out = []
        for _ in range(count):
            key, svc = self.keys.pop()
            number = next(self.numbers)
            sentence, answer, query = plants.fact(self.b, number, key, svc)
            out.append((f"For the record: {sentence}", answer, query, (number, key, svc)))
        return out

    def update(self, turn: int) -> tuple[str, str, str, int] | None:
        """The update sentence for ``turn`` (and the index of the fact it supersedes), if one is due."""
        if turn not in self.updates or not self.planted:
            return None
        index = int(self.updates[turn] * len(self.planted) * 0.6)  # an older fact
        number, key, svc, old = self.planted[index]
        sentence, answer, query = plants.fact_update(self.b, number, key, svc)
        self.b.probes.remove(old)
        return sentence, answer, query, index


def coding(turns: int, seed: int) -> Workload:
    b = Builder("coding", seed)
    counts = {"fact": 60, "constraint": 20, "decision": 25, "artifact": 65, "command": 30, "figure": 30}
    plan = Plan(b, turns, 300, counts)
    facts = _Facts(b, turns)
    constraint_pool = plants.constraints(b, scaled(20, turns, 300))
    decision_index = itertools.count(b.rng.randrange(len(plants.DECISIONS)))
    for turn in range(turns):
        _user_turn(b, turn, plan, facts, constraint_pool)
        b.call()
        tool_round(b, turn, plan)
        b.call()
        text = filler.prose(b.rng, b.rng.randint(30, 80))
        decisions = [plants.decision(b, next(decision_index)) for _ in range(plan.count("decision", turn))]
        reply = b.add("assistant", " ".join([text, *(sentence for sentence, _, _ in decisions)]))
        for _, answer, query in decisions:
            b.plant("decision", answer, query, "assistant", reply)
    b.add("user", "Before we stop: where do we stand, and what is still open?")
    b.call()
    return Workload("coding", CODING_SYSTEM, tuple(b.calls), tuple(b.probes))


def _user_turn(b: Builder, turn: int, plan: Plan, facts: _Facts, constraint_pool: list[plants.Plant]) -> None:
    module = f"lib/{b.rng.choice(filler.IDENTIFIERS)}.py"
    parts = [b.rng.choice(TASKS).format(m=module) + "."]
    new_facts = facts.sentences(plan.count("fact", turn))
    parts += [sentence for sentence, _, _, _ in new_facts]
    chosen = [constraint_pool.pop() for _ in range(plan.count("constraint", turn)) if constraint_pool]
    parts += [sentence for sentence, _, _ in chosen]
    update = facts.update(turn)
    if update is not None:
        parts.append(update[0])
    user = b.add("user", " ".join(parts))
    for _, answer, query, (number, key, svc) in new_facts:
        facts.planted.append((number, key, svc, b.plant("fact", answer, query, "user", user)))
    for _, answer, query in chosen:
        b.plant("constraint", answer, query, "user", user)
    if update is not None:
        _, answer, query, index = update
        number, key, svc, _ = facts.planted[index]
        facts.planted[index] = (number, key, svc, b.plant("fact", answer, query, "user", user))


TOOLS = ("read_file", "run_tests", "run_command", "search")


def tool_round(b: Builder, turn: int, plan: Plan, text: str | None = None) -> Message:
    """One assistant message with 1-2 parallel tool calls and their results, carrying the plants due at ``turn``.

    Artifacts and figures go in the middle of a result; a planted command is the ``run_command`` call's argument and
    is echoed at the top of its output. Returns the assistant message (decisions may be planted in ``text``).
    """
    rng = b.rng
    tools = rng.sample(TOOLS, 2 if rng.random() < 0.4 else 1)
    commands = [plants.command(b) for _ in range(plan.count("command", turn))]
    if commands and "run_command" not in tools:
        tools[0] = "run_command"
    inserts: dict[str, list[tuple[ProbeKind, str, str, str]]] = {t: [] for t in tools}  # (kind, line, answer, query)
    for kind, make in (("artifact", plants.artifact), ("figure", plants.figure)):
        for _ in range(plan.count(kind, turn)):
            line, answer, query = make(b)
            inserts[rng.choice(tools)].append((kind, line, answer, query))  # type: ignore[arg-type]
    command = commands.pop(0) if commands else None
    calls = [
        b.tool_call(t, {"command": command[0]} if t == "run_command" and command else _filler_call(b, t)) for t in tools
    ]
    assistant = b.add(
        "assistant", f"Checking {len(calls)} thing(s) first." if text is None else text, tool_calls=tuple(calls)
    )
    for tool, call in zip(tools, calls, strict=True):
        body = _tool_output(b, tool, [line for _, line, _, _ in inserts[tool]], large=rng.random() < 1 / 7)
        echoed = command if tool == "run_command" else None
        if echoed:
            body = f"$ {echoed[0]}\n{body}\n{echoed[1]}"
        result = b.add("tool", body, tool_call_id=call.id, name=tool)
        for kind, _, answer, query in inserts[tool]:
            b.plant(kind, answer, query, "tool", result)
        if echoed:
            b.plant("command", echoed[2], echoed[3], "assistant", assistant, result)
    for cmd, _, answer, query in commands:  # another planted command in the same turn: its own model call
        b.call()
        call = b.tool_call("run_command", {"command": cmd})
        extra = b.add("assistant", "", tool_calls=(call,))
        result = b.add("tool", f"$ {cmd}\n" + "\n".join(filler.log_lines(rng, 60)), tool_call_id=call.id)
        b.plant("command", answer, query, "assistant", extra, result)
    return assistant
