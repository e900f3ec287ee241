"""The real-transcript probe set: public agent transcripts nobody here wrote, with hand-written probes.

``benchmarks/quality/real/`` holds the transcripts (sources and licences in its README) and, beside each, a
``<name>.probes.json``::

    {"name": ..., "transcript": <file>, "kind": "claude-code" | "mini-swe-agent" | "tau-bench" | "anthropic",
     "span": "all" | "before_compact_boundary",
     "probes": [{"kind": ..., "answer": ..., "question": ..., "message": <index>}, ...]}

A probe is what a model needs to continue the task (the task and its state, constraints, files, commands and
their outcomes, errors, values later corrected, the next step), written by reading the transcript as a user would.
Its ``answer`` is a short exact string that must appear verbatim in a compacted request; ``message`` is the index
(into the messages :func:`ctxbudget.transcripts.reading.parse_transcript` returns) of the message it was taken from,
which lies in the first 70% of the transcript; ``question`` is what a model would ask the archive search to find it.

A ``before_compact_boundary`` transcript is a Claude Code session that holds Claude Code's own compaction: the
messages before its ``compact_boundary`` line are the transcript (what every system compacts, what the probes come
from); the lines after it are what Claude Code sent in their place (its continuation summary, and whatever else it
sent before the model's next reply), kept in :attr:`RealTranscript.claude_code_kept`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from ctxbudget import Message, ToolSchema
from ctxbudget.transcripts import Transcript, load_transcript, parse_transcript

from .probes import message_text

__all__ = [
    "HELDOUT",
    "PROBE_KINDS",
    "REAL",
    "RealProbe",
    "RealTranscript",
    "answer_in",
    "cut",
    "load_real",
    "load_set",
]

REAL = Path(__file__).parent / "real"
"""Where the transcripts and their probe files live."""
HELDOUT = Path(__file__).parent / "heldout"
"""Transcripts kept apart from the set, their probes written by a reviewer who had not seen their summaries."""

ProbeKind = Literal[
    "task", "constraint", "fact", "file", "command", "outcome", "error", "correction", "decision", "next_step"
]
PROBE_KINDS: tuple[str, ...] = get_args(ProbeKind)
Span = Literal["all", "before_compact_boundary"]
EARLY = 0.7
"""Probes come from this leading share of a transcript's messages."""


@dataclass(frozen=True)
class RealProbe:
    """One thing a model needs to continue, and where it was said."""

    kind: str
    answer: str
    question: str
    message: int


@dataclass(frozen=True)
class RealTranscript:
    """A transcript of the set, read, with its probes.

    Attributes:
        name: the file stem (``claude_code_entire_explain``).
        kind: which agent or log it is.
        file: the transcript's path.
        span: ``all``, or ``before_compact_boundary`` (see the module docstring).
        messages: every message the transcript holds (for a boundary transcript: those before the boundary).
        tools: tool schemas the transcript declared.
        probes: the hand-written probes.
        claude_code_kept: for a boundary transcript, the messages Claude Code sent in place of the span.
    """

    name: str
    kind: str
    file: Path
    span: Span
    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...]
    probes: tuple[RealProbe, ...]
    claude_code_kept: tuple[Message, ...] | None = None

    @property
    def lead(self) -> int:
        """How many leading system messages there are (they become the session's system prompt)."""
        count = 0
        while count < len(self.messages) and self.messages[count].role == "system":
            count += 1
        return count

    @property
    def system_prompt(self) -> str | None:
        """The leading system messages joined, as ``ctxbudget inspect`` reads them; ``None`` without any."""
        return "\n\n".join(m.text for m in self.messages[: self.lead]) or None

    @property
    def history(self) -> tuple[Message, ...]:
        """The messages after the system prompt."""
        return self.messages[self.lead :]


def cut(transcript: RealTranscript) -> int:
    """The first message index past the early share probes may come from."""
    return int(len(transcript.messages) * EARLY)


def load_set(directory: Path = REAL) -> tuple[RealTranscript, ...]:
    """Every transcript in ``directory`` that has a probe file, by name."""
    return tuple(load_real(path) for path in sorted(directory.glob("*.probes.json")))


def load_real(probe_file: Path) -> RealTranscript:
    """The transcript a probe file describes, read, with its probes."""
    doc: dict[str, Any] = json.loads(probe_file.read_text(encoding="utf-8"))
    path = probe_file.parent / doc["transcript"]
    span: Span = doc["span"]
    kept: tuple[Message, ...] | None = None
    if span == "before_compact_boundary":
        read, kept = _split_at_boundary(path)
    else:
        read = load_transcript(path)
    probes = tuple(RealProbe(**probe) for probe in doc["probes"])
    return RealTranscript(
        name=doc["name"],
        kind=doc["kind"],
        file=path,
        span=span,
        messages=read.messages,
        tools=read.tools,
        probes=probes,
        claude_code_kept=kept,
    )


def _split_at_boundary(path: Path) -> tuple[Transcript, tuple[Message, ...]]:
    """The session before its first ``compact_boundary`` line, and what Claude Code sent in its place.

    What it sent: the messages after the boundary up to the model's next reply (the continuation summary, and any
    file or reminder Claude Code attached before the reply).
    """
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    boundary = next(i for i, line in enumerate(lines) if _is_boundary(line))
    before = parse_transcript("".join(lines[:boundary]), source=str(path), jsonl=True)
    after = parse_transcript("".join(lines[boundary + 1 :]), source=str(path), jsonl=True)
    kept: list[Message] = []
    for message in after.messages:
        if message.role == "assistant":
            break
        kept.append(message)
    return before, tuple(kept)


def _is_boundary(line: str) -> bool:
    if '"compact_boundary"' not in line:
        return False
    event = json.loads(line)
    return isinstance(event, dict) and event.get("type") == "system" and event.get("subtype") == "compact_boundary"


def answer_in(probe: RealProbe, messages: tuple[Message, ...]) -> bool:
    """Whether ``probe``'s answer is in the message it names (the data check the tests run)."""
    return probe.answer in message_text(messages[probe.message])
