"""The ``support`` workload: a tau-bench-like retail support conversation.

The user states facts (address, phone, email, membership, budget, delivery window) and rules; the agent looks up
users, orders and products (JSON records, one in seven large), acts (cancel, return, change address) and decides.
Planted: user facts (a few updated later), constraints, decisions, tracking ids in the middle of records
(artifacts), action confirmations (commands) and amounts (figures).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from . import _filler as filler
from ._builder import Builder, Workload
from ._coding import Plan
from ._filler import words

SYSTEM = (
    "You are a retail customer-support agent. Authenticate the user, look records up before acting, confirm every "
    "action with the user, and never act against their stated preferences."
)
STREETS = words("Birch Cedar Maple Willow Aspen Juniper Alder Laurel Hazel Spruce")
CITIES = (("Dayton", "OH"), ("Fresno", "CA"), ("Tulsa", "OK"), ("Boise", "ID"), ("Omaha", "NE"), ("Akron", "OH"))
ITEMS = words("desk lamp,hiking boots,coffee grinder,office chair,water bottle,wireless earbuds,yoga mat,backpack", ",")
FACT_KINDS: tuple[tuple[str, str, Any], ...] = (
    (
        "shipping address",
        "My shipping address is {v}.",
        lambda r: (
            f"{r.randint(10, 9999)} {r.choice(STREETS)} Lane, Apt {r.randint(1, 99)}, "
            + "{} {} {}".format(*r.choice(CITIES), r.randint(10000, 99999))
        ),
    ),
    ("phone", "My phone number is {v}.", lambda r: f"+1-555-{r.randint(1000, 9999)}"),
    ("email", "Email me at {v}.", lambda r: f"{r.choice(filler.WORDS)}.{r.randint(10, 9999)}@example.org"),
    ("membership", "My membership number is {v}.", lambda r: f"M-{r.randint(100000, 999999)}"),
    ("budget", "My budget for replacements is {v}.", lambda r: f"at most {r.randint(40, 900)} dollars"),
    (
        "delivery window",
        "Deliveries work for me only {v}.",
        lambda r: f"on {r.choice(('Mondays', 'Tuesdays', 'Fridays', 'Saturdays'))} after {r.randint(1, 8)} pm",
    ),
)
CONSTRAINTS: tuple[tuple[str, Any, str], ...] = (
    ("Refunds must go back to the card {v}.", lambda r: f"ending in {r.randint(1000, 9999)}", "refund card"),
    ("Do not cancel order {v}, I still want it.", lambda r: f"#W{r.randint(1000000, 9999999)}", "do not cancel order"),
    ("Never use gift card {v}.", lambda r: f"GC-{r.randint(10000, 99999)}", "gift card"),
    ("Do not contact me {v}.", lambda r: f"before {r.randint(6, 11)} am", "contact time"),
)
DECISIONS: tuple[tuple[str, Any, str], ...] = (
    ("Decision: I will exchange your {i} for {v}.", lambda r: f"item {r.randint(10**9, 10**10 - 1)}", "exchange"),
    (
        "Decision: I will issue {v} for the late {i}.",
        lambda r: f"a store credit of {r.randint(5, 300)} dollars",
        "credit",
    ),
    ("Decision: I will upgrade the {i} shipment to {v}.", lambda r: f"express tier {r.randint(2, 99)}", "upgrade"),
)


def support(turns: int, seed: int) -> Workload:
    b = Builder("support", seed)
    counts = {"fact": 40, "constraint": 10, "decision": 20, "artifact": 30, "command": 15, "figure": 25}
    plan = Plan(b, turns, 200, counts)
    updates = set(b.rng.sample(range(turns // 2, turns), max(1, round(3 * turns / 200))))
    known: list[tuple[str, Any]] = []  # fact kinds stated so far (kind, probe)
    kinds = itertools.cycle(range(len(FACT_KINDS)))
    for turn in range(turns):
        _user(b, turn, plan, kinds, known, update=turn in updates)
        b.call()
        _lookups(b, turn, plan)
        b.call()
        decisions = [_decision(b) for _ in range(plan.count("decision", turn))]
        text = filler.prose(b.rng, b.rng.randint(25, 70))
        item = b.rng.choice(ITEMS)
        reply = b.add("assistant", " ".join([text, *(s.format(i=item) for s, _, _ in decisions)]))
        for _, answer, query in decisions:
            b.plant("decision", answer, query, "assistant", reply)
    b.add("user", "Thanks. Can you recap everything you changed on my account today?")
    b.call()
    return Workload("support", SYSTEM, tuple(b.calls), tuple(b.probes))


def _user(b: Builder, turn: int, plan: Plan, kinds: Any, known: list[tuple[str, Any]], *, update: bool) -> None:
    parts = [f"Hi again, about order #W{b.rng.randint(1000000, 9999999)}: {filler.prose(b.rng, b.rng.randint(8, 20))}"]
    planted: list[tuple[str, str, str]] = []
    for _ in range(plan.count("fact", turn)):
        name, template, make = FACT_KINDS[next(kinds)]
        value = b.unique(make)
        parts.append(template.format(v=value))
        planted.append(("fact", value, name))
    for _ in range(plan.count("constraint", turn)):
        template, make, query = b.rng.choice(CONSTRAINTS)
        value = b.unique(make)
        parts.append(template.format(v=value))
        planted.append(("constraint", value, query))
    replaced = None
    if update and known:
        index = b.rng.randrange(len(known))
        name, replaced = known[index]
        _, template, make = next(k for k in FACT_KINDS if k[0] == name)
        value = b.unique(make)
        parts.append("Update, this replaces what I said before: " + template.format(v=value))
        planted.append(("fact", value, name))
        b.probes.remove(replaced)
        del known[index]
    user = b.add("user", " ".join(parts))
    for kind, answer, query in planted:
        probe = b.plant(kind, answer, query, "user", user)  # type: ignore[arg-type]
        if kind == "fact":
            known.append((query, probe))


def _decision(b: Builder) -> tuple[str, str, str]:
    template, make, query = b.rng.choice(DECISIONS)
    value = b.unique(make)
    return template.replace("{v}", value), value, query


def _record(b: Builder, kind: str, planted: dict[str, str], *, large: bool) -> str:
    rng = b.rng
    size = rng.randint(40, 120) if large else rng.randint(4, 30)
    body: dict[str, Any] = {
        "kind": kind,
        "id": f"{kind[:3]}_{rng.randint(10**6, 10**7)}",
        "status": rng.choice(("pending", "delivered", "processed", "cancelled")),
        "items": [
            {"name": rng.choice(ITEMS), "price": round(rng.uniform(5, 500), 2), "options": filler.record(rng, 3)}
            for _ in range(size // 2)
        ],
    }
    fields = list(filler.record(rng, size).items())
    middle = rng.randint(len(fields) // 3, max(len(fields) // 3, 2 * len(fields) // 3))
    body["details"] = dict([*fields[:middle], *planted.items(), *fields[middle:]])
    return filler.json_text(body)


def _lookups(b: Builder, turn: int, plan: Plan) -> None:
    rng = b.rng
    tools = rng.sample(("get_user_details", "get_order_details", "get_product_details"), 2 if rng.random() < 0.4 else 1)
    planted: dict[str, dict[str, str]] = {t: {} for t in tools}
    probes: dict[str, list[tuple[str, str, str]]] = {t: [] for t in tools}
    for _ in range(plan.count("artifact", turn)):
        tool = rng.choice(tools)
        value = b.unique(lambda r: f"1Z{r.randint(10**9, 10**10 - 1)}")
        item = rng.choice(ITEMS)
        planted[tool][f"tracking_{item.replace(' ', '_')}"] = value
        probes[tool].append(("artifact", value, f"tracking number {item}"))
    for _ in range(plan.count("figure", turn)):
        tool = rng.choice(tools)
        value = b.unique(lambda r: f"${r.randint(10, 2000)}.{r.randint(10, 99)}")
        item = rng.choice(ITEMS)
        planted[tool][f"refund_amount_{item.replace(' ', '_')}"] = value
        probes[tool].append(("figure", value, f"refund amount {item}"))
    calls = [b.tool_call(t, {"id": f"{t[4:8]}_{rng.randint(10**6, 10**7)}"}) for t in tools]
    b.add("assistant", "Let me pull that up.", tool_calls=tuple(calls))
    for tool, call in zip(tools, calls, strict=True):
        result = b.add("tool", _record(b, tool[4:], planted[tool], large=rng.random() < 1 / 7), tool_call_id=call.id)
        for kind, answer, query in probes[tool]:
            b.plant(kind, answer, query, "tool", result)  # type: ignore[arg-type]
    for _ in range(plan.count("command", turn)):
        b.call()
        _action(b, rng)


def _action(b: Builder, rng: random.Random) -> None:
    name, args = rng.choice(
        (
            ("cancel_pending_order", {"reason": "no longer needed"}),
            ("return_delivered_order_items", {"payment": "original"}),
            ("modify_pending_order_address", {"address": "as stated"}),
        )
    )
    call = b.tool_call(name, {"order_id": f"#W{rng.randint(1000000, 9999999)}", **args})
    b.add("assistant", f"Doing that now ({name.replace('_', ' ')}).", tool_calls=(call,))
    code = b.unique(lambda r: f"CNF-{r.randint(100000, 999999)}")
    result = b.add(
        "tool", filler.json_text({"status": "ok", "action": name, "confirmation": code}), tool_call_id=call.id
    )
    b.plant("command", code, f"{name.replace('_', ' ')} confirmation", "tool", result)
