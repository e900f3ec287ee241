"""Probes: the facts a compacted request should still carry, and how a request is scored against them.

A probe is an exact answer string planted somewhere in a session (a user fact, a file path in the middle of a tool
output, a decision in an assistant reply...) and the query an agent would search for to get it back. A probe is
*retained* when its answer appears anywhere in the text of the final request (message text and tool-call
arguments), and *recoverable* when it is retained or a top-3 archive search hit's full original contains it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from ctxbudget import Message

ProbeKind = Literal["fact", "artifact", "decision", "constraint", "command", "figure"]
Where = Literal["user", "assistant", "tool"]
KINDS: tuple[ProbeKind, ...] = get_args(ProbeKind)


@dataclass(frozen=True)
class Probe:
    """One planted answer.

    Attributes:
        kind: what sort of information it is.
        answer: the exact string that must appear (for a superseded fact: the latest value).
        query: what an agent would search for to find it again.
        where: the role of the message it was planted in.
        planted_in: ids of the messages that carry the answer (the builder checks no other message does).
    """

    kind: ProbeKind
    answer: str
    query: str
    where: Where
    planted_in: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class ProbeResult:
    """How one probe fared: in the final request, and recoverable (``None``: the system has no archive)."""

    probe: Probe
    in_context: bool
    recoverable: bool | None


def message_text(message: Message) -> str:
    """Everything a model reads in ``message``: its text, then each tool call's name and JSON arguments."""
    if not message.tool_calls:
        return message.text
    calls = "\n".join(f"{call.name} {call.args_json()}" for call in message.tool_calls)
    return f"{message.text}\n{calls}"


def request_text(messages: Iterable[Message]) -> str:
    """The whole request as one string, for substring checks."""
    return "\n".join(message_text(m) for m in messages)


def score(
    probes: Sequence[Probe], final_text: str, recover: Callable[[Probe], bool] | None = None
) -> tuple[ProbeResult, ...]:
    """Score every probe against the final request text; ``recover`` says whether the archive brings one back."""
    results = []
    for probe in probes:
        seen = probe.answer in final_text
        recoverable = None if recover is None else (seen or recover(probe))
        results.append(ProbeResult(probe=probe, in_context=seen, recoverable=recoverable))
    return tuple(results)


def fraction(results: Iterable[ProbeResult], kind: ProbeKind | None = None, *, recovered: bool = False) -> float | None:
    """Share of probes (of ``kind``, or all) retained, or recoverable with ``recovered``; ``None`` when none apply."""
    chosen = [r for r in results if kind is None or r.probe.kind == kind]
    if not chosen:
        return None
    if recovered:
        if any(r.recoverable is None for r in chosen):
            return None
        return sum(bool(r.recoverable) for r in chosen) / len(chosen)
    return sum(r.in_context for r in chosen) / len(chosen)
