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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .archive import HANDLE_PREFIX, ArchiveReason
from .errors import SummarizerError
from .events import ArchivedItem
from .evidence import excerpt
from .messages import Message
from .policy import CompactionPolicy
from .salience import key_lines
from .summarize import ExtractiveSummarizer, SummaryRequest
from .tokens import TokenCounter
from .toolpairs import safe_cut_points

__all__ = [
    "ARCHIVE_META",
    "CLEARED_META",
    "Compaction",
    "CompactionOutcome",
    "SummaryStep",
    "pinned_form",
    "validate_summary",
]

ARCHIVE_META = "ctxbudget_archived"
"""Metadata key on a message whose original is archived; its value is the archive handle."""

CLEARED_META = "ctxbudget_cleared"
"""Metadata key on a tool result compaction replaced by a cleared marker."""

_MIN_EXCERPT_TOKENS = 64
_SUMMARY_GROWTH = 0.04  # new ledger tokens per evicted token, for sizing the kept tail before summarizing
_MARKER_KEY_LINES = 6
_CLEAR_SLACK = 200  # tokens a clear may overshoot the target by before a smaller output is cleared instead


def cleared_marker(original: Message, handle: str, counter: TokenCounter) -> str:
    """The text a cleared tool result becomes: size, tool, the handle of the full original, and its key lines."""
    lines = key_lines(original, _MARKER_KEY_LINES)
    head = (
        f"[tool output cleared to save context: {len(original.text):,} chars from {original.name or 'the tool'}; "
        f"full text archived at {handle}; read it back or re-run the tool if you need it]"
    )
    return head + ("\nKey lines:\n" + "\n".join(f"- {line}" for line in lines) if lines else "")


def split_message(message: Message, max_tokens: int, counter: TokenCounter) -> list[Message]:
    """``message`` cut into parts of at most about ``max_tokens`` each, for a summarizer with a small window.

    Parts keep the role, name and tool call id (the first part keeps the tool calls) and get ids ``<id>#<n>``.
    """
    text = message.text
    tokens = max(1, counter.count_text(text))
    step = max(1, len(text) * max_tokens // tokens * 9 // 10)
    pieces = [text[i : i + step] for i in range(0, len(text), step)] or [""]
    return [
        message.model_copy(
            update={
                "content": piece,
                "id": f"{message.id}#{n}",
                "tool_calls": message.tool_calls if n == 1 else (),
                "metadata": {},
            }
        )
        for n, piece in enumerate(pieces, start=1)
    ]


def handle_for(message: Message, reason: ArchiveReason) -> str:
    """The archive handle a message gets when archived for ``reason``."""
    return f"{HANDLE_PREFIX}{message.id}.{reason}"


def pinned_form(message: Message) -> Message:
    """How a pinned message that leaves the history is kept in the request, verbatim.

    Plain user and assistant messages stay as they are. A tool call or a tool result cannot stand apart from its
    partner (providers reject it), so its full text is carried in a user-role message that says what it was.
    """
    if message.role != "tool" and not message.tool_calls:
        return message
    if message.role == "tool":
        label = f"[pinned tool result of call {message.tool_call_id} from {message.name or 'a tool'}]"
    else:
        calls = "; ".join(f"{call.name}({call.args_json()}) id={call.id}" for call in message.tool_calls)
        label = f"[pinned assistant message with tool calls: {calls}]"
    return Message(
        role="user",
        content=f"{label}\n{message.text}" if message.text else label,
        id=f"{message.id}.pinned",
        metadata={"ctxbudget": "pinned", "pinned_from": message.id},
    )


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


@dataclass
class SummaryStep:
    """One summarizer call the driver must make: the request, and where its span ends in the history."""

    request: SummaryRequest
    cut: int
    chunks: list[list[Message]]


def validate_summary(text: object, *, limit: int, counter: TokenCounter) -> str:
    """Accept a summarizer's output only if it is non-blank text within ``limit`` tokens."""
    if not isinstance(text, str):
        raise SummarizerError(f"summary: expected str, the summarizer returned {type(text).__name__}")
    if not text.strip():
        raise SummarizerError("summary: the summarizer returned blank text")
    tokens = counter.count_text(text)
    if tokens > limit:
        raise SummarizerError(f"summary: {tokens:,} tokens is over summary_max_tokens {limit:,}")
    return text.strip()


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
    ) -> None:
        self.counter = counter
        self.policy = policy
        self.window = window
        self.target = target_tokens
        self.fixed = fixed_tokens
        self.render_summary = render_summary
        self.goal = goal
        self.goal_id = goal_id
        self.goal_live = goal_id is not None and any(m.id == goal_id for m in history)
        self.instructions = instructions
        self.pinned_ids = pinned_ids
        self._original_of = original_of
        self._pending: dict[str, Message] = {}  # message id -> original archived by this run
        self._summary_memo: tuple[tuple[str | None, bool], int] | None = None
        self._call_names: dict[str, str] | None = None  # call id -> tool name, for never_clear_tools
        self.out = CompactionOutcome(history=list(history), summary=summary)
        self._sizes = list(sizes) if sizes is not None else [counter.count_message(m) for m in self.out.history]
        self._history_tokens = sum(self._sizes)  # kept in step with _sizes: total() runs once per step of a tier

    # -- measuring ---------------------------------------------------------------------------------------------
    def total(self) -> int:
        """Tokens the request would cost with the work so far."""
        return self.fixed + self._history_tokens + self._summary_cost(self.out.summary, self.goal_live)

    def _summary_cost(self, summary: str | None, goal_live: bool) -> int:
        """Tokens of the message that carries ``summary`` (remembered for the last summary measured)."""
        key = (summary, goal_live)
        if self._summary_memo is None or self._summary_memo[0] != key:
            message = self.render_summary(summary, goal_live)
            self._summary_memo = (key, self.counter.count_message(message) if message is not None else 0)
        return self._summary_memo[1]

    def extend(self, messages: Sequence[Message]) -> None:
        """Append messages that arrived while a summary was being made (they are newer than any cut)."""
        self._call_names = None
        for message in messages:
            self.out.history.append(message)
            self._sizes.append(self.counter.count_message(message))
            self._history_tokens += self._sizes[-1]

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

    def _replace(self, index: int, new: Message, reason: ArchiveReason, handle: str | None = None) -> None:
        old = self.out.history[index]
        if handle is None:  # the original is not archived yet: archive it now
            handle = handle_for(old, reason)
            self.out.archived.append((old, reason))
            self._pending[old.id] = old
        self.out.history[index] = new.model_copy(update={"metadata": {**new.metadata, ARCHIVE_META: handle}})
        after = self.counter.count_message(self.out.history[index])
        self.out.receipt.append(
            ArchivedItem(
                message_id=old.id, handle=handle, reason=reason, tokens_before=self._sizes[index], tokens_after=after
            )
        )
        self._history_tokens += after - self._sizes[index]
        self._sizes[index] = after

    def _archive_span(self, start: int, end: int, reason: ArchiveReason, *, summarized: bool = False) -> list[Message]:
        span = self.out.history[start:end]
        for message, size in zip(span, self._sizes[start:end], strict=True):
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
        self._history_tokens -= sum(self._sizes[start:end])
        del self._sizes[start:end]
        if self.goal_live and any(m.id == self.goal_id for m in span):
            self.goal_live = False
        return span

    # -- tier 1 and 2 ------------------------------------------------------------------------------------------
    def bound(self) -> None:
        """Tier 1: bound tool outputs over the per-output limit to a head/tail excerpt, oldest first, to target."""
        limit = self.policy.tool_output_limit(self.window)
        changed = False
        for index, message in enumerate(self.out.history):
            if self.done():
                break
            if (
                message.role == "tool"
                and self.archived_handle(message) is None
                and message.id not in self.pinned_ids
                and self._sizes[index] > limit
            ):
                text = excerpt(
                    message.text, max_tokens=limit, counter=self.counter, handle=handle_for(message, "bounded")
                )
                self._replace(index, message.with_content(text), "bounded")
                changed = True
        if changed:
            self.out.tiers.append("bound")

    def clear(self) -> None:
        """Tier 2: replace older tool results with a marker, oldest first, outside the newest protected budget.

        The marker names the handle of the full original (also for an output bounded earlier) and keeps the
        output's key lines (failure, paths, figures), so what mattered in it stays in view.
        """
        protected = self.policy.protected_tool_budget(self.window)
        tool_indexes = [i for i, m in enumerate(self.out.history) if m.role == "tool" and not self._never_cleared(m)]
        kept = 0
        clearable: list[int] = []
        for index in reversed(tool_indexes):
            kept += self._sizes[index]
            if kept > protected:
                clearable.append(index)
        candidates = list(reversed(clearable))  # oldest first
        changed = False
        while candidates and not self.done():
            index = self._next_to_clear(candidates)
            candidates.remove(index)
            message = self.out.history[index]
            handle = self.archived_handle(message)
            if message.id in self.pinned_ids or (handle is not None and message.metadata.get(CLEARED_META)):
                continue
            original = self.original(message)
            excess = self.total() - self.target
            keep = self._sizes[index] - excess
            if excess > 0 and keep >= 4 * _MIN_EXCERPT_TOKENS and excess + _CLEAR_SLACK < self._sizes[index]:
                # Clearing all of it would overshoot the target: shorten it to what must go instead.
                target_handle = handle or handle_for(message, "bounded")
                text = excerpt(original.text, max_tokens=keep - 16, counter=self.counter, handle=target_handle)
                self._replace(index, message.with_content(text), "bounded", handle)
                changed = True
                continue
            marker = cleared_marker(original, handle or handle_for(message, "cleared"), self.counter)
            if self.counter.count_text(marker) >= self._sizes[index]:
                continue  # already smaller than its marker would be
            self._replace(index, message.with_content(marker, **{CLEARED_META: True}), "cleared", handle)
            changed = True
        if changed:
            self.out.tiers.append("clear")

    def _never_cleared(self, message: Message) -> bool:
        """A result of one of the policy's ``never_clear_tools`` (named on the result, else on its call)."""
        excluded = self.policy.never_clear_tools
        if not excluded:
            return False
        if self._call_names is None:
            self._call_names = {call.id: call.name for m in self.out.history for call in m.tool_calls}
        return (message.name or self._call_names.get(message.tool_call_id or "")) in excluded

    def _next_to_clear(self, candidates: list[int]) -> int:
        """The oldest candidate, unless a smaller one (still enough to reach the target) avoids overshooting it."""
        excess = self.total() - self.target
        oldest = candidates[0]
        if self._sizes[oldest] <= excess + _CLEAR_SLACK:
            return oldest
        enough = [i for i in candidates if excess < self._sizes[i] < self._sizes[oldest]]
        return min(enough, key=lambda i: (self._sizes[i], i)) if enough else oldest

    # -- tier 3 ------------------------------------------------------------------------------------------------
    def plan_summary(self, summary_limit: int, *, force: bool = False) -> SummaryStep | None:
        """Choose the span to summarize: everything before a safe cut that keeps the most recent tail that fits.

        The tail is sized by tokens so the request lands at the target once the summary replaces the span (the
        summary's size is estimated from the previous one); ``keep_recent_messages`` (at most half the history,
        as in the reference) and ``keep_recent_tokens`` are floors. ``force`` (a manual compaction) summarizes
        what the floor allows (the older half when there is none) when everything already fits.
        """
        history = self.out.history
        cut = self._tail_cut(summary_limit)
        floor = self.policy.keep_recent_messages
        if floor is not None:  # as in the reference: min(keep_recent_messages, half the history) survive
            floor = max(1, min(floor, len(history) // 2))
            cut = min(cut, max(0, len(history) - floor))
        if self.policy.keep_recent_tokens is not None:
            tail_tokens = sum(self._sizes[cut:])
            while cut > 0 and tail_tokens < self.policy.keep_recent_tokens:
                cut -= 1
                tail_tokens += self._sizes[cut]
        if cut <= 0 and force:  # everything fits: a manual compaction still summarizes the older part
            cut = len(history) // 2 if floor is None else len(history) - floor
        cut = min(cut, len(history) - 1)  # the newest message always stays verbatim (as in the reference)
        safe = safe_cut_points(history)
        while cut > 0 and not safe[cut]:
            cut -= 1
        if cut <= 0:
            return None
        span = [self.original(m) for m in history[:cut]]
        request = SummaryRequest(
            messages=tuple(span),
            previous_summary=self.out.summary,
            goal=self.goal,
            instructions=self.instructions,
            max_tokens=summary_limit,
        )
        return SummaryStep(request=request, cut=cut, chunks=self._chunks(span, safe))

    def _tail_cut(self, summary_limit: int) -> int:
        """The first index of the newest tail that fits the target beside the estimated new summary."""
        old = self.render_summary(self.out.summary, False)
        base = self.counter.count_message(old) if old is not None else 0
        history_tokens = self._history_tokens
        room = self.target - self.fixed - base
        evicted = max(0, history_tokens - room)
        growth = min(max(0, summary_limit - base), int(evicted * _SUMMARY_GROWTH))
        budget = room - growth
        cut, tail = len(self._sizes), 0
        while cut > 0 and tail + self._sizes[cut - 1] <= budget:
            cut -= 1
            tail += self._sizes[cut]
        return cut

    def _chunks(self, span: list[Message], safe: list[bool]) -> list[list[Message]]:
        """Split the span (originals) into summarizer-sized chunks; a single oversized original is split in parts."""
        budget = self.policy.summarizer_chunk(self.window)
        chunks: list[list[Message]] = [[]]
        size = 0
        for index, message in enumerate(span):
            tokens = self.counter.count_message(message)
            if chunks[-1] and size + tokens > budget and safe[index]:
                chunks.append([])
                size = 0
            if tokens > budget:
                for part in split_message(message, budget, self.counter):
                    if chunks[-1]:
                        chunks.append([])
                    chunks[-1].append(part)
                size = budget
                continue
            chunks[-1].append(message)
            size += tokens
        return [chunk for chunk in chunks if chunk]

    def apply_summary(self, step: SummaryStep, summary: str, tier: str) -> bool:
        """Replace the span of ``step`` with ``summary`` in the working copy, if that makes the request smaller.

        A summary that costs at least as much as the span and the old summary together is not applied (a short
        history is better kept verbatim); the tier is then recorded as ``<tier>-skipped`` and False returned.
        """
        before = self.total()
        goal_evicted = any(m.id == self.goal_id for m in self.out.history[: step.cut])
        message = self.render_summary(summary, self.goal_live and not goal_evicted)
        new_summary = self.counter.count_message(message) if message is not None else 0
        old_message = self.render_summary(self.out.summary, self.goal_live)
        old_summary = self.counter.count_message(old_message) if old_message is not None else 0
        if before - old_summary - sum(self._sizes[: step.cut]) + new_summary >= before:
            self.out.tiers.append(f"{tier}-skipped")
            return False
        self._archive_span(0, step.cut, "summarized", summarized=True)
        self.out.summary = summary
        self.out.tiers.append(tier)
        return True

    def extractive(self, step: SummaryStep, summary_limit: int) -> str:
        """The offline fallback summary for ``step`` (deterministic, bounded by our counter)."""
        summarizer = ExtractiveSummarizer(self.counter)
        return summarizer.summarize(step.request.model_copy(update={"max_tokens": summary_limit}))

    # -- tier 4 ------------------------------------------------------------------------------------------------
    def truncate(self, summary_limit: int) -> None:
        """Archive the smallest safe prefix of the tail while over target; never past the latest user request.

        Nor past an unanswered call, nor the newest message (with the call it answers): the model always sees the
        turn it is in, even in a long agent run whose user request has been summarized. When the excess cannot be
        covered before that, the largest safe prefix goes. The truncated messages' originals are folded into the
        summary (offline ledger), so they are covered too.
        """
        history = self.out.history
        last_user = max((i for i, m in enumerate(history) if m.role == "user"), default=len(history))
        answered = {m.tool_call_id for m in history if m.role == "tool"}
        unresolved = next(
            (i for i, m in enumerate(history) if any(c.id not in answered for c in m.tool_calls)), len(history)
        )
        safe = safe_cut_points(history)
        limit = min(last_user, unresolved, len(history) - 1)
        excess = self.total() - self.target
        cut, dropped = 0, 0
        while dropped < excess and cut < limit:  # the smallest safe prefix whose tokens cover the excess
            dropped += self._sizes[cut]
            cut += 1
            while cut < limit and not safe[cut]:
                dropped += self._sizes[cut]
                cut += 1
        while cut > 0 and not safe[cut]:  # the limit splits a call from its result: keep the pair
            cut -= 1
        if cut == 0:
            return
        originals = [self.original(m) for m in history[:cut]]
        self._archive_span(0, cut, "truncated", summarized=True)
        request = SummaryRequest(
            messages=tuple(originals), previous_summary=self.out.summary, goal=self.goal, max_tokens=summary_limit
        )
        self.out.summary = ExtractiveSummarizer(self.counter).summarize(request)
        self.out.tiers.append("truncate")

    def finish(self) -> CompactionOutcome:
        """The outcome, with its final token figure."""
        self.out.tokens = self.total()
        return self.out
