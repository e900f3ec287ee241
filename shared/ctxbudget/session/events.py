"""Events a session emits, the bus that delivers them, and a compact trace of everything that happened."""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..compaction.receipt import ArchivedItem
from .tracking import ContextState

__all__ = [
    "ArchivedItem",
    "CognitiveContextBound",
    "CompactionFailed",
    "ContextCompacted",
    "ContextUpdate",
    "Event",
    "EventBus",
    "EventType",
    "ToolOutputBounded",
    "ToolResultUnsent",
]

EventType = Literal[
    "context_update",
    "context_compacted",
    "compaction_failed",
    "tool_output_bounded",
    "tool_result_unsent",
    "cognitive_context_bound",
]


class Event(BaseModel):
    """Base of every event: its type, the session id, and a per-session sequence number."""

    model_config = ConfigDict(frozen=True)

    type: EventType
    session_id: str
    seq: int = 0
    at: float = Field(default_factory=time.time, description="Unix time the event was emitted.")

    def trace(self) -> dict[str, Any]:
        """A compact, JSON-able record of the event for :meth:`EventBus.trace`."""
        return {"type": self.type, "seq": self.seq, "at": round(self.at, 3)}


class ContextUpdate(Event):
    """The window's usage changed."""

    type: Literal["context_update"] = "context_update"
    state: ContextState

    def trace(self) -> dict[str, Any]:
        """Type, seq and the used tokens/percentage."""
        return {**super().trace(), "used": self.state.used_tokens, "pct": self.state.used_percentage}


class ContextCompacted(Event):
    """A compaction succeeded: which tier ran, the figures, the cumulative summary and the receipt."""

    type: Literal["context_compacted"] = "context_compacted"
    trigger: Literal["auto", "manual"]
    tier: str = Field(
        description="The last tier that ran: bound, clear, summarize, extractive, truncate; a summary that would "
        "have cost more than the span it replaces is not applied and shows as summarize-skipped/extractive-skipped."
    )
    tiers: tuple[str, ...] = Field(description="Every tier that ran, in order.")
    before: ContextState
    after: ContextState
    summary: str | None
    receipt: tuple[ArchivedItem, ...]
    fallback_reason: str | None = Field(default=None, description="Why the configured summarizer was not used.")
    hook_errors: tuple[str, ...] = Field(
        default=(),
        description="PostCompact hooks that raised (the compaction is committed all the same; each hook still ran).",
    )

    def trace(self) -> dict[str, Any]:
        """Type, seq, trigger, tier and the before/after usage."""
        return {
            **super().trace(),
            "trigger": self.trigger,
            "tier": self.tier,
            "before": self.before.used_tokens,
            "after": self.after.used_tokens,
            "archived": len(self.receipt),
        }


class CompactionFailed(Event):
    """A compaction tier failed; the history is exactly as before that tier."""

    type: Literal["compaction_failed"] = "compaction_failed"
    trigger: Literal["auto", "manual"]
    tier: str
    error: str

    def trace(self) -> dict[str, Any]:
        """Type, seq, tier and the error."""
        return {**super().trace(), "tier": self.tier, "error": self.error[:200]}


class ToolOutputBounded(Event):
    """A tool output was bounded as it arrived; the full text is in the archive."""

    type: Literal["tool_output_bounded"] = "tool_output_bounded"
    message_id: str
    handle: str
    tokens_before: int
    tokens_after: int

    def trace(self) -> dict[str, Any]:
        """Type, seq, the handle and the figures."""
        return {**super().trace(), "handle": self.handle, "before": self.tokens_before, "after": self.tokens_after}


class ToolResultUnsent(Event):
    """A tool result answers no open tool call, so no request carries it (a provider would reject it).

    It stays in the history and in :meth:`~ctxbudget.session.session.ContextSession.originals`; reported once per
    message.
    ``reason`` is ``duplicate_result`` when its call was already answered, else ``orphaned_result``.
    """

    type: Literal["tool_result_unsent"] = "tool_result_unsent"
    message_id: str
    tool_call_id: str
    reason: Literal["orphaned_result", "duplicate_result"]

    def trace(self) -> dict[str, Any]:
        """Type, seq, the message and call ids and the reason."""
        return {**super().trace(), "message": self.message_id, "call": self.tool_call_id, "reason": self.reason}


class CognitiveContextBound(Event):
    """The session is bound to an exact cognitive package generation (emitted when bound and before each query)."""

    type: Literal["cognitive_context_bound"] = "cognitive_context_bound"
    binding: dict[str, Any]

    def trace(self) -> dict[str, Any]:
        """Type, seq, the package id and generation."""
        return {
            **super().trace(),
            "package": self.binding.get("packageId"),
            "generation": self.binding.get("lifecycleGeneration"),
        }


Listener = Callable[[Event], None]


class EventBus:
    """Delivers events to subscribers in order and keeps a bounded trace of them.

    A listener that raises does not stop delivery to the others and never breaks the session; its error is kept
    in :attr:`listener_errors`.
    """

    def __init__(self, session_id: str, *, trace_size: int = 2000) -> None:
        self.session_id = session_id
        self._listeners: list[tuple[EventType | None, Listener]] = []
        # Entries are trace dicts, or (seq, used, at) tuples for usage updates nobody listened to (the per-turn hot
        # path); trace() turns those into dicts.
        self._trace: deque[dict[str, Any] | tuple[int, int, float]] = deque(maxlen=trace_size)
        self._seq = itertools.count(1)
        self._wanted: tuple[bool, frozenset[str]] | None = None
        self.listener_errors: list[BaseException] = []

    def subscribe(self, listener: Listener, event_type: EventType | None = None) -> Callable[[], None]:
        """Call ``listener`` for every event (or only ``event_type``); returns a function that unsubscribes."""
        entry = (event_type, listener)
        self._listeners.append(entry)
        self._wanted = None

        def unsubscribe() -> None:
            if entry in self._listeners:
                self._listeners.remove(entry)
                self._wanted = None

        return unsubscribe

    def next_seq(self) -> int:
        """Reserve the next sequence number (``itertools.count`` is atomic under the GIL)."""
        return next(self._seq)

    def wants(self, event_type: EventType) -> bool:
        """True when some listener would receive an event of ``event_type``."""
        wanted = self._wanted
        if wanted is None:
            kinds = {kind for kind, _ in self._listeners}
            wanted = self._wanted = (None in kinds, frozenset(k for k in kinds if k is not None))
        return wanted[0] or event_type in wanted[1]

    def record_usage(self, seq: int, used: int) -> None:
        """Trace a ``context_update`` nobody listens to, without building the event (the per-turn hot path)."""
        self._trace.append((seq, used, time.time()))

    def emit(self, event: Event) -> None:
        """Record ``event`` in the trace and deliver it."""
        self._trace.append(event.trace())
        for event_type, listener in list(self._listeners):
            if event_type is None or event_type == event.type:
                try:
                    listener(event)
                except Exception as exc:
                    self.listener_errors.append(exc)

    def trace(self) -> list[dict[str, Any]]:
        """The compact runtime record of the most recent events, oldest first."""
        return [
            entry
            if isinstance(entry, dict)
            else {"type": "context_update", "seq": entry[0], "at": round(entry[2], 3), "used": entry[1]}
            for entry in self._trace
        ]
