"""The working copy a compaction runs on: the history, each message's token size, and the outcome so far.

Nothing here mutates the caller's history: a :class:`WorkingHistory` holds a copy, keeps the token size of each of
its messages (and their total) in step with every change, and records what it archived in a
:class:`CompactionOutcome` the session commits in one step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..archive.store import ArchiveReason
from ..messages.message import Message, ToolCall
from ..messages.tokens import TokenCounter, count_message_by_lines
from ..messages.toolpairs import safe_cut_points
from ._markers import ARCHIVE_META, handle_for, pinned_form
from .policy import CompactionPolicy
from .receipt import ArchivedItem

__all__ = ["CompactionOutcome", "WorkingHistory"]


@dataclass
class CompactionOutcome:
    """What a compaction decided; the session commits it atomically."""

    history: list[Message]
    summary: str | None
    archived: list[tuple[Message, ArchiveReason]] = field(default_factory=list)
    receipt: list[ArchivedItem] = field(default_factory=list)
    tiers: list[str] = field(default_factory=list)
    pinned: list[Message] = field(default_factory=list)
    fallback_reason: str | None = None
    tokens: int = 0


class WorkingHistory:
    """A copy of the history being compacted, measured as it changes.

    Args:
        history: the live history (not modified).
        counter: the session's token counter.
        policy: the compaction policy.
        window: the prompt budget in tokens.
        target_tokens: the tiers stop once the request is at or under this.
        fixed_tokens: what the request costs besides history and summary.
        summary: the current cumulative summary.
        render_summary: turns a summary (and whether the goal message is still live) into the message that carries it.
        goal_id: the id of the user's goal message.
        pinned_ids: ids of messages that must survive verbatim.
        original_of: the archived original of a live message the session bounded or cleared, or ``None``.
        sizes: the token size of each history message, when the caller keeps them (else they are counted).

    ``out`` is the outcome so far (its ``history`` the working copy), ``sizes`` the token size of each of its
    messages and ``history_tokens`` their sum: the tiers read them, and change them only through
    :meth:`replace`, :meth:`archive_span` and :meth:`extend`.
    """

    def __init__(
        self,
        history: Sequence[Message],
        *,
        counter: TokenCounter,
        policy: CompactionPolicy,
        window: int,
        target_tokens: int,
        fixed_tokens: int,
        summary: str | None,
        render_summary: Callable[[str | None, bool], Message | None],
        goal_id: str | None,
        pinned_ids: frozenset[str],
        original_of: Callable[[Message], Message | None],
        sizes: Sequence[int] | None,
    ) -> None:
        self.counter = counter
        self.policy = policy
        self.window = window
        self.target = target_tokens
        self.fixed = fixed_tokens
        self.render_summary = render_summary
        self.goal_id = goal_id
        self.goal_live = goal_id is not None and any(m.id == goal_id for m in history)
        self.pinned_ids = pinned_ids
        self._original_of = original_of
        self._pending: dict[str, Message] = {}  # message id -> original archived by this run
        self._summary_memo: tuple[tuple[str | None, bool], int] | None = None
        self._call_names: dict[str, str] | None = None  # call id -> tool name, for never_clear_tools
        self.out = CompactionOutcome(history=list(history), summary=summary)
        self.sizes = list(sizes) if sizes is not None else [counter.count_message(m) for m in self.out.history]
        self._calls_by_id: dict[str, ToolCall] | None = None
        self._safe: list[bool] | None = None  # safe_cut_points of out.history, until its calls or results change
        self.history_tokens = sum(self.sizes)  # kept in step with sizes: total() runs once per step of a tier

    # -- measuring ---------------------------------------------------------------------------------------------
    def total(self) -> int:
        """Tokens the request would cost with the work so far."""
        return self.fixed + self.history_tokens + self._summary_cost(self.out.summary, self.goal_live)

    @property
    def hard_stop_tokens(self) -> int:
        """The most a request may cost: the policy's hard stop of the window."""
        return int(self.policy.hard_stop * self.window)

    def summary_tokens(self, summary: str | None, goal_live: bool) -> int:
        """Tokens of the message that would carry ``summary`` (and the goal unless ``goal_live``); 0 when none would.

        Counted by lines (:func:`~ctxbudget.messages.tokens.count_message_by_lines`): a summary written again, or its
        empty frame, costs only what is new in it.
        """
        message = self.render_summary(summary, goal_live)
        return count_message_by_lines(self.counter, message) if message is not None else 0

    def _summary_cost(self, summary: str | None, goal_live: bool) -> int:
        """:meth:`summary_tokens`, remembered for the last summary measured (``total`` asks at every step)."""
        key = (summary, goal_live)
        if self._summary_memo is None or self._summary_memo[0] != key:
            self._summary_memo = (key, self.summary_tokens(summary, goal_live))
        return self._summary_memo[1]

    def done(self) -> bool:
        """True once the request is at or under target."""
        return self.total() <= self.target

    def original(self, message: Message) -> Message:
        """The original of a live message: itself, or the archived original of a copy we bounded or cleared."""
        return self._pending.get(message.id) or self._original_of(message) or message

    def archived_handle(self, message: Message) -> str | None:
        """The handle of the archived original of ``message`` when it is a copy we made, else ``None``."""
        original = self._pending.get(message.id) or self._original_of(message)
        if original is None:
            return None
        handle = message.metadata.get(ARCHIVE_META)
        return handle if isinstance(handle, str) else None

    def calls(self) -> dict[str, ToolCall]:
        """The history's tool calls by id (what a result answers), built once per run."""
        if self._calls_by_id is None:
            self._calls_by_id = {call.id: call for m in self.out.history for call in m.tool_calls}
        return self._calls_by_id

    def call_names(self) -> dict[str, str]:
        """The tool name of each call by id, built once per run."""
        if self._call_names is None:
            self._call_names = {call.id: call.name for m in self.out.history for call in m.tool_calls}
        return self._call_names

    def safe_cuts(self) -> list[bool]:
        """:func:`~ctxbudget.messages.toolpairs.safe_cut_points` of the copy's history, kept until its pairs change.

        Bounding and clearing replace a message's content, not its calls or the call it answers: the cut points
        stay, and the tiers after them read the same list.
        """
        if self._safe is None:
            self._safe = safe_cut_points(self.out.history)
        return self._safe

    # -- changing the copy -------------------------------------------------------------------------------------
    def extend(self, messages: Sequence[Message]) -> None:
        """Append messages that arrived while a summary was being made (they are newer than any cut)."""
        self._call_names = None
        self._calls_by_id = None
        self._safe = None
        for message in messages:
            self.out.history.append(message)
            self.sizes.append(self.counter.count_message(message))
            self.history_tokens += self.sizes[-1]

    def replace(self, index: int, new: Message, reason: ArchiveReason, handle: str | None = None) -> None:
        """Put ``new`` in place of the message at ``index``, its original archived (now, unless ``handle`` says)."""
        old = self.out.history[index]
        if (old.role, old.tool_call_id, [c.id for c in old.tool_calls]) != (
            new.role,
            new.tool_call_id,
            [c.id for c in new.tool_calls],
        ):
            self._safe = None  # not what the tiers do (they keep a message's pairs), but then the cut points move
        if handle is None:  # the original is not archived yet: archive it now
            handle = handle_for(old, reason)
            self.out.archived.append((old, reason))
            self._pending[old.id] = old
        self.out.history[index] = new.model_copy(update={"metadata": {**new.metadata, ARCHIVE_META: handle}})
        after = self.counter.count_message(self.out.history[index])
        self.out.receipt.append(
            ArchivedItem(
                message_id=old.id, handle=handle, reason=reason, tokens_before=self.sizes[index], tokens_after=after
            )
        )
        self.history_tokens += after - self.sizes[index]
        self.sizes[index] = after

    def archive_span(self, start: int, end: int, reason: ArchiveReason, *, summarized: bool = False) -> list[Message]:
        """Archive ``history[start:end]`` and take it out of the copy (a pinned message is kept in its pinned form)."""
        span = self.out.history[start:end]
        for message, size in zip(span, self.sizes[start:end], strict=True):
            if message.id in self.pinned_ids:
                self.out.pinned.append(pinned_form(self.original(message)))
            handle = self.archived_handle(message)
            if handle is None:  # not yet archived; a bounded or cleared copy's original already is
                handle = handle_for(message, reason)
                self.out.archived.append((message, reason))
            self.out.receipt.append(
                ArchivedItem(
                    message_id=message.id,
                    handle=handle,
                    reason=reason,
                    tokens_before=size,
                    tokens_after=0,
                    summarized=summarized,
                )
            )
        del self.out.history[start:end]
        self._safe = None
        self.history_tokens -= sum(self.sizes[start:end])
        del self.sizes[start:end]
        if self.goal_live and any(m.id == self.goal_id for m in span):
            self.goal_live = False
        return span
