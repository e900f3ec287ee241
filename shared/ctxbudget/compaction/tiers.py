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

from ..archive.store import HANDLE_PREFIX, ArchiveReason
from ..context.evidence import excerpt
from ..errors import SummarizerError
from ..messages.message import Message, ToolCall
from ..messages.tokens import TokenCounter
from ..messages.toolpairs import safe_cut_points
from .policy import CompactionPolicy
from .receipt import ArchivedItem
from .salience import key_lines
from .summarize import ExtractiveSummarizer, SummaryRequest

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
_MARKER_KEY_LINES = 6
_CLEAR_SLACK = 200  # tokens a clear may overshoot the target by before a smaller output is cleared instead


def user_texts(messages: Sequence[Message]) -> tuple[str, ...]:
    """The texts of the user messages (ours excepted) among ``messages``: what a kept tail states."""
    return tuple(m.text for m in messages if m.role == "user" and not m.metadata.get("ctxbudget"))


def summary_estimate(message: Message, size: int) -> int:
    """About how many summary tokens evicting ``message`` (``size`` tokens) adds: what its items usually take.

    A user message keeps its statements (up to about 120 tokens); an assistant message its decisions and one line
    per tool call; a tool result its failure, paths and figures (about 40 tokens).
    """
    if message.metadata.get("ctxbudget"):
        return 0
    if message.role == "user":
        return min(size, 120)
    if message.role == "assistant":
        return min(size, 30) + 25 * len(message.tool_calls)
    return min(size, 40)


def cleared_marker(original: Message, handle: str, counter: TokenCounter, *, lines: Sequence[str] | None = None) -> str:
    """The text a cleared tool result becomes: size, tool, the handle of the full original, and its key lines.

    ``lines`` are the output's key lines when the caller has them (a session remembers them); else they are read.
    """
    lines = key_lines(original, _MARKER_KEY_LINES) if lines is None else lines
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
        self.goal_live = goal_id is not None and any(m.id == goal_id for m in history)
        self.instructions = instructions
        self.pinned_ids = pinned_ids
        self._original_of = original_of
        self._pending: dict[str, Message] = {}  # message id -> original archived by this run
        self._summary_memo: tuple[tuple[str | None, bool], int] | None = None
        self._call_names: dict[str, str] | None = None  # call id -> tool name, for never_clear_tools
        self.out = CompactionOutcome(history=list(history), summary=summary)
        self._sizes = list(sizes) if sizes is not None else [counter.count_message(m) for m in self.out.history]
        self.offline = offline or ExtractiveSummarizer(counter)
        self._calls_by_id: dict[str, ToolCall] | None = None
        self._history_tokens = sum(self._sizes)  # kept in step with _sizes: total() runs once per step of a tier

    # -- measuring ---------------------------------------------------------------------------------------------
    def total(self) -> int:
        """Tokens the request would cost with the work so far."""
        return self.fixed + self._history_tokens + self._summary_cost(self.out.summary, self.goal_live)

    @property
    def hard_stop_tokens(self) -> int:
        """The most a request may cost: the policy's hard stop of the window."""
        return int(self.policy.hard_stop * self.window)

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
        self._calls_by_id = None
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
            lines = self.offline.key_lines(original, _MARKER_KEY_LINES, self._calls())
            marker = cleared_marker(original, handle or handle_for(message, "cleared"), self.counter, lines=lines)
            if self.counter.count_text(marker) < self._sizes[index]:  # else already smaller than its marker
                self._replace(index, message.with_content(marker, **{CLEARED_META: True}), "cleared", handle)
                changed = True
        if changed:
            self.out.tiers.append("clear")

    def _calls(self) -> dict[str, ToolCall]:
        """The history's tool calls by id (what a result answers), built once per run."""
        if self._calls_by_id is None:
            self._calls_by_id = {call.id: call for m in self.out.history for call in m.tool_calls}
        return self._calls_by_id

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
        return self._step_at(self._tail_cut(summary_limit), summary_limit, force=force)

    def refit(self, step: SummaryStep, summary: str) -> SummaryStep | None:
        """A step over a shorter span when ``summary`` left room: the tail then keeps what the summary did not need.

        The tail was sized by an estimate of the summary; once the summary is known, the newest tail that fits beside
        it may be longer. Returns the step for that shorter span (its summary can only be smaller), or ``None`` when
        the estimate was close (within two messages or 2% of the target).
        """
        frame = self.render_summary(summary, False)
        room = self.target - self.fixed - (self.counter.count_message(frame) if frame is not None else 0)
        cut, tail = len(self._sizes), 0
        while cut > 0 and tail + self._sizes[cut - 1] <= room:
            cut -= 1
            tail += self._sizes[cut]
        slack = sum(self._sizes[cut : step.cut])
        if cut >= step.cut - 2 or slack < self.target * 0.02:
            return None
        shorter = self._step_at(cut, step.request.max_tokens, force=False)
        return shorter if shorter is not None and shorter.cut < step.cut else None

    def _room_for_summary(self, cut: int, summary_limit: int) -> int:
        """The summary's size for a span ending at ``cut``.

        The limit, or, when the policy sets none of its own, the room the kept tail leaves (a tail that cannot
        grow, because its next message is too large, leaves room that the summary would otherwise waste).
        """
        if self.policy.summary_max_tokens is not None:
            return summary_limit
        frame = self.render_summary("", False)
        room = self.target - self.fixed - (self.counter.count_message(frame) if frame is not None else 0) - 8
        return max(summary_limit, min(room - sum(self._sizes[cut:]), 2 * summary_limit))

    def fits(self, step: SummaryStep, summary: str) -> bool:
        """The request would be at or under target once ``summary`` replaces the span of ``step``."""
        message = self.render_summary(
            summary, self.goal_live and not any(m.id == self.goal_id for m in self.out.history[: step.cut])
        )
        tokens = self.counter.count_message(message) if message is not None else 0
        return self.fixed + self._history_tokens - sum(self._sizes[: step.cut]) + tokens <= self.target

    def _step_at(self, cut: int, summary_limit: int, *, force: bool) -> SummaryStep | None:
        """The summary step for the span before ``cut``, after the policy's floors and the safe-cut rule."""
        history = self.out.history
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
            max_tokens=self._room_for_summary(cut, summary_limit),
            kept=user_texts(history[cut:]),
            handles={m.id: self.archived_handle(m) or handle_for(m, "summarized") for m in history[:cut]},
        )
        return SummaryStep(request=request, cut=cut, chunks=self._chunks(span, safe))

    def _tail_cut(self, summary_limit: int) -> int:
        """The first index of the newest tail that fits the target beside the estimated new summary.

        The new summary is estimated from what the evicted messages hold (:func:`summary_estimate`, capped at the
        summary limit): each message moved into the tail leaves the summary that much smaller.
        """
        frame = self.render_summary("", False)
        room = self.target - self.fixed - (self.counter.count_message(frame) if frame is not None else 0)
        old = self.counter.count_text(self.out.summary) if self.out.summary else 0
        estimates = [summary_estimate(m, size) for m, size in zip(self.out.history, self._sizes, strict=True)]
        evicted = sum(estimates)
        cut, tail = len(self._sizes), 0
        while cut > 0:
            after = evicted - estimates[cut - 1]
            if tail + self._sizes[cut - 1] + min(summary_limit, old + after) > room:
                break
            cut -= 1
            tail += self._sizes[cut]
            evicted = after
        return cut

    def fit_limit(self, summary_limit: int) -> int:
        """The summary limit for this run: the policy's, or less when the window leaves less room beside the header.

        The room is the target less the fixed part of the request, the summary message's own frame (header and
        pinned goal) and the smallest tail that may follow it (the newest message, with the call it answers), so a
        compaction always fits the window it is asked for.
        """
        frame = self.render_summary("", not self.goal_live)
        frame_tokens = self.counter.count_message(frame) if frame is not None else 0
        safe = safe_cut_points(self.out.history)
        start = next((i for i in range(len(self._sizes) - 1, 0, -1) if safe[i]), 0)
        newest = sum(self._sizes[start:])
        return max(16, min(summary_limit, self.target - self.fixed - frame_tokens - newest - 8))

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
        return self.offline.summarize(
            step.request.model_copy(update={"max_tokens": max(summary_limit, step.request.max_tokens)})
        )

    # -- tier 4 ------------------------------------------------------------------------------------------------
    def truncate(self, summary_limit: int) -> None:
        """Archive the smallest safe prefix of the tail while over target; never past the latest user request.

        Nor past an unanswered call, nor the newest message (with the call it answers): the model always sees the
        turn it is in, even in a long agent run whose user request has been summarized. When the excess cannot be
        covered before that, the largest safe prefix goes; when even that leaves the request over the hard stop (a
        window too small for the newest turn beside the summary), the whole history goes. The truncated messages'
        originals are folded into the summary (offline ledger, sized to what the window leaves), so they are
        covered too.
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
        if cut > 0:
            self._fold(cut, summary_limit)
        if self.total() > self.hard_stop_tokens and self.out.history:
            self._fold(len(self.out.history), summary_limit)  # the window holds no less: the newest turn goes too

    def _fold(self, cut: int, summary_limit: int) -> None:
        """Archive ``history[:cut]`` and fold the originals into the summary, sized to fit beside what is left."""
        history = self.out.history
        originals = [self.original(m) for m in history[:cut]]
        handles = {m.id: self.archived_handle(m) or handle_for(m, "truncated") for m in history[:cut]}
        kept = user_texts(history[cut:])
        self._archive_span(0, cut, "truncated", summarized=True)
        frame = self.render_summary("", self.goal_live)
        frame_tokens = self.counter.count_message(frame) if frame is not None else 0
        left = self.fixed + frame_tokens + self._history_tokens + 8
        room = self.target - left
        # A tail that (nearly) fills the target would leave the summary too little to hold anything: it may then
        # grow to half its limit, as far as the hard stop allows (the next turn compacts again rather than the
        # model losing what was summarized).
        floor = room if room >= summary_limit // 8 else min(summary_limit // 2, self.hard_stop_tokens - left)
        cap = summary_limit if self.policy.summary_max_tokens is not None else 2 * summary_limit
        request = SummaryRequest(
            messages=tuple(originals),
            previous_summary=self.out.summary,
            goal=self.goal,
            max_tokens=max(16, min(cap, max(room, floor))),
            kept=kept,
            handles=handles,
        )
        self.out.summary = self.offline.summarize(request)
        if "truncate" not in self.out.tiers:
            self.out.tiers.append("truncate")

    def finish(self) -> CompactionOutcome:
        """The outcome, with its final token figure."""
        self.out.tokens = self.total()
        return self.out
