"""Tiers 1 and 2 of compaction: bounding oversized tool outputs and clearing older tool results.

1. ``bound``: tool outputs over the per-output limit keep a head/tail excerpt and a handle; the full text is
   archived.
2. ``clear``: first the reasoning blocks (``thinking``, ``redacted_thinking``, ``reasoning``) of assistant messages
   but the newest, oldest first (a provider needs back only the newest's, and Anthropic's own context editing clears
   them first); then older tool results (outside the newest protected budget)
   become a short marker with the handle, oldest first, until under target (one that would overshoot the target by
   much is shortened instead). Every original is archived.
"""

from __future__ import annotations

from ..context.evidence import excerpt
from ..messages.message import REASONING_BLOCKS, Message
from ._markers import CLEARED_META, MARKER_KEY_LINES, cleared_marker, handle_for
from ._working import WorkingHistory
from .summarize import ExtractiveSummarizer

__all__ = ["bound", "clear"]

_MIN_EXCERPT_TOKENS = 64
_CLEAR_SLACK = 200  # tokens a clear may overshoot the target by before a smaller output is cleared instead


def bound(work: WorkingHistory) -> None:
    """Tier 1: bound tool outputs over the per-output limit to a head/tail excerpt, oldest first, to target.

    A user message larger than half the target (a log pasted, a command's output Claude Code sent as the user's) is
    bounded the same way: verbatim, it could never stay beside a summary, and the whole history would be folded
    into one for it, the newest turn with it. Not the goal's message: a goal too large is shown as an excerpt in the
    summary message, beside its handle.
    """
    limit = work.policy.tool_output_limit(work.window)
    changed = False
    for index, message in enumerate(work.out.history):
        if work.done():
            break
        if (
            work.sizes[index] > limit  # first: most outputs were bounded on arrival, and this test is the cheapest
            and (message.role == "tool" or (_user_bounded(work, message) and work.sizes[index] > work.target // 2))
            and work.archived_handle(message) is None
            and message.id not in work.pinned_ids
        ):
            text = excerpt(message.text, max_tokens=limit, counter=work.counter, handle=handle_for(message, "bounded"))
            work.replace(index, message.with_content(text), "bounded")
            changed = True
    if changed:
        work.out.tiers.append("bound")


def _user_bounded(work: WorkingHistory, message: Message) -> bool:
    """A user message that is not the goal's (a goal too large is pinned as an excerpt in the summary message)."""
    return message.role == "user" and message.id != work.goal_id


def clear(work: WorkingHistory, offline: ExtractiveSummarizer) -> None:
    """Tier 2: replace older tool results with a marker, oldest first, outside the newest protected budget.

    The marker names the handle of the full original (also for an output bounded earlier) and keeps the
    output's key lines (failure, paths, figures; read by ``offline``, which remembers them), so what mattered in it
    stays in view.
    """
    changed = _clear_reasoning(work)
    protected = work.policy.protected_tool_budget(work.window)
    tool_indexes = [i for i, m in enumerate(work.out.history) if m.role == "tool" and not _never_cleared(work, m)]
    kept = 0
    clearable: list[int] = []
    for index in reversed(tool_indexes):
        kept += work.sizes[index]
        if kept > protected:
            clearable.append(index)
    candidates = list(reversed(clearable))  # oldest first
    while candidates and not work.done():
        index = _next_to_clear(work, candidates)
        candidates.remove(index)
        message = work.out.history[index]
        handle = work.archived_handle(message)
        if message.id in work.pinned_ids or (handle is not None and message.metadata.get(CLEARED_META)):
            continue
        original = work.original(message)
        excess = work.total() - work.target
        keep = work.sizes[index] - excess
        if excess > 0 and keep >= 4 * _MIN_EXCERPT_TOKENS and excess + _CLEAR_SLACK < work.sizes[index]:
            # Clearing all of it would overshoot the target: shorten it to what must go instead.
            target_handle = handle or handle_for(message, "bounded")
            text = excerpt(original.text, max_tokens=keep - 16, counter=work.counter, handle=target_handle)
            work.replace(index, message.with_content(text), "bounded", handle)
            changed = True
            continue
        lines = offline.key_lines(original, MARKER_KEY_LINES, work.calls())
        call = work.calls().get(original.tool_call_id or "")
        marker = cleared_marker(
            original,
            handle or handle_for(message, "cleared"),
            work.counter,
            lines=lines,
            tool=call.name if call is not None else None,
        )
        if work.counter.count_text(marker) < work.sizes[index]:  # else already smaller than its marker
            work.replace(index, message.with_content(marker, **{CLEARED_META: True}), "cleared", handle)
            changed = True
    if changed:
        work.out.tiers.append("clear")


def _clear_reasoning(work: WorkingHistory) -> bool:
    """Take the reasoning blocks out of assistant messages but the newest, oldest first, until under target.

    The newest assistant message keeps its own: with thinking on, Anthropic wants the last assistant message of a
    tool loop to start with its thinking block (its context editing keeps one such turn by default). A message that
    is only reasoning keeps it (an assistant message needs some content).
    """
    history = work.out.history
    newest = max((i for i, m in enumerate(history) if m.role == "assistant"), default=-1)
    changed = False
    for index in range(newest):
        if work.done():
            break
        message = history[index]
        if message.role != "assistant" or isinstance(message.content, str) or message.id in work.pinned_ids:
            continue
        kept = [block for block in message.content if block.type not in REASONING_BLOCKS]
        if len(kept) == len(message.content) or not (kept or message.tool_calls):
            continue
        handle = work.archived_handle(message)
        work.replace(index, message.model_copy(update={"content": kept}), "cleared", handle)
        changed = True
    return changed


def _never_cleared(work: WorkingHistory, message: Message) -> bool:
    """A result of one of the policy's ``never_clear_tools`` (named on the result, else on its call)."""
    excluded = work.policy.never_clear_tools
    if not excluded:
        return False
    return (message.name or work.call_names().get(message.tool_call_id or "")) in excluded


def _next_to_clear(work: WorkingHistory, candidates: list[int]) -> int:
    """The oldest candidate, unless a smaller one (still enough to reach the target) avoids overshooting it."""
    excess = work.total() - work.target
    oldest = candidates[0]
    if work.sizes[oldest] <= excess + _CLEAR_SLACK:
        return oldest
    enough = [i for i in candidates if excess < work.sizes[i] < work.sizes[oldest]]
    return min(enough, key=lambda i: (work.sizes[i], i)) if enough else oldest
