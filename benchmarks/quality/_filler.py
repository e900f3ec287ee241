"""Deterministic filler text for the synthetic workloads: prose, code, logs, test output, JSON records.

Filler never contains a probe's answer: it uses its own vocabulary and path patterns (``lib/``, ``vendor/``), no
``ms`` figures and no ticket-like ids, and :func:`benchmarks.quality.workloads.check_planted` verifies it anyway.
"""

from __future__ import annotations

import json
import random


def words(text: str, sep: str | None = None) -> tuple[str, ...]:
    """The words of ``text`` (split on whitespace, or on ``sep``)."""
    return tuple(text.split(sep))


WORDS = words(
    "the agent reads a handler and checks how the request flows through the service layer before any change is "
    "made to the retry path because the queue worker shares state with the scheduler and every branch needs "
    "coverage while the cache warms up on startup so the client keeps a pool of connections per host and the "
    "parser validates input against the schema then the response is serialized with the encoder that the api "
    "module exposes to callers across the codebase including background jobs and admin views"
)
IDENTIFIERS = words(
    "handler parse_payload load_config build_client retry_call flush_buffer encode_row decode_row open_pool "
    "close_pool resolve_route render_view apply_patch merge_state check_quota emit_metric"
)
LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN")


def prose(rng: random.Random, words: int) -> str:
    """``words`` words of plain sentences."""
    out: list[str] = []
    while len(out) < words:
        sentence = rng.choices(WORDS, k=rng.randint(8, 18))
        sentence[0] = sentence[0].capitalize()
        out.extend(sentence)
        out[-1] += "."
    return " ".join(out[:words])


def code_lines(rng: random.Random, words: int) -> list[str]:
    """Python-looking source, about ``words`` words."""
    lines: list[str] = []
    count = 0
    while count < words:
        name = f"{rng.choice(IDENTIFIERS)}_{rng.randint(1, 99)}"
        body = [
            f"def {name}(request, *, limit={rng.randint(2, 64)}):",
            f'    """{prose(rng, rng.randint(6, 14))}"""',
            f"    value = {rng.choice(IDENTIFIERS)}(request.{rng.choice(WORDS)}, limit)",
            f"    if value is None or value.{rng.choice(WORDS)} > limit:",
            f"        return {rng.choice(IDENTIFIERS)}(value)",
            f"    return value.{rng.choice(WORDS)}",
            "",
        ]
        lines.extend(body)
        count += sum(len(line.split()) for line in body)
    return lines


def log_lines(rng: random.Random, words: int) -> list[str]:
    """Service log lines, about ``words`` words."""
    lines: list[str] = []
    count = 0
    while count < words:
        day, hour, minute, second = rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
        stamp = f"2025-03-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}Z"
        line = f"{stamp} {rng.choice(LEVELS)} worker-{rng.randint(1, 9)} {prose(rng, rng.randint(6, 12))}"
        lines.append(line)
        count += len(line.split())
    return lines


def test_lines(rng: random.Random, words: int) -> list[str]:
    """Pytest-looking output, about ``words`` words."""
    lines: list[str] = []
    count = 0
    while count < words:
        line = (
            f"lib/tests/test_{rng.choice(IDENTIFIERS)}.py::test_{rng.choice(WORDS)}_{rng.choice(WORDS)} "
            f"{rng.choice(('PASSED', 'PASSED', 'PASSED', 'PASSED', 'SKIPPED'))}"
        )
        lines.append(line)
        count += len(line.split())
    return lines


def search_lines(rng: random.Random, words: int) -> list[str]:
    """``grep``-looking matches, about ``words`` words."""
    lines: list[str] = []
    count = 0
    while count < words:
        line = f"lib/{rng.choice(IDENTIFIERS)}.py:{rng.randint(1, 400)}: {prose(rng, rng.randint(5, 10))}"
        lines.append(line)
        count += len(line.split())
    return lines


def record(rng: random.Random, fields: int) -> dict[str, object]:
    """A JSON-able record of ``fields`` filler fields."""
    return {f"{rng.choice(WORDS)}_{i}": prose(rng, rng.randint(3, 9)) for i in range(fields)}


def json_text(value: object) -> str:
    """Pretty JSON, as lookup tools return it."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def insert_middle(lines: list[str], planted: list[str], rng: random.Random) -> list[str]:
    """``lines`` with ``planted`` lines inserted between 35% and 65% of the way through."""
    out = list(lines)
    for line in planted:
        low, high = int(len(out) * 0.35), max(int(len(out) * 0.65), int(len(out) * 0.35) + 1)
        out.insert(rng.randint(low, high), line)
    return out
