"""What the coding and long-run workloads plant: facts, constraints, decisions, artifacts, commands, figures.

Each factory returns ``(sentence, answer, query)``: the text that goes into a message, the exact string a probe
looks for, and what an agent would search for. Answers are drawn through :meth:`Builder.unique`, so no answer is
a substring of another.
"""

from __future__ import annotations

import random

from ._builder import Builder
from ._filler import words

Plant = tuple[str, str, str]

SERVICES = words(
    "billing checkout search ledger auth notify payouts catalog reports gateway invoices shipping loyalty fraud"
)
REGIONS = words(
    "eu-west-3 us-east-2 ap-south-1 eu-central-1 us-west-1 ca-central-1 sa-east-1 ap-northeast-2 eu-north-1 "
    "af-south-1 me-south-1 ap-southeast-3 eu-south-2 us-gov-west-1 il-central-1 mx-central-1"
)
NAMES = words("ada grace linus barbara ken dennis margaret alan radia edsger frances donald")
FLAGS = words("dark_launch new_pricing async_refunds split_ledger fast_search beta_exports")
HEX = "0123456789abcdef"


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(HEX) for _ in range(n))


FACT_KEYS: tuple[tuple[str, object], ...] = (
    ("deploy region", lambda r: r.choice(REGIONS)),
    ("database host", lambda r: f"pg-{_hex(r, 6)}.db.internal"),
    ("feature flag", lambda r: f"ff_{r.choice(FLAGS)}_{r.randint(10, 99)}"),
    ("owner", lambda r: f"@{r.choice(NAMES)}.{r.choice(NAMES)}{r.randint(1, 9)}"),
    ("port", lambda r: f"port {r.randint(20000, 65000)}"),
    ("request timeout", lambda r: f"{r.randint(101, 999)} seconds"),
    ("API version", lambda r: f"v{r.randint(2, 9)}.{r.randint(10, 40)}.{r.randint(0, 9)}"),
    ("queue name", lambda r: f"q-{r.choice(FLAGS).replace('_', '-')}-{r.randint(100, 999)}"),
    ("bucket", lambda r: f"s3://{r.choice(SERVICES)}-{_hex(r, 8)}"),
    ("alert channel", lambda r: f"#alerts-{r.choice(SERVICES)}-{r.randint(10, 99)}"),
    ("on-call rotation", lambda r: f"OC-{r.randint(1000, 9999)}"),
    ("cron schedule", lambda r: f"{r.randint(0, 59)} {r.randint(0, 23)} * * {r.randint(1, 6)}"),
)


def fact(b: Builder, number: int, key: str, service: str) -> Plant:
    make = dict(FACT_KEYS)[key]
    value = b.unique(make)  # type: ignore[arg-type]
    ticket = b.unique(lambda r: f"T{r.randint(1000, 9999)}")
    return f"FACT-{number}: the {key} for {service} is {value} and the ticket is {ticket}.", value, f"{key} {service}"


def fact_update(b: Builder, number: int, key: str, service: str) -> Plant:
    make = dict(FACT_KEYS)[key]
    value = b.unique(make)  # type: ignore[arg-type]
    ticket = b.unique(lambda r: f"T{r.randint(1000, 9999)}")
    sentence = f"FACT-{number} update: the {key} for {service} is now {value} (ticket {ticket}); the old value is void."
    return sentence, value, f"{key} {service}"


USE_NOT = (
    ("poetry", "pip"),
    ("httpx", "requests"),
    ("structlog", "bare print calls"),
    ("pytest fixtures", "unittest setUp"),
    ("ruff", "flake8"),
    ("pathlib", "os.path"),
    ("orjson", "the stdlib json module"),
    ("UUIDv7 keys", "autoincrement ids"),
    ("Decimal amounts", "float amounts"),
    ("tenacity", "hand-written retry loops"),
)


def constraints(b: Builder, count: int) -> list[Plant]:
    """``count`` distinct constraints / preferences, shuffled."""
    out: list[Plant] = []
    for a, c in USE_NOT:
        out.append((f"Preference: use {a}, not {c}.", f"{a}, not {c}", f"use {a}"))
    for _ in range(6):
        path = b.unique(lambda r: f"migrations/{r.randint(1, 99):04d}_{r.choice(FLAGS)}.py")
        out.append((f"Constraint: never modify {path}.", path, "never modify migrations"))
    for _ in range(4):
        branch = b.unique(lambda r: f"release/{r.randint(3, 9)}.{r.randint(10, 99)}")
        out.append((f"Constraint: do not push to {branch} without review.", branch, "do not push branch"))
    for _ in range(4):
        field = b.unique(lambda r: f"{r.choice(('card', 'iban', 'ssn', 'token'))}_{r.choice(NAMES)}_field")
        out.append((f"Constraint: never log the {field}.", field, "never log field"))
    b.rng.shuffle(out)
    return out[:count]


DECISIONS = (
    ("cache sessions in", "Redis with a {n}s TTL"),
    ("retry failed webhooks with", "exponential backoff capped at {n} attempts"),
    ("shard the events table by", "tenant id into {n} partitions"),
    ("rate-limit the public API at", "{n} requests per minute per key"),
    ("store uploads in", "object storage with a {n}-day lifecycle"),
    ("run the nightly export at", "0{d}:{n} UTC"),
    ("pin the ORM to", "release 2.{n}.x"),
    ("batch ledger writes in", "groups of {n} rows"),
    ("page search results with", "cursor pages of {n} items"),
    ("expire password reset links after", "{n} minutes of idle time"),
    ("compress archived logs with", "zstd level {n}"),
    ("size the worker pool at", "{n} threads per pod"),
    ("keep audit records for", "{n} days in cold storage"),
    ("split the monolith along", "{n} bounded contexts"),
    ("hash passwords with", "argon2id at {n} MiB memory cost"),
    ("version the event schema with", "a {n}-bit schema fingerprint"),
    ("roll out the new checkout to", "{n} percent of traffic first"),
    ("debounce search input by", "a {n} ms client delay"),
    ("cap request bodies at", "{n} KiB per upload chunk"),
    ("schedule the index rebuild every", "{n} hours on replicas"),
    ("give each tenant a quota of", "{n} API tokens per day"),
    ("bucket latency histograms at", "{n} log-scaled buckets"),
    ("keep feature branches alive for at most", "{n} working days"),
    ("send digest emails at", "minute {n} past the hour"),
    ("deduplicate webhook deliveries with", "a {n}-minute idempotency window"),
    ("run canaries for", "{n} minutes before promotion"),
)
REASONS = words("it keeps the hot path simple,it matches the traffic we measured,the team already operates it", ",")


def decision(b: Builder, index: int) -> Plant:
    action, template = DECISIONS[index % len(DECISIONS)]
    choice = b.unique(lambda r: template.format(n=r.randint(11, 997), d=r.randint(1, 5)))
    reason = b.rng.choice(REASONS)
    return f"Decision: we will {action} {choice} because {reason}.", choice, f"decision {action}"


def artifact(b: Builder) -> Plant:
    path = b.unique(lambda r: f"src/pkg_{r.randint(1, 40)}/module_{r.randint(1, 90)}.py")
    outcome = b.rng.choice(
        (
            f"wrote {path}; tests: {b.rng.randint(20, 400)} passed",
            f"updated {path} (+{b.rng.randint(3, 90)} -{b.rng.randint(1, 40)} lines); lint clean",
            f"created {path}; mypy: no issues found",
            f"failed to import {path}: circular import, left unchanged",
        )
    )
    return outcome, path, path


COMMANDS = (
    ("pytest tests/integration/test_{w}_{n}.py -x --timeout {t}", "pytest test_{w}_{n}"),
    ("alembic upgrade {h}", "alembic upgrade migration"),
    ("make build-{w}-{n}", "make build {w}"),
    ("docker compose up -d {w}-{n}", "docker compose up {w}"),
    ("kubectl rollout restart deploy/{w}-{n}", "kubectl rollout restart {w}"),
    ("npm run lint:{w}-{n}", "npm run lint {w}"),
)


def command(b: Builder) -> tuple[str, str, str, str]:
    """``(command, outcome line, answer, query)``."""
    words = {}

    def make(r: random.Random) -> str:
        template, query = r.choice(COMMANDS)
        words.update(w=r.choice(SERVICES), n=r.randint(10, 999), t=r.randint(30, 600), h=_hex(r, 12))
        words["query"] = query.format(**words)
        return template.format(**words)

    cmd = b.unique(make)
    outcome = b.rng.choice(
        ("exit code 0", "exit code 1: 2 checks failed", "exit code 0 (3 warnings)", "exit code 137: killed (OOM)")
    )
    return cmd, outcome, cmd, str(words["query"])


FIGURES = (
    ("p95 latency for /api/{w}", "{n} ms"),
    ("peak memory of the {w} job", "{n} MiB"),
    ("error rate on {w}", "{n}.{m}% errors"),
    ("throughput of {w}", "{n} req/s"),
    ("cache hit ratio for {w}", "{n}.{m}% hits"),
    ("cold start of the {w} lambda", "{n}.{m} s cold"),
)


def figure(b: Builder) -> Plant:
    label = {}

    def make(r: random.Random) -> str:
        what, value = r.choice(FIGURES)
        fill = {"w": r.choice(SERVICES), "n": r.randint(100, 9999), "m": r.randint(1, 9)}
        label["what"] = what.format(**fill)
        return value.format(**fill)

    value = b.unique(make)
    return f"measured {label['what']}: {value}", value, label["what"]
