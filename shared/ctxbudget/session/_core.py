"""What every part of a :class:`~ctxbudget.session.session.ContextSession` builds on: configuration, state, measuring.

:class:`SessionCore` takes the constructor's arguments, owns the session's
:class:`~ctxbudget.session.conversation.Conversation`, tracker and event bus, and says how full the window is.
Adding messages (:mod:`ctxbudget.session._adding`) and requests, compaction, planned context, snapshots and
read-back (:mod:`ctxbudget.session.session`) are built on top of it through its public members and
:func:`emit_update`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ..archive.store import Archive
from ..cognitive import CognitiveContextSession, check_providers
from ..compaction.policy import CompactionPolicy
from ..compaction.summarize import AsyncSummarizer, ExtractiveSummarizer, Summarizer
from ..context.planner import PlanResult
from ..errors import InvalidMessageError, InvalidPolicyError
from ..messages.message import Message, ToolSchema
from ..messages.registry import DEFAULT_REGISTRY, ModelRegistry
from ..messages.tokens import TokenCounter
from ._args import (
    check_arguments,
    check_components,
    check_subscription,
    check_text,
    check_type,
    check_window_fits,
    resolve_budget,
)
from .conversation import Conversation
from .events import CognitiveContextBound, ContextCompacted, ContextUpdate, Event, EventBus, EventType, ToolResultUnsent
from .live_history import UnsentResult
from .request import PreCompact
from .tracking import ContextState, ContextWindowTracker

__all__ = ["SessionCore", "emit_update"]


class SessionCore:
    """The configuration, state and accounting of a :class:`~ctxbudget.session.session.ContextSession`.

    Takes the arguments :class:`~ctxbudget.session.session.ContextSession` documents.
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        counter: TokenCounter | None = None,
        system_prompt: str | None = None,
        tools: Sequence[ToolSchema] = (),
        policy: CompactionPolicy | None = None,
        summarizer: Summarizer | AsyncSummarizer | None = None,
        session_id: str | None = None,
        compact_instructions: str | None = None,
        registry: ModelRegistry = DEFAULT_REGISTRY,
        cognitive: CognitiveContextSession | None = None,
        providers: Sequence[object] = (),
    ) -> None:
        if cognitive is not None and not isinstance(cognitive, CognitiveContextSession):
            raise InvalidPolicyError(
                f"cognitive: expected a CognitiveContextSession, got {type(cognitive).__name__}", field="cognitive"
            )
        check_arguments(counter=counter, system_prompt=system_prompt, tools=tools, policy=policy, session_id=session_id)
        check_components(
            summarizer=summarizer, registry=registry, compact_instructions=compact_instructions, providers=providers
        )
        self.memory_recall_suppressed = check_providers(providers, bound=cognitive is not None)
        self.providers = tuple(providers)
        self.session_id = session_id or f"ses_{uuid.uuid4().hex}"
        self.model = model
        self.max_tokens, self.counter = resolve_budget(
            model=model,
            max_tokens=max_tokens,
            counter=counter,
            system_prompt=system_prompt,
            tools=tools,
            registry=registry,
        )
        self.policy = policy or CompactionPolicy()
        self.summarizer: Summarizer | AsyncSummarizer = summarizer or ExtractiveSummarizer(self.counter)
        self._offline = self.summarizer if isinstance(self.summarizer, ExtractiveSummarizer) else None
        self.compact_instructions = compact_instructions
        self.tracker = ContextWindowTracker(self.max_tokens)
        self.events = EventBus(self.session_id)
        self.pre_compact_hooks: list[Callable[[PreCompact], None]] = []
        self.post_compact_hooks: list[Callable[[ContextCompacted], None]] = []
        self._conv = Conversation(
            session_id=self.session_id,
            counter=self.counter,
            max_tokens=self.max_tokens,
            system_prompt=system_prompt,
            tools=tools,
            on_unsent=self._report_unsent,
        )
        self._lock = self._conv.lock
        self.log_seq = 0
        self.last_plan: PlanResult | None = None
        self.cognitive: CognitiveContextSession | None = None
        if cognitive is not None:
            self.cognitive = cognitive.with_event_callback(self._on_cognitive_event)
            self._on_cognitive_event(*cognitive.bound_event())

    @property
    def system_prompt(self) -> str | None:
        """The system prompt sent first in every request."""
        return self._conv.system_prompt

    @system_prompt.setter
    def system_prompt(self, value: str | None) -> None:
        check_arguments(counter=None, system_prompt=value, tools=(), policy=None, session_id=None)
        check_window_fits(self.counter, value, self._conv.tools, self.max_tokens)
        with self._lock:
            self._conv.set_system_prompt(value)
            emit_update(self)

    @property
    def tools(self) -> tuple[ToolSchema, ...]:
        """Tool schemas exposed to the model."""
        return self._conv.tools

    @tools.setter
    def tools(self, value: Sequence[ToolSchema]) -> None:
        check_arguments(counter=None, system_prompt=None, tools=value, policy=None, session_id=None)
        check_window_fits(self.counter, self._conv.system_prompt, value, self.max_tokens)
        with self._lock:
            self._conv.set_tools(value)
            emit_update(self)

    def set_threshold(self, threshold: float | Literal[False]) -> None:
        """Change the auto-compaction threshold on a live session, or pass ``False`` to turn auto-compaction off.

        A number must be a fraction in (0, 1]; the target and hard stop move with it when needed. Passing a number
        turns auto-compaction back on.
        """
        if threshold is False:
            self.policy = self.policy.with_changes(auto=False)
            return
        number = isinstance(threshold, (int, float)) and not isinstance(threshold, bool)
        target = min(self.policy.target, threshold) if number else self.policy.target
        hard = max(self.policy.hard_stop, threshold) if number else self.policy.hard_stop
        self.policy = self.policy.with_changes(threshold=threshold, target=target, hard_stop=min(1.0, hard), auto=True)

    def subscribe(self, listener: Callable[[Event], None], event_type: EventType | None = None) -> Callable[[], None]:
        """Receive events (all, or one type); returns an unsubscribe function."""
        check_subscription(listener, event_type)
        return self.events.subscribe(listener, event_type)

    def trace_events(self) -> list[dict[str, Any]]:
        """A compact runtime record of recent events."""
        return self.events.trace()

    # -- history -------------------------------------------------------------------------------------------------------
    @property
    def conversation(self) -> Conversation:
        """The state object behind this session (history, summary, goal, pins, archive, accounting).

        For stores, snapshots and compaction; hold :attr:`Conversation.lock` while reading it from another thread.
        """
        return self._conv

    @property
    def archive(self) -> Archive:
        """Every original the session bounded, cleared, summarized or dropped, by handle."""
        return self._conv.archive

    @property
    def history(self) -> list[Message]:
        """The live history (a copy), without system prompt, summary or pinned messages."""
        return list(self._conv.live.messages)

    @property
    def summary(self) -> str | None:
        """The cumulative summary of everything compacted so far."""
        return self._conv.summary

    @property
    def offline_summarizer(self) -> ExtractiveSummarizer:
        """The offline ledger builder this session's extractive tiers use (the summarizer itself when it is one).

        It remembers what it has read, so each message is read once in the session's life.
        """
        if isinstance(self.summarizer, ExtractiveSummarizer):
            return self.summarizer
        if self._offline is None:
            self._offline = ExtractiveSummarizer(self.counter)
        return self._offline

    @property
    def goal(self) -> str | None:
        """The user's goal: the first user request, or what :meth:`pin_goal` set."""
        return self._conv.goal

    @property
    def goal_message_id(self) -> str | None:
        """The id of the message the goal was taken from (``None`` when pinned explicitly or unset)."""
        return self._conv.goal_id

    @property
    def pinned(self) -> tuple[Message, ...]:
        """Pinned messages sent after the summary in every request (from :meth:`pin`, and pinned history)."""
        return self._conv.pinned

    @property
    def pinned_ids(self) -> frozenset[str]:
        """Ids of history messages added with ``metadata={"pinned": True}``."""
        return self._conv.pinned_ids

    def pin_goal(self, text: str) -> None:
        """Pin the user's goal explicitly; it survives every compaction verbatim."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidMessageError("goal: must be a non-empty string", field="goal")
        check_text("goal", text, InvalidMessageError)
        with self._lock:
            self._conv.set_goal(text)
            emit_update(self)

    def clear_goal(self) -> None:
        """Forget the pinned goal (e.g. when a new conversation replaces the history).

        The goal is taken again from the next user message added, or from the first user message still live.
        """
        with self._lock:
            first = self._conv.first_user_message()
            if first is None:
                self._conv.set_goal(None)
            else:
                self._conv.set_goal(first.text, first.id)
            emit_update(self)

    def pin(self, text: str, *, pin_id: str | None = None) -> Message:
        """Pin a fragment of text: sent in every request after the summary, never compacted."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidMessageError("pin: text must be a non-empty string", field="text")
        if pin_id is not None:
            check_type("pin_id", pin_id, str, InvalidMessageError)
        message = Message(
            role="user", content=text, metadata={"ctxbudget": "pinned"}, **({"id": pin_id} if pin_id else {})
        )
        with self._lock:
            self._conv.add_pin(message)
            emit_update(self)
        return message

    # -- measuring -----------------------------------------------------------------------------------------------------
    def counted_tokens(self) -> int:
        """Our own count of the request as it stands (system, tools, pinned, summary, history, notices)."""
        return self._conv.counted_tokens()

    @property
    def state(self) -> ContextState:
        """How full the window is now."""
        exact = getattr(self.counter, "exact", None)  # a counter of the caller's own may not say
        return self.tracker.state(self.counted_tokens(), exact=exact if isinstance(exact, bool) else None)

    # -- events the state objects report -------------------------------------------------------------------------------
    def _report_unsent(self, unsent: UnsentResult) -> None:
        """A tool result that answers no open call is kept but never sent: say so (once per message)."""
        self.events.emit(
            ToolResultUnsent(
                session_id=self.session_id,
                seq=self.events.next_seq(),
                message_id=unsent.message.id,
                tool_call_id=unsent.message.tool_call_id or "",
                reason=unsent.reason,
            )
        )

    def _on_cognitive_event(self, name: str, payload: dict[str, Any]) -> None:
        binding = payload.get("binding")
        self.events.emit(
            CognitiveContextBound(
                session_id=self.session_id,
                seq=self.events.next_seq(),
                binding=binding if isinstance(binding, dict) else {},
            )
        )


def emit_update(session: SessionCore) -> None:
    """Tell ``session``'s listeners how full the window is now (a ``context_update`` event).

    With no listener for it the event is not built (a per-turn hot path): the usage goes to the trace only.
    """
    events = session.events
    seq = events.next_seq()
    if events.wants("context_update"):
        events.emit(ContextUpdate(session_id=session.session_id, seq=seq, state=session.state))
    else:
        events.record_usage(seq, session.tracker.used(session.counted_tokens()))
