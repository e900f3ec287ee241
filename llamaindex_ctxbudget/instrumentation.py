"""ctxbudget events, dispatched through LlamaIndex instrumentation so its event handlers see them.

Every session event (usage update, compaction, failed compaction tier, bounded tool output) and every budgeting
decision of :class:`~llamaindex_ctxbudget.postprocessor.BudgetNodePostprocessor` becomes a ``BaseEvent`` subclass
sent with ``get_dispatcher("llamaindex_ctxbudget.instrumentation").event(...)``. The dispatcher propagates to the
root dispatcher, so a handler added with ``get_dispatcher().add_event_handler(handler)`` receives them next to
LlamaIndex's own ``LLMChatStartEvent`` and friends::

    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler

    class Collect(BaseEventHandler):
        events: list = []

        def handle(self, event, **kwargs):
            if isinstance(event, ContextCompactedEvent):
                self.events.append(event)

    get_dispatcher().add_event_handler(Collect())
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxbudget.errors import UsageError
from ctxbudget.session import ContextSession
from ctxbudget.session._args import check_type
from ctxbudget.session.events import CompactionFailed, ContextCompacted, ContextUpdate, Event, ToolOutputBounded
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]  # re-exported with noqa
from llama_index.core.instrumentation.events.base import BaseEvent  # type: ignore[attr-defined]  # same
from pydantic import Field

__all__ = [
    "CompactionFailedEvent",
    "ContextCompactedEvent",
    "ContextUpdateEvent",
    "CtxBudgetEvent",
    "NodesBudgetedEvent",
    "ToolOutputBoundedEvent",
    "dispatch",
    "forward_session_events",
    "to_llamaindex_event",
]

dispatcher = get_dispatcher(__name__)


class CtxBudgetEvent(BaseEvent):
    """Base of every event this package dispatches."""

    session_id: str = Field(default="", description="The ctxbudget session (empty for postprocessor events).")

    @classmethod
    def class_name(cls) -> str:
        """Name used in LlamaIndex event dumps."""
        return "CtxBudgetEvent"


class ContextUpdateEvent(CtxBudgetEvent):
    """The window's usage changed."""

    used_tokens: int
    max_tokens: int
    used_percentage: float

    @classmethod
    def class_name(cls) -> str:
        """Name used in LlamaIndex event dumps."""
        return "ContextUpdateEvent"


class ContextCompactedEvent(CtxBudgetEvent):
    """A compaction succeeded: tiers run, before/after figures, the cumulative summary and the archived ids."""

    trigger: str
    tier: str
    tiers: list[str]
    tokens_before: int
    tokens_after: int
    max_tokens: int
    summary: str | None
    archived_ids: list[str]
    fallback_reason: str | None = None

    @classmethod
    def class_name(cls) -> str:
        """Name used in LlamaIndex event dumps."""
        return "ContextCompactedEvent"


class CompactionFailedEvent(CtxBudgetEvent):
    """A compaction tier failed; the history is exactly as before that tier."""

    trigger: str
    tier: str
    error: str

    @classmethod
    def class_name(cls) -> str:
        """Name used in LlamaIndex event dumps."""
        return "CompactionFailedEvent"


class ToolOutputBoundedEvent(CtxBudgetEvent):
    """A tool output was bounded to head/tail; the full text is archived under ``handle``."""

    message_id: str
    handle: str
    tokens_before: int
    tokens_after: int

    @classmethod
    def class_name(cls) -> str:
        """Name used in LlamaIndex event dumps."""
        return "ToolOutputBoundedEvent"


class NodesBudgetedEvent(CtxBudgetEvent):
    """A node postprocessor fitted retrieved nodes into a token budget."""

    kept_node_ids: list[str]
    dropped: list[dict[str, Any]] = Field(description="One entry per dropped node: node_id, reason and numbers.")
    tokens: int
    max_tokens: int | None

    @classmethod
    def class_name(cls) -> str:
        """Name used in LlamaIndex event dumps."""
        return "NodesBudgetedEvent"


def to_llamaindex_event(event: Event) -> CtxBudgetEvent | None:
    """The LlamaIndex event for a ctxbudget session event (``None`` for a type not forwarded)."""
    if isinstance(event, ContextUpdate):
        return ContextUpdateEvent(
            session_id=event.session_id,
            used_tokens=event.state.used_tokens,
            max_tokens=event.state.max_tokens,
            used_percentage=event.state.used_percentage,
        )
    if isinstance(event, ContextCompacted):
        return ContextCompactedEvent(
            session_id=event.session_id,
            trigger=event.trigger,
            tier=event.tier,
            tiers=list(event.tiers),
            tokens_before=event.before.used_tokens,
            tokens_after=event.after.used_tokens,
            max_tokens=event.after.max_tokens,
            summary=event.summary,
            archived_ids=[item.message_id for item in event.receipt],
            fallback_reason=event.fallback_reason,
        )
    if isinstance(event, CompactionFailed):
        return CompactionFailedEvent(
            session_id=event.session_id, trigger=event.trigger, tier=event.tier, error=event.error
        )
    if isinstance(event, ToolOutputBounded):
        return ToolOutputBoundedEvent(
            session_id=event.session_id,
            message_id=event.message_id,
            handle=event.handle,
            tokens_before=event.tokens_before,
            tokens_after=event.tokens_after,
        )
    return None


def dispatch(event: CtxBudgetEvent) -> None:
    """Send ``event`` through this package's LlamaIndex dispatcher."""
    dispatcher.event(event)


def _forward(event: Event) -> None:
    converted = to_llamaindex_event(event)
    if converted is not None:
        dispatch(converted)


def forward_session_events(session: ContextSession) -> Callable[[], None]:
    """Dispatch every event ``session`` emits through LlamaIndex instrumentation; returns the unsubscribe function.

    Raises:
        UsageError: ``session`` is not a :class:`~ctxbudget.ContextSession`.
    """
    check_type("session", session, ContextSession, UsageError)
    return session.subscribe(_forward)
