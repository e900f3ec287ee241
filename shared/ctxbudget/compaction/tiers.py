"""Compaction as a pipeline of small tiers that re-measure after each and stop once under target.

1. ``bound``: tool outputs over the per-output limit keep a head/tail excerpt and a handle; the full text is
   archived.
2. ``clear``: older tool results (outside the newest protected budget) become a short marker with the handle, oldest
   first, until under target.
3. ``summarize``: the older safe prefix is replaced by a cumulative summary; the recent tail is kept and the cut is
   pulled back so no tool result is separated from its call. Falls back to ``extractive`` when the configured
   summarizer fails, times out, returns blank or oversized text, or is cancelled.
4. ``truncate``: while still over target, the smallest safe prefix of the kept tail is archived (never past the
   latest user request, an unresolved tool call or the newest message), and folded into the summary extractively.

Nothing here mutates the caller's history: a :class:`Compaction` works on a copy and hands back a
:class:`CompactionOutcome` the session commits in one step, so a failure anywhere leaves history untouched.

:class:`Compaction` is the pipeline the session drives; the copy it works on is ``_working``, tiers 1 and 2 are in
``_clearing``, tier 3 in ``_summary_tier``, tier 4 in ``_truncation``, and what compaction writes into messages
(metadata keys, handles, markers, pinned forms) in ``_markers``. Their public names are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..messages.message import Message
from ..messages.tokens import TokenCounter
from . import _clearing, _truncation
from ._markers import (
    ARCHIVE_META,
    CLEARED_META,
    cleared_marker,  # noqa: F401  # re-exported: the helpers lived here before the split
    handle_for,  # noqa: F401
    pinned_form,
)
from ._summary_tier import (
    SummaryPlanner,
    SummaryStep,
    split_message,  # noqa: F401
    summary_estimate,  # noqa: F401
    user_texts,  # noqa: F401
    validate_summary,
)
from ._working import CompactionOutcome, WorkingHistory
from .policy import CompactionPolicy
from .summarize import ExtractiveSummarizer

__all__ = [
    "ARCHIVE_META",
    "CLEARED_META",
    "Compaction",
    "CompactionOutcome",
    "SummaryStep",
    "pinned_form",
    "validate_summary",
]


class Compaction:
    """One compaction run over a copy of the history.

    Args:
        history: the live history (not modified).
        counter: the session's token counter.
        policy: the compaction policy.
        window: the prompt budget in tokens.
        target_tokens: stop once the request is at or under this.
        fixed_tokens: what the request costs besides history and summary (system, tools, pinned, priming).
        summary: the current cumulative summary.
        render_summary: turns a summary (and whether the goal message is still live) into the message that carries
            it, so it is measured exactly.
        goal: the user's goal, pinned verbatim.
        instructions: Compact Instructions plus manual focus.
        pinned_ids: ids of messages that must survive verbatim.
        original_of: the archived original of a live message the session bounded or cleared (verified against the
            archive, never read from caller-writable metadata alone), or ``None`` for a message that is its own
            original.
        sizes: the token size of each history message, when the caller keeps them (else they are counted).
        offline: the session's offline summarizer, for the extractive tiers (it remembers what it has read); a new
            one by default.
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
        goal: str | None = None,
        goal_id: str | None = None,
        instructions: str | None = None,
        pinned_ids: frozenset[str] = frozenset(),
        original_of: Callable[[Message], Message | None] = lambda _message: None,
        sizes: Sequence[int] | None = None,
        offline: ExtractiveSummarizer | None = None,
    ) -> None:
        self.counter = counter
        self.policy = policy
        self.window = window
        self.target = target_tokens
        self.fixed = fixed_tokens
        self.render_summary = render_summary
        self.goal = goal
        self.goal_id = goal_id
        self.instructions = instructions
        self.pinned_ids = pinned_ids
        self.work = WorkingHistory(
            history,
            counter=counter,
            policy=policy,
            window=window,
            target_tokens=target_tokens,
            fixed_tokens=fixed_tokens,
            summary=summary,
            render_summary=render_summary,
            goal_id=goal_id,
            pinned_ids=pinned_ids,
            original_of=original_of,
            sizes=sizes,
        )
        self.out = self.work.out
        self.offline = offline or ExtractiveSummarizer(counter)
        self._summary = SummaryPlanner(self.work, goal=goal, instructions=instructions, offline=self.offline)

    # -- measuring ---------------------------------------------------------------------------------------------
    @property
    def goal_live(self) -> bool:
        """The goal message is still in the working copy."""
        return self.work.goal_live

    def total(self) -> int:
        """Tokens the request would cost with the work so far."""
        return self.work.total()

    @property
    def hard_stop_tokens(self) -> int:
        """The most a request may cost: the policy's hard stop of the window."""
        return self.work.hard_stop_tokens

    def extend(self, messages: Sequence[Message]) -> None:
        """Append messages that arrived while a summary was being made (they are newer than any cut)."""
        self.work.extend(messages)

    def done(self) -> bool:
        """True once the request is at or under target."""
        return self.work.done()

    def original(self, message: Message) -> Message:
        """The original of a live message: itself, or the archived original of a copy we bounded or cleared."""
        return self.work.original(message)

    def archived_handle(self, message: Message) -> str | None:
        """The handle of the archived original of ``message`` when it is a copy we made, else ``None``."""
        return self.work.archived_handle(message)

    # -- tier 1 and 2 ------------------------------------------------------------------------------------------
    def bound(self) -> None:
        """Tier 1: bound tool outputs over the per-output limit to a head/tail excerpt, oldest first, to target."""
        _clearing.bound(self.work)

    def clear(self) -> None:
        """Tier 2: replace older tool results with a marker, oldest first, outside the newest protected budget."""
        _clearing.clear(self.work, self.offline)

    # -- tier 3 ------------------------------------------------------------------------------------------------
    def plan_summary(self, summary_limit: int, *, force: bool = False, whole_pairs: bool = False) -> SummaryStep | None:
        """Choose the span to summarize (:meth:`SummaryPlanner.plan_summary`)."""
        return self._summary.plan_summary(summary_limit, force=force, whole_pairs=whole_pairs)

    def refit(self, step: SummaryStep, summary: str) -> SummaryStep | None:
        """A step over a shorter span when ``summary`` left room (:meth:`SummaryPlanner.refit`)."""
        return self._summary.refit(step, summary)

    def fits(self, step: SummaryStep, summary: str) -> bool:
        """The request would be at or under target once ``summary`` replaces the span of ``step``."""
        return self._summary.fits(step, summary)

    def saves(self, step: SummaryStep, summary: str) -> bool:
        """``summary`` costs less than what it replaces (:meth:`SummaryPlanner.saves`)."""
        return self._summary.saves(step, summary)

    def fit_limit(self, summary_limit: int) -> int:
        """The summary limit for this run (:meth:`SummaryPlanner.fit_limit`)."""
        return self._summary.fit_limit(summary_limit)

    def apply_summary(self, step: SummaryStep, summary: str, tier: str) -> bool:
        """Replace the span of ``step`` with ``summary``, if that makes the request smaller."""
        return self._summary.apply_summary(step, summary, tier)

    def extractive(self, step: SummaryStep, summary_limit: int) -> str:
        """The offline fallback summary for ``step`` (deterministic, bounded by our counter)."""
        return self._summary.extractive(step, summary_limit)

    # -- tier 4 ------------------------------------------------------------------------------------------------
    def truncate(self, summary_limit: int) -> None:
        """Archive the smallest safe prefix of the tail while over target (:func:`_truncation.truncate`)."""
        _truncation.truncate(self.work, summary_limit, goal=self.goal, offline=self.offline)

    def finish(self) -> CompactionOutcome:
        """The outcome, with its final token figure."""
        self.out.tokens = self.total()
        return self.out
