"""How a :class:`~ctxbudget.session.session.ContextSession` runs a compaction: hooks, tiers, summarizer, commit, events.

The tiers themselves live in :mod:`ctxbudget.compaction.tiers` (pure, on a copy of the history); this module drives them
for a session, sync or async, and commits the outcome in one step, so a failure anywhere leaves history untouched.
These are the session's internals, kept apart so ``session.py`` holds the conversation and its accounting only.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from typing import Literal, Protocol

from ..compaction._summary_runs import SummaryRun
from ..compaction.policy import CompactionPolicy
from ..compaction.summarize import AsyncSummarizer, ExtractiveSummarizer, Summarizer
from ..compaction.tiers import Compaction, CompactionOutcome, SummaryStep
from ..errors import CompactionError, SummarizerError
from ..messages.tokens import TokenCounter
from .conversation import Conversation
from .events import CompactionFailed, ContextCompacted, EventBus
from .request import PreCompact
from .tracking import ContextState, ContextWindowTracker

__all__: list[str] = []

_log = logging.getLogger("ctxbudget.compaction")

Trigger = Literal["auto", "manual"]
"""What started a compaction."""


class CompactionHost(Protocol):
    """What a compaction needs from the session it runs for (:class:`~ctxbudget.session.session.ContextSession` has it).

    The state compaction reads and commits is the :class:`~ctxbudget.session.conversation.Conversation`; the rest is the
    session's configuration, tracker, events and hooks.
    """

    @property
    def session_id(self) -> str: ...
    @property
    def counter(self) -> TokenCounter: ...
    @property
    def policy(self) -> CompactionPolicy: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def summarizer(self) -> Summarizer | AsyncSummarizer: ...
    @property
    def offline_summarizer(self) -> ExtractiveSummarizer: ...
    @property
    def compact_instructions(self) -> str | None: ...
    @property
    def tracker(self) -> ContextWindowTracker: ...
    @property
    def events(self) -> EventBus: ...
    @property
    def pre_compact_hooks(self) -> list[Callable[[PreCompact], None]]: ...
    @property
    def post_compact_hooks(self) -> list[Callable[[ContextCompacted], None]]: ...
    @property
    def conversation(self) -> Conversation: ...
    @property
    def state(self) -> ContextState: ...


def instructions_for(session: CompactionHost, manual: str | None) -> str | None:
    """Compact Instructions from the project plus the manual focus, or ``None``."""
    joined = "\n\n".join(part for part in (session.compact_instructions, manual) if part and part.strip())
    return joined or None


def start(session: CompactionHost, trigger: Trigger, instructions: str | None) -> Compaction:
    """Run the PreCompact hooks and set up a compaction over the session's current state."""
    event = PreCompact(session_id=session.session_id, trigger=trigger, state=session.state, instructions=instructions)
    for hook in session.pre_compact_hooks:
        hook(event)
    # A ratio below 1 (a snapshot from before the reading was floored at our own count) never widens the target.
    ratio = max(1.0, session.tracker.calibration.ratio) if session.tracker.calibration.samples else 1.0
    conversation = session.conversation
    return Compaction(
        conversation.live.messages,
        counter=session.counter,
        policy=session.policy,
        window=session.max_tokens,
        target_tokens=math.floor(session.policy.target * session.max_tokens / ratio),
        fixed_tokens=conversation.fixed_tokens(),
        summary=conversation.summary,
        render_summary=conversation.summary_message,
        goal=conversation.shown_goal(),
        goal_id=conversation.goal_id,
        instructions=instructions,
        pinned_ids=conversation.pinned_ids,
        original_of=conversation.original_of,
        sizes=conversation.sent_sizes(),  # each message with the synthetic results and notice it brings
        offline=session.offline_summarizer,
    )


def summary_limit(session: CompactionHost) -> int:
    """The largest summary, in tokens, for this session's window."""
    return session.policy.summary_limit(session.max_tokens)


def report_failure(session: CompactionHost, trigger: Trigger, tier: str, error: BaseException) -> None:
    """Emit ``compaction_failed`` for a tier that failed (the history is unchanged by it)."""
    session.events.emit(
        CompactionFailed(
            session_id=session.session_id,
            seq=session.events.next_seq(),
            trigger=trigger,
            tier=tier,
            error=f"{type(error).__name__}: {error}",
        )
    )


def compact_sync(
    session: CompactionHost, trigger: Trigger, manual: str | None, *, force: bool, raise_errors: bool
) -> ContextCompacted | None:
    """Compact on the calling thread; errors leave history untouched (raised or reported as an event)."""
    try:
        before = session.state
        work = start(session, trigger, instructions_for(session, manual))
        early_tiers(work)
        limit = work.fit_limit(summary_limit(session))
        fallback = None
        if force or not work.done():
            run = summary_run(session, limit)
            step = work.plan_summary(limit, force=force, whole_pairs=run.offline)
            if step is not None:
                try:
                    summary = run.run(step)
                    step, summary = refitted(work, run, step, summary)
                    work.apply_summary(step, summary, "summarize")
                except SummarizerError as exc:
                    fallback = str(exc)
                    report_failure(session, trigger, "summarize", exc)
                    work.apply_summary(step, work.extractive(step, limit), "extractive")
        if not work.done():
            work.truncate(summary_limit(session))  # it sizes each fold to the room it leaves
        return commit(session, work.finish(), trigger, before, fallback)
    except Exception as exc:
        report_failure(session, trigger, "compaction", exc)
        if raise_errors:
            raise CompactionError(f"compaction failed, history unchanged: {type(exc).__name__}: {exc}") from exc
        return None


async def compact_async(
    session: CompactionHost, trigger: Trigger, manual: str | None, *, force: bool, raise_errors: bool
) -> ContextCompacted | None:
    """Like :func:`compact_sync`, but the summarizer is awaited outside the lock.

    Messages appended while the summarizer runs join the outcome. If the history is *replaced* meanwhile (another
    compaction, a sync), the work is recomputed on the fresh history (up to three times); after that the offline
    extractive tier runs under the lock, so a busy session still compacts.
    """
    try:
        for _attempt in range(3):
            conversation = session.conversation
            with conversation.lock:
                before = session.state
                work = start(session, trigger, instructions_for(session, manual))
                early_tiers(work)
                limit = work.fit_limit(summary_limit(session))
                run = summary_run(session, limit)
                step = (
                    work.plan_summary(limit, force=force, whole_pairs=run.offline)
                    if (force or not work.done())
                    else None
                )
                planned, planned_summary = conversation.live.messages, conversation.summary
                planned_len = len(planned)
            fallback = None
            summary: str | None = None
            if step is not None:
                try:
                    summary = await run.arun(step)
                except SummarizerError as exc:
                    fallback = str(exc)
                    report_failure(session, trigger, "summarize", exc)
            with conversation.lock:
                if conversation.live.messages is not planned or conversation.summary is not planned_summary:
                    continue  # the history was replaced while we awaited: recompute on the fresh state
                # Messages only appended meanwhile: the paid-for summary still covers the same span.
                work.extend(conversation.live.messages[planned_len:])
                if step is not None:
                    if summary is None:
                        summary, tier = work.extractive(step, limit), "extractive"
                    else:
                        tier = "summarize"
                    work.apply_summary(step, summary, tier)
                if not work.done():
                    work.truncate(summary_limit(session))  # it sizes each fold to the room it leaves
                return commit(session, work.finish(), trigger, before, fallback)
        with session.conversation.lock:
            return compact_offline(session, trigger, manual, force=force)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        report_failure(session, trigger, "compaction", exc)
        if raise_errors:
            raise CompactionError(f"compaction failed, history unchanged: {type(exc).__name__}: {exc}") from exc
        return None


def compact_offline(session: CompactionHost, trigger: Trigger, manual: str | None, *, force: bool) -> ContextCompacted:
    """Compact with the extractive summarizer only (no external call), under the caller's lock."""
    before = session.state
    work = start(session, trigger, instructions_for(session, manual))
    early_tiers(work)
    limit = work.fit_limit(summary_limit(session))
    step = work.plan_summary(limit, force=force, whole_pairs=True) if (force or not work.done()) else None
    if step is not None:
        summary = work.extractive(step, limit)
        shorter = work.refit(step, summary)
        again = work.extractive(shorter, limit) if shorter is not None else None
        if shorter is not None and again is not None and work.fits(shorter, again) and work.saves(shorter, again):
            step, summary = shorter, again
        work.apply_summary(step, summary, "extractive")
    if not work.done():
        work.truncate(summary_limit(session))  # it sizes each fold to the room it leaves
    return commit(session, work.finish(), trigger, before, "the history kept changing while the summarizer ran")


def early_tiers(work: Compaction) -> None:
    """Tiers 1 and 2: bound oversized tool outputs, then clear old tool results, while over target."""
    if not work.done():
        work.bound()
    if not work.done():
        work.clear()


def refitted(work: Compaction, run: SummaryRun, step: SummaryStep, summary: str) -> tuple[SummaryStep, str]:
    """The offline summary over a shorter span when the first one left room (a model is not asked twice)."""
    if not run.offline:
        return step, summary
    shorter = work.refit(step, summary)
    if shorter is None:
        return step, summary
    again = run.run(shorter)
    return (shorter, again) if work.fits(shorter, again) and work.saves(shorter, again) else (step, summary)


def summary_run(session: CompactionHost, limit: int) -> SummaryRun:
    """The summarizer call settings (timeout, the run's summary limit, counter) for this session."""
    return SummaryRun(
        session.summarizer, session.policy.summarizer_timeout, limit, session.counter, session.offline_summarizer
    )


def commit(
    session: CompactionHost, outcome: CompactionOutcome, trigger: Trigger, before: ContextState, fallback: str | None
) -> ContextCompacted:
    """Apply an outcome in one step: archive, history, summary, pins; reset tracking; hooks and events.

    The caller emits the ``context_update`` that follows (the session's, after this returns).
    """
    session.conversation.commit(outcome)
    session.tracker.reset()
    after = session.state
    tiers = tuple(outcome.tiers) or ("none",)
    event = ContextCompacted(
        session_id=session.session_id,
        seq=session.events.next_seq(),
        trigger=trigger,
        tier=tiers[-1],
        tiers=tiers,
        before=before,
        after=after,
        summary=session.conversation.summary,
        receipt=tuple(outcome.receipt),
        fallback_reason=fallback,
    )
    errors = []
    for hook in session.post_compact_hooks:  # the compaction is committed: a failing hook is reported, not undone
        try:
            hook(event)
        except Exception as exc:
            errors.append(f"{getattr(hook, '__qualname__', type(hook).__name__)}: {type(exc).__name__}: {exc}")
            _log.warning("PostCompact hook failed after a committed compaction: %s", errors[-1])
    if errors:
        event = event.model_copy(update={"hook_errors": tuple(errors)})
    session.events.emit(event)
    return event
