"""The ``long_run`` workload: one user goal, then a single agent run of hundreds of tool steps.

No user message follows the goal. The run has parallel tool calls, large outputs, one interrupted assistant reply
(``state="interrupted"``) around the middle, and ends on a tool call that was never answered (the process stopped
while the tool ran), which is when the final request is built.
"""

from __future__ import annotations

import itertools

from . import _filler as filler
from . import _plants as plants
from ._builder import Builder, Workload
from ._coding import Plan, tool_round

SYSTEM = (
    "You are an autonomous coding agent. Work through the user's goal step by step with your tools; do not stop to "
    "ask questions. Record each decision in one sentence."
)
GOAL_FACTS = 12
GOAL_CONSTRAINTS = 6


def long_run(steps: int, seed: int) -> Workload:
    b = Builder("long_run", seed)
    _goal(b)
    b.call()
    counts = {"decision": 20, "artifact": 60, "command": 30, "figure": 30}
    plan = Plan(b, steps, 320, counts)
    decision_index = itertools.count(b.rng.randrange(len(plants.DECISIONS)))
    interrupted_at = int(steps * 0.55)
    for step in range(steps):
        if step == interrupted_at:
            cut = filler.prose(b.rng, 40)
            b.add("assistant", f"Summary so far: {cut[: len(cut) // 2]}", state="interrupted")
            b.call()
        decisions = [plants.decision(b, next(decision_index)) for _ in range(plan.count("decision", step))]
        text = " ".join(sentence for sentence, _, _ in decisions) or None
        assistant = tool_round(b, step, plan, text)
        for _, answer, query in decisions:
            b.plant("decision", answer, query, "assistant", assistant)
        b.call()
    call = b.tool_call("run_tests", {"path": "lib/tests", "slow": True})
    b.add("assistant", "Running the slow suite before wrapping up.", tool_calls=(call,))
    b.call()
    return Workload("long_run", SYSTEM, tuple(b.calls), tuple(b.probes))


def _goal(b: Builder) -> None:
    keys = [(key, svc) for key, _ in plants.FACT_KEYS for svc in plants.SERVICES]
    b.rng.shuffle(keys)
    facts = [plants.fact(b, number, *keys.pop()) for number in range(1, GOAL_FACTS + 1)]
    constraints = plants.constraints(b, GOAL_CONSTRAINTS)
    text = "\n".join(
        [
            "Goal: move every service in lib/ onto the shared retry client, keep the tests green, and leave a short "
            "report of what changed. You have the whole afternoon; do not wait for me.",
            "Facts you will need:",
            *(f"- {sentence}" for sentence, _, _ in facts),
            "Rules:",
            *(f"- {sentence}" for sentence, _, _ in constraints),
        ]
    )
    goal = b.add("user", text)
    for _, answer, query in facts:
        b.plant("fact", answer, query, "user", goal)
    for _, answer, query in constraints:
        b.plant("constraint", answer, query, "user", goal)
