"""How a :class:`~ctxbudget.session.ContextSession` runs a compaction: hooks, tiers, summarizer, commit, events.

The tiers themselves live in :mod:`ctxbudget.compaction` (pure, on a copy of the history); this module drives them
for a session, sync or async, and commits the outcome in one step, so a failure anywhere leaves history untouched.
These are the session's internals, kept apart so ``session.py`` holds the conversation and its accounting only.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import TYPE_CHECKING, Literal

from ._summary_runs import SummaryRun
from .compaction import Compaction, CompactionOutcome
from .errors import CompactionError, SummarizerError
from .events import CompactionFailed, ContextCompacted
from .request import PreCompact
from .tracking import ContextState

if TYPE_CHECKING:
    from .session import ContextSession

__all__: list[str] = []

_log = logging.getLogger("ctxbudget.compaction")

Trigger = Literal["auto", "manual"]
"""What started a compaction."""


def instructions_for(session: ContextSession, manual: str | None) -> str | None:
    """Compact Instructions from the project plus the manual focus, or ``None``."""
    joined = "\n\n".join(part for part in (session.compact_instructions, manual) if part and part.strip())
    return joined or None


def start(session: ContextSession, trigger: Trigger, instructions: str | None) -> Compaction:
    """Run the PreCompact hooks and set up a compaction over the session's current state."""
    event = PreCompact(session_id=session.session_id, trigger=trigger, state=session.state, instructions=instructions)
    for hook in session.pre_compact_hooks:
        hook(event)
    # A ratio below 1 (a snapshot from before the reading was floored at our own count) never widens the target.
    ratio = max(1.0, session.tracker.calibration.ratio) if session.tracker.calibration.samples else 1.0
    return Compaction(
        session._live.messages,
        counter=session.counter,
        policy=session.policy,
        window=session.max_tokens,
        target_tokens=math.floor(session.policy.target * session.max_tokens / ratio),
        fixed_tokens=session._fixed_tokens(),
        summary=session._summary,
        render_summary=session._summary_message,
        goal=session._goal,
        goal_id=session._goal_id,
        instructions=instructions,
        pinned_ids=frozenset(session._pinned_ids),
        original_of=session._archived_original,
        sizes=session._live.sizes,
    )


def summary_limit(session: ContextSession) -> int:
    """The largest summary, in tokens, for this session's window."""
    return session.policy.summary_limit(session.max_tokens)


def report_failure(session: ContextSession, trigger: Trigger, tier: str, error: BaseException) -> None:
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
    session: ContextSession, trigger: Trigger, manual: str | None, *, force: bool, raise_errors: bool
) -> ContextCompacted | None:
    """Compact on the calling thread; errors leave history untouched (raised or reported as an event)."""
    try:
        before = session.state
        work = start(session, trigger, instructions_for(session, manual))
        early_tiers(work)
        fallback = None
        if force or not work.done():
            step = work.plan_summary(summary_limit(session), force=force)
            if step is not None:
                try:
                    summary = summary_run(session).run(step)
                    work.apply_summary(step, summary, "summarize")
                except SummarizerError as exc:
                    fallback = str(exc)
                    report_failure(session, trigger, "summarize", exc)
                    work.apply_summary(step, work.extractive(step, summary_limit(session)), "extractive")
        if not work.done():
            work.truncate(summary_limit(session))
        return commit(session, work.finish(), trigger, before, fallback)
    except Exception as exc:
        report_failure(session, trigger, "compaction", exc)
        if raise_errors:
            raise CompactionError(f"compaction failed, history unchanged: {type(exc).__name__}: {exc}") from exc
        return None


async def compact_async(
    session: ContextSession, trigger: Trigger, manual: str | None, *, force: bool, raise_errors: bool
) -> ContextCompacted | None:
    """Like :func:`compact_sync`, but the summarizer is awaited outside the lock.

    Messages appended while the summarizer runs join the outcome. If the history is *replaced* meanwhile (another
    compaction, a sync), the work is recomputed on the fresh history (up to three times); after that the offline
    extractive tier runs under the lock, so a busy session still compacts.
    """
    try:
        for _attempt in range(3):
            with session._lock:
                before = session.state
                work = start(session, trigger, instructions_for(session, manual))
                early_tiers(work)
                step = work.plan_summary(summary_limit(session), force=force) if (force or not work.done()) else None
                planned, planned_len, planned_summary = (
                    session._live.messages,
                    len(session._live.messages),
                    session._summary,
                )
            fallback = None
            summary: str | None = None
            if step is not None:
                try:
                    summary = await summary_run(session).arun(step)
                except SummarizerError as exc:
                    fallback = str(exc)
                    report_failure(session, trigger, "summarize", exc)
            with session._lock:
                if session._live.messages is not planned or session._summary is not planned_summary:
                    continue  # the history was replaced while we awaited: recompute on the fresh state
                # Messages only appended meanwhile: the paid-for summary still covers the same span.
                work.extend(session._live.messages[planned_len:])
                if step is not None:
                    if summary is None:
                        summary, tier = work.extractive(step, summary_limit(session)), "extractive"
                    else:
                        tier = "summarize"
                    work.apply_summary(step, summary, tier)
                if not work.done():
                    work.truncate(summary_limit(session))
                return commit(session, work.finish(), trigger, before, fallback)
        with session._lock:
            return compact_offline(session, trigger, manual, force=force)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        report_failure(session, trigger, "compaction", exc)
        if raise_errors:
            raise CompactionError(f"compaction failed, history unchanged: {type(exc).__name__}: {exc}") from exc
        return None


def compact_offline(session: ContextSession, trigger: Trigger, manual: str | None, *, force: bool) -> ContextCompacted:
    """Compact with the extractive summarizer only (no external call), under the caller's lock."""
    before = session.state
    work = start(session, trigger, instructions_for(session, manual))
    early_tiers(work)
    step = work.plan_summary(summary_limit(session), force=force) if (force or not work.done()) else None
    if step is not None:
        work.apply_summary(step, work.extractive(step, summary_limit(session)), "extractive")
    if not work.done():
        work.truncate(summary_limit(session))
    return commit(session, work.finish(), trigger, before, "the history kept changing while the summarizer ran")


def early_tiers(work: Compaction) -> None:
    """Tiers 1 and 2: bound oversized tool outputs, then clear old tool results, while over target."""
    if not work.done():
        work.bound()
    if not work.done():
        work.clear()


def summary_run(session: ContextSession) -> SummaryRun:
    """The summarizer call settings (timeout, limit, counter) for this session."""
    return SummaryRun(session.summarizer, session.policy.summarizer_timeout, summary_limit(session), session.counter)


def commit(
    session: ContextSession, outcome: CompactionOutcome, trigger: Trigger, before: ContextState, fallback: str | None
) -> ContextCompacted:
    """Apply an outcome in one step: archive, history, summary, pins; reset tracking; hooks and events."""
    for message, reason in outcome.archived:
        session.archive.put_message(message, reason)
    for message in outcome.pinned:
        if all(m.id != message.id for m in session._pinned):
            session._pinned.append(message)
    session._invalidate_prefix()
    session._summary = outcome.summary
    session._replace_history(outcome.history)
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
        summary=session._summary,
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
    session._emit_update()
    return event
