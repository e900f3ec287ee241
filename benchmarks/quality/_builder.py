"""The session builder the synthetic workloads share: deterministic ids, model-call boundaries, planted probes."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ctxbudget import Message, ToolCall

from .probes import Probe, ProbeKind, Where


@dataclass(frozen=True)
class Workload:
    """A session to replay: ``calls[i]`` is added before model call ``i``; ``probes`` are scored at the end."""

    name: str
    system_prompt: str
    calls: tuple[tuple[Message, ...], ...]
    probes: tuple[Probe, ...]
    window: int = 32_000
    source: str = "synthetic"

    def messages(self) -> Iterator[Message]:
        """Every message, in order."""
        return itertools.chain.from_iterable(self.calls)


class Builder:
    """Accumulates messages into model calls and records where each probe's answer was planted.

    ``call()`` closes the batch of messages added since the previous model call: the runner adds the batch, then
    builds the request the system would send. Ids are ``<prefix>-<n>``, so a seed always gives the same session.
    """

    def __init__(self, prefix: str, seed: int) -> None:
        self.prefix = prefix
        self.rng = random.Random(f"{prefix}:{seed}")
        self.calls: list[tuple[Message, ...]] = []
        self.probes: list[Probe] = []
        self._pending: list[Message] = []
        self._count = 0
        self._used: set[str] = set()

    def _id(self) -> str:
        self._count += 1
        return f"{self.prefix}-{self._count:05d}"

    def add(self, role: str, content: str, **fields: Any) -> Message:
        message = Message(role=role, content=content, id=self._id(), **fields)  # type: ignore[arg-type]
        self._pending.append(message)
        return message

    def tool_call(self, name: str, args: dict[str, Any]) -> ToolCall:
        return ToolCall(
            id=f"call_{self.prefix}_{self._count:05d}_{self.rng.randrange(16**6):06x}", name=name, args=args
        )

    def call(self) -> None:
        if self._pending:
            self.calls.append(tuple(self._pending))
            self._pending = []

    def plant(self, kind: ProbeKind, answer: str, query: str, where: Where, *messages: Message) -> Probe:
        probe = Probe(kind=kind, answer=answer, query=query, where=where, planted_in=tuple(m.id for m in messages))
        self.probes.append(probe)
        return probe

    def unique(self, make: Callable[[random.Random], str]) -> str:
        """A value from ``make`` never returned before (answers must be unique across the session)."""
        for _ in range(10_000):
            value = make(self.rng)
            if value not in self._used and not any(value in old or old in value for old in self._used):
                self._used.add(value)
                return value
        raise RuntimeError("could not draw a unique value")


def spread(rng: random.Random, count: int, turns: int) -> list[int]:
    """``count`` turn indexes spread over ``range(turns)`` (with repeats only when count > turns)."""
    if count <= turns:
        return sorted(rng.sample(range(turns), count))
    return sorted(rng.choices(range(turns), k=count))


def scaled(full: int, turns: int, full_turns: int) -> int:
    """``full`` planted items at ``full_turns`` turns, scaled to ``turns`` (at least one)."""
    return max(1, round(full * turns / full_turns))
