"""Tier 3 of compaction: choosing the span to summarize, and replacing it with the summary.

The older safe prefix is replaced by a cumulative summary; the recent tail is kept and the cut is pulled back so no
tool result is separated from its call. A :class:`SummaryStep` is one summarizer call the driver must make; what a
summarizer returns is accepted only through :func:`validate_summary`, and the offline (extractive) summary is the
fallback when it fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import SummarizerError
from ..messages.message import Message
from ..messages.tokens import TokenCounter, count_text_by_lines
from ._markers import handle_for
from ._text_protocol import HARNESS_META, as_tool_use
from ._working import WorkingHistory
from .summarize import ExtractiveSummarizer, SummaryRequest

__all__ = ["SummaryPlanner", "SummaryStep", "split_message", "summary_estimate", "user_texts", "validate_summary"]


def user_texts(messages: Sequence[Message]) -> tuple[str, ...]:
    """The texts of the user messages among ``messages``: what a kept tail states.

    Ours are left out, and so are a text-protocol harness's result turns and format reminders (the harness's words:
    :func:`~ctxbudget.compaction._text_protocol.as_tool_use`, which reads the user's own terminal commands and their
    output the same way: a command and its result, not something said).
    """
    return tuple(
        m.text
        for m in as_tool_use(messages)
        if m.role == "user" and not m.metadata.get("ctxbudget") and not m.metadata.get(HARNESS_META)
    )


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


class SummaryPlanner:
    """Plans and applies the summary tier on a working copy.

    Args:
        work: the working copy of the history.
        goal: the user's goal, pinned verbatim (given to the summarizer).
        instructions: Compact Instructions plus manual focus.
        offline: the offline summarizer of the extractive fallback.
    """

    def __init__(
        self, work: WorkingHistory, *, goal: str | None, instructions: str | None, offline: ExtractiveSummarizer
    ) -> None:
        self.work = work
        self.goal = goal
        self.instructions = instructions
        self.offline = offline

    def plan_summary(self, summary_limit: int, *, force: bool = False, whole_pairs: bool = False) -> SummaryStep | None:
        """Choose the span to summarize: everything before a safe cut that keeps the most recent tail that fits.

        The tail is sized by tokens so the request lands at the target once the summary replaces the span (the
        summary's size is estimated from the previous one); ``keep_recent_messages`` (at most half the history,
        as in the reference) and ``keep_recent_tokens`` are floors. ``force`` (a manual compaction) summarizes
        what the floor allows (the older half when there is none) when everything already fits. ``whole_pairs``
        (the offline ledger summarizes): a tool call and its results that the tail found would split go with the
        span, so the tail still fits; else they stay in the tail and truncation folds what is over the target into
        the summary afterwards (offline, so a model is asked once).
        """
        if self._newest_over_hard_stop():
            return None  # the newest turn goes too: truncation folds the whole history at once, into one summary
        return self._step_at(self._tail_cut(summary_limit, whole_pairs=whole_pairs), summary_limit, force=force)

    def _newest_over_hard_stop(self) -> bool:
        """The newest turn (the newest message, with the call it answers) is over the hard stop beside the summary.

        A summary of the rest would be sized to the room beside that turn (none), and the turn then goes too.
        """
        return self.work.fixed + self._frame_and_newest() > self.work.hard_stop_tokens

    def _frame_and_newest(self) -> int:
        """Tokens of the summary message's frame (header, pinned goal) and the newest turn: what no summary replaces."""
        safe = self.work.safe_cuts()
        start = next((i for i in range(len(self.work.sizes) - 1, 0, -1) if safe[i]), 0)
        return self.work.summary_tokens("", not self.work.goal_live) + sum(self.work.sizes[start:])

    def refit(self, step: SummaryStep, summary: str) -> SummaryStep | None:
        """A step over a shorter span when ``summary`` left room: the tail then keeps what the summary did not need.

        The tail was sized by an estimate of the summary; once the summary is known, the newest tail that fits beside
        it may be longer. Returns the step for that shorter span (its summary can only be smaller), or ``None`` when
        the estimate was close (within two messages or 2% of the target).
        """
        room = self.work.target - self.work.fixed - self.work.summary_tokens(summary, False)
        cut, tail = len(self.work.sizes), 0
        while cut > 0 and tail + self.work.sizes[cut - 1] <= room:
            cut -= 1
            tail += self.work.sizes[cut]
        safe = self.work.safe_cuts()
        while cut < step.cut and not safe[cut]:
            cut += 1  # a call and its results stay together: on the span's side, so the tail still fits
        slack = sum(self.work.sizes[cut : step.cut])
        if cut >= step.cut - 2 or slack < self.work.target * 0.02:
            return None
        shorter = self._step_at(cut, step.request.max_tokens, force=False)
        return shorter if shorter is not None and shorter.cut < step.cut else None

    def _room_for_summary(self, cut: int, summary_limit: int) -> int:
        """The summary's size for a span ending at ``cut``.

        The limit, or, when the policy sets none of its own, the room the kept tail leaves (a tail that cannot
        grow, because its next message is too large, leaves room that the summary would otherwise waste).
        """
        if self.work.policy.summary_max_tokens is not None:
            return summary_limit
        room = self.work.target - self.work.fixed - self.work.summary_tokens("", False) - 8
        return max(summary_limit, min(room - sum(self.work.sizes[cut:]), 2 * summary_limit))

    def fits(self, step: SummaryStep, summary: str) -> bool:
        """The request would be at or under target once ``summary`` replaces the span of ``step``."""
        tokens = self.work.summary_tokens(
            summary,
            self.work.goal_live and not any(m.id == self.work.goal_id for m in self.work.out.history[: step.cut]),
        )
        return (
            self.work.fixed + self.work.history_tokens - sum(self.work.sizes[: step.cut]) + tokens <= self.work.target
        )

    def _step_at(self, cut: int, summary_limit: int, *, force: bool) -> SummaryStep | None:
        """The summary step for the span before ``cut``, after the policy's floors and the safe-cut rule."""
        history = self.work.out.history
        floor = self.work.policy.keep_recent_messages
        if floor is not None:  # as in the reference: min(keep_recent_messages, half the history) survive
            floor = max(1, min(floor, len(history) // 2))
            cut = min(cut, max(0, len(history) - floor))
        if self.work.policy.keep_recent_tokens is not None:
            tail_tokens = sum(self.work.sizes[cut:])
            while cut > 0 and tail_tokens < self.work.policy.keep_recent_tokens:
                cut -= 1
                tail_tokens += self.work.sizes[cut]
        if cut <= 0 and force:  # everything fits: a manual compaction still summarizes the older part
            cut = len(history) // 2 if floor is None else len(history) - floor
        cut = min(cut, len(history) - 1)  # the newest message always stays verbatim (as in the reference)
        safe = self.work.safe_cuts()
        while cut > 0 and not safe[cut]:
            cut -= 1
        if cut <= 0:
            return None
        span = [self.work.original(m) for m in history[:cut]]
        request = SummaryRequest(
            messages=tuple(span),
            previous_summary=self.work.out.summary,
            goal=self.goal,
            goal_id=self.work.goal_id,
            instructions=self.instructions,
            max_tokens=self._room_for_summary(cut, summary_limit),
            kept=user_texts(history[cut:]),
            handles={m.id: self.work.archived_handle(m) or handle_for(m, "summarized") for m in history[:cut]},
        )
        return SummaryStep(request=request, cut=cut, chunks=self._chunks(span, safe))

    def _tail_cut(self, summary_limit: int, *, whole_pairs: bool = False) -> int:
        """The first index of the newest tail that fits the target beside the estimated new summary.

        The new summary is estimated from what the evicted messages hold (:func:`summary_estimate`, capped at the
        summary limit): each message moved into the tail leaves the summary that much smaller. ``whole_pairs``: the
        index is a safe cut at or after the one found (see :meth:`plan_summary`).
        """
        room = self.work.target - self.work.fixed - self.work.summary_tokens("", False)
        old = count_text_by_lines(self.work.counter, self.work.out.summary) if self.work.out.summary else 0
        estimates = [summary_estimate(m, size) for m, size in zip(self.work.out.history, self.work.sizes, strict=True)]
        evicted = sum(estimates)
        cut, tail = len(self.work.sizes), 0
        while cut > 0:
            after = evicted - estimates[cut - 1]
            if tail + self.work.sizes[cut - 1] + min(summary_limit, old + after) > room:
                break
            cut -= 1
            tail += self.work.sizes[cut]
            evicted = after
        if whole_pairs:
            # A tool call and its results stay together: when the cut found splits them, they go with the span (the
            # tail then still fits) instead of with the tail, which they would push over the target, for
            # truncation to fold into the summary in a second pass of the ledger.
            safe = self.work.safe_cuts()
            while cut < len(self.work.sizes) and not safe[cut]:
                cut += 1
        return cut

    def fit_limit(self, summary_limit: int) -> int:
        """The summary limit for this run: the policy's, or less when the window leaves less room beside the header.

        The room is the target less the fixed part of the request, the summary message's own frame (header and
        pinned goal) and the smallest tail that may follow it (the newest message, with the call it answers), so a
        compaction always fits the window it is asked for.
        """
        return max(16, min(summary_limit, self.work.target - self.work.fixed - self._frame_and_newest() - 8))

    def _chunks(self, span: list[Message], safe: list[bool]) -> list[list[Message]]:
        """Split the span (originals) into summarizer-sized chunks; a single oversized original is split in parts."""
        budget = self.work.policy.summarizer_chunk(self.work.window)
        chunks: list[list[Message]] = [[]]
        size = 0
        for index, message in enumerate(span):
            tokens = self.work.counter.count_message(message)
            if chunks[-1] and size + tokens > budget and safe[index]:
                chunks.append([])
                size = 0
            if tokens > budget:
                for part in split_message(message, budget, self.work.counter):
                    if chunks[-1]:
                        chunks.append([])
                    chunks[-1].append(part)
                size = budget
                continue
            chunks[-1].append(message)
            size += tokens
        return [chunk for chunk in chunks if chunk]

    def saves(self, step: SummaryStep, summary: str) -> bool:
        """``summary`` costs less than the span of ``step`` and the old summary it replaces together."""
        goal_evicted = any(m.id == self.work.goal_id for m in self.work.out.history[: step.cut])
        new_summary = self.work.summary_tokens(summary, self.work.goal_live and not goal_evicted)
        old_summary = self.work.summary_tokens(self.work.out.summary, self.work.goal_live)
        return new_summary < old_summary + sum(self.work.sizes[: step.cut])

    def apply_summary(self, step: SummaryStep, summary: str, tier: str) -> bool:
        """Replace the span of ``step`` with ``summary`` in the working copy, if that makes the request smaller.

        A summary that costs at least as much as the span and the old summary together is not applied (a short
        history is better kept verbatim); the tier is then recorded as ``<tier>-skipped`` and False returned.
        """
        if not self.saves(step, summary):
            self.work.out.tiers.append(f"{tier}-skipped")
            return False
        self.work.archive_span(0, step.cut, "summarized", summarized=True)
        self.work.out.summary = summary
        self.work.out.tiers.append(tier)
        return True

    def extractive(self, step: SummaryStep, summary_limit: int) -> str:
        """The offline fallback summary for ``step`` (deterministic, bounded by our counter)."""
        return self.offline.summarize(
            step.request.model_copy(update={"max_tokens": max(summary_limit, step.request.max_tokens)})
        )
