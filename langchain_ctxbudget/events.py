"""ctxbudget events as LangChain custom events, so tracers (LangSmith, ``astream_events``) see compactions.

A session emits events synchronously while it builds a request; :class:`EventForwarder` buffers them and
:meth:`~EventForwarder.flush` / :meth:`~EventForwarder.aflush` dispatch them with ``dispatch_custom_event`` /
``adispatch_custom_event`` inside the current run, named ``ctxbudget.<event type>`` (for example
``ctxbudget.context_compacted``) with the event as JSON data. Outside a run (no parent run id) events are kept for
the session's own subscribers only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ctxbudget.errors import UsageError
from ctxbudget.session import ContextSession
from ctxbudget.session.events import Event, EventType
from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.runnables.config import RunnableConfig, ensure_config, get_callback_manager_for_config

__all__ = ["DEFAULT_FORWARDED", "EVENT_PREFIX", "EventForwarder", "event_name"]

EVENT_PREFIX = "ctxbudget."
"""Every custom event name starts with this."""

DEFAULT_FORWARDED: frozenset[EventType] = frozenset(
    {"context_compacted", "compaction_failed", "tool_output_bounded", "cognitive_context_bound"}
)
"""Event types forwarded by default; ``context_update`` fires on every message and is opt-in."""


def event_name(event: Event) -> str:
    """The custom event name for ``event``, e.g. ``ctxbudget.context_compacted``.

    Raises:
        UsageError: ``event`` is not a ctxbudget :class:`~ctxbudget.session.events.Event` (``field="event"``).
    """
    if not isinstance(event, Event):
        raise UsageError(f"event: expected a ctxbudget Event, got {type(event).__name__}", field="event")
    return f"{EVENT_PREFIX}{event.type}"


def _in_run(config: RunnableConfig) -> bool:
    return get_callback_manager_for_config(config).parent_run_id is not None


class EventForwarder:
    """Buffers a session's events and dispatches them into the current LangChain run.

    Args:
        types: event types to forward (default :data:`DEFAULT_FORWARDED`).
    """

    def __init__(self, types: frozenset[EventType] = DEFAULT_FORWARDED) -> None:
        self.types = types
        self._buffer: list[Event] = []
        self._lock = threading.Lock()

    def attach(self, session: ContextSession) -> Callable[[], None]:
        """Start buffering ``session``'s events of the forwarded types; returns the unsubscribe function.

        One subscription per forwarded type, not one for every event: a type nobody forwards (``context_update``,
        by default) is then not even built by the session, which skips it on the per-message path.
        """
        unsubscribes = [session.subscribe(self.record, event_type) for event_type in sorted(self.types)]

        def unsubscribe() -> None:
            for undo in unsubscribes:
                undo()

        return unsubscribe

    def record(self, event: Event) -> None:
        """Buffer one event (a session listener)."""
        if event.type in self.types:
            with self._lock:
                self._buffer.append(event)

    def _take(self) -> list[Event]:
        with self._lock:
            events, self._buffer = self._buffer, []
        return events

    def flush(self, config: RunnableConfig | None = None) -> list[Event]:
        """Dispatch buffered events into the current run (sync); returns them."""
        if not self._buffer:  # the common case: nothing to dispatch, so no config to look up
            return []
        events = self._take()
        active = ensure_config(config)
        if events and _in_run(active):
            for event in events:
                dispatch_custom_event(event_name(event), event.model_dump(mode="json"), config=active)
        return events

    async def aflush(self, config: RunnableConfig | None = None) -> list[Event]:
        """Dispatch buffered events into the current run (async); returns them."""
        if not self._buffer:
            return []
        events = self._take()
        active = ensure_config(config)
        if events and _in_run(active):
            for event in events:
                await adispatch_custom_event(event_name(event), event.model_dump(mode="json"), config=active)
        return events
