"""Tier 4 of compaction: truncating the kept tail while still over target, folding what goes into the summary.

The smallest safe prefix of the tail is archived (never past the latest user request, an unresolved tool call or
the newest message), and its originals are folded into the summary by the offline summarizer.
"""

from __future__ import annotations

from ..messages.message import REASONING_BLOCKS, Message
from ._markers import handle_for
from ._summary_tier import user_texts
from ._working import WorkingHistory
from .summarize import ExtractiveSummarizer, SummaryRequest

__all__ = ["truncate"]


def truncate(work: WorkingHistory, summary_limit: int, *, goal: str | None, offline: ExtractiveSummarizer) -> None:
    """Archive the smallest safe prefix of the tail while over target; never past the latest user request.

    Nor past an unanswered call, nor the newest message (with the call it answers): the model always sees the
    turn it is in, even in a long agent run whose user request has been summarized. When the excess cannot be
    covered before that, the largest safe prefix goes; when even that would leave the request over the hard stop
    (a window too small for the newest turn beside the summary), the whole history goes, in one fold: one summary
    of all of it, sized to the room the empty tail leaves (folding the prefix first would size its summary to the
    room beside a turn that then goes too). Not when that turn holds an image (or audio, a file): no summary can
    stand for it, so it stays and the request is over the hard stop, which the session reports as
    :class:`~ctxbudget.errors.ContextOverflowError` rather than sending a turn without what it shows. The truncated
    messages' originals are folded into the summary
    (offline ledger, sized to what the window leaves), so they are covered too. ``summary_limit`` is the
    policy's largest summary; each fold is sized to the room it leaves, within it.
    """
    history = work.out.history
    last_user = max((i for i, m in enumerate(history) if m.role == "user"), default=len(history))
    answered = {m.tool_call_id for m in history if m.role == "tool"}
    unresolved = next(
        (i for i, m in enumerate(history) if any(c.id not in answered for c in m.tool_calls)), len(history)
    )
    safe = work.safe_cuts()
    limit = min(last_user, unresolved, len(history) - 1)
    excess = work.total() - work.target
    cut, dropped = 0, 0
    while dropped < excess and cut < limit:  # the smallest safe prefix whose tokens cover the excess
        dropped += work.sizes[cut]
        cut += 1
        while cut < limit and not safe[cut]:
            dropped += work.sizes[cut]
            cut += 1
    while cut > 0 and not safe[cut]:  # the limit splits a call from its result: keep the pair
        cut -= 1
    frame = work.summary_tokens("", work.goal_live)
    media = _holds_media(history[limit:])  # no summary stands for an image: that turn stays, and the request errs
    if work.fixed + frame + sum(work.sizes[cut:]) > work.hard_stop_tokens and not media:
        cut = len(history)  # what would stay is over the hard stop alone: fold it all at once, into one summary
    if cut > 0:
        _fold(work, cut, summary_limit, goal=goal, offline=offline)
    if work.total() > work.hard_stop_tokens and work.out.history and not media:  # the newest turn goes too
        _fold(work, len(work.out.history), summary_limit, goal=goal, offline=offline)


def _holds_media(messages: list[Message]) -> bool:
    """Whether ``messages`` carry a block no summary can stand for (an image, audio, a file), reasoning aside."""
    return any(
        block.text is None and block.type not in REASONING_BLOCKS
        for message in messages
        if not isinstance(message.content, str)
        for block in message.content
    )


def _fold(
    work: WorkingHistory, cut: int, summary_limit: int, *, goal: str | None, offline: ExtractiveSummarizer
) -> None:
    """Archive ``history[:cut]`` and fold the originals into the summary, sized to fit beside what is left."""
    history = work.out.history
    originals = [work.original(m) for m in history[:cut]]
    handles = {m.id: work.archived_handle(m) or handle_for(m, "truncated") for m in history[:cut]}
    kept = user_texts(history[cut:])
    work.archive_span(0, cut, "truncated", summarized=True)
    frame_tokens = work.summary_tokens("", work.goal_live)
    left = work.fixed + frame_tokens + work.history_tokens + 8
    room = work.target - left
    # A tail that (nearly) fills the target would leave the summary too little to hold anything: it may then
    # grow to half its limit, as far as the hard stop allows (the next turn compacts again rather than the
    # model losing what was summarized).
    floor = room if room >= summary_limit // 8 else min(summary_limit // 2, work.hard_stop_tokens - left)
    cap = summary_limit if work.policy.summary_max_tokens is not None else 2 * summary_limit
    request = SummaryRequest(
        messages=tuple(originals),
        previous_summary=work.out.summary,
        goal=goal,
        goal_id=work.goal_id,
        max_tokens=max(16, min(cap, max(room, floor))),
        kept=kept,
        handles=handles,
    )
    work.out.summary = offline.summarize(request)
    if "truncate" not in work.out.tiers:
        work.out.tiers.append("truncate")
