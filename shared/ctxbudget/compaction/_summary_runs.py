"""Running a summarizer for one compaction step: chunk by chunk, under a timeout, validated, sync or async.

Any failure (an exception, a timeout, blank or oversized or non-text output, the summarizer cancelling itself)
becomes a :class:`~ctxbudget.errors.SummarizerError`, which the session answers by falling back to the next tier.
Only a cancellation of the *caller* propagates as ``CancelledError``, leaving history untouched.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ..errors import SummarizerError
from ..messages._threads import CallTimedOut, call_in_thread
from ..messages.message import Message
from ..messages.tokens import TokenCounter
from .summarize import AsyncSummarizer, ExtractiveSummarizer, Summarizer, SummaryRequest, verify_summary
from .tiers import SummaryStep, validate_summary

__all__ = ["SummaryRun"]

_A = TypeVar("_A")
_R = TypeVar("_R")


def _call(function: Callable[[_A], _R], argument: _A, timeout: float | None) -> _R:
    """Call ``function(argument)``; with a timeout, on its own daemon thread so the clock starts at the call."""
    if timeout is None:
        return function(argument)
    return call_in_thread(lambda: function(argument), timeout=timeout, name="ctxbudget-summarizer")


def _chunk_request(step: SummaryStep, chunk: list[Message], previous: str | None, ask: int) -> SummaryRequest:
    # Deep copies: a summarizer that writes into a message's metadata must not alter the archived originals.
    messages = tuple(message.model_copy(deep=True) for message in chunk)
    return step.request.model_copy(update={"messages": messages, "previous_summary": previous, "max_tokens": ask})


VERIFY_RESERVE = 0.25
"""Share of the summary limit a model is not asked to fill: the room :func:`verify_summary` re-inserts into."""


_CALLER_STOPS = (KeyboardInterrupt, SystemExit)
"""Raised inside a summarizer, these are the user's or the process's, not the summarizer's: they propagate."""


def _failure(exc: BaseException) -> SummarizerError:
    if isinstance(exc, asyncio.CancelledError):
        return SummarizerError("summarizer: was cancelled")
    return SummarizerError(f"summarizer: raised {type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class SummaryRun:
    """One summarizer, its timeout, and the limit and counter its output is validated with."""

    summarizer: Summarizer | AsyncSummarizer
    timeout: float | None
    limit: int
    counter: TokenCounter
    offline_summarizer: ExtractiveSummarizer | None = None
    """The session's offline summarizer, which checks a model's summary (a new one when not given)."""

    def run(self, step: SummaryStep) -> str:
        """Summarize ``step`` on the calling thread's behalf (each chunk folds into the running summary)."""
        if isinstance(self.summarizer, ExtractiveSummarizer):
            return self._offline(self.summarizer, step)
        summarize = getattr(self.summarizer, "summarize", None)
        if summarize is None:  # an async-only summarizer on a sync path: run it on its own loop, bounded overall
            overall = None if self.timeout is None else self.timeout * len(step.chunks) + 1.0
            try:
                return _call(asyncio.run, self.arun(step), overall)
            except CallTimedOut as exc:
                raise SummarizerError(f"summarizer: timed out after {overall}s") from exc
            except (SummarizerError, *_CALLER_STOPS):
                raise
            except BaseException as exc:  # any failure falls back, never corrupts
                raise _failure(exc) from exc
        summary = step.request.previous_summary
        for chunk in step.chunks:
            try:
                raw = _call(summarize, _chunk_request(step, chunk, summary, self.ask_for(step)), self.timeout)
            except CallTimedOut as exc:
                raise SummarizerError(f"summarizer: timed out after {self.timeout}s") from exc
            except (SummarizerError, *_CALLER_STOPS):
                raise
            except BaseException as exc:  # any failure falls back, never corrupts
                raise _failure(exc) from exc
            summary = validate_summary(raw, limit=self.limit_for(step), counter=self.counter)
        if summary is None:
            raise SummarizerError("summarizer: the step had no chunks to summarize")
        return self._verified(summary, step)

    def _offline(self, summarizer: ExtractiveSummarizer, step: SummaryStep) -> str:
        """The offline ledger of the whole span, in one call on this thread.

        No chunks (it has no input window), no thread and no copies: it is this library's own bounded, linear code,
        and it never writes into the messages it reads. A failure still becomes a :class:`SummarizerError`.
        """
        try:
            raw = summarizer.summarize(step.request.model_copy(update={"max_tokens": self.ask_for(step)}))
        except (SummarizerError, *_CALLER_STOPS):
            raise
        except Exception as exc:  # a bug of ours falls back to truncation, never corrupts
            raise _failure(exc) from exc
        return validate_summary(raw, limit=self.limit_for(step), counter=self.counter)

    def ask_for(self, step: SummaryStep) -> int:
        """The size asked for ``step``: :attr:`ask`, or the step's own room for the offline ledger."""
        return max(self.ask, step.request.max_tokens) if self.offline else self.ask

    def limit_for(self, step: SummaryStep) -> int:
        """The largest summary accepted for ``step`` (the offline ledger may use the room the step gives it)."""
        return max(self.limit, step.request.max_tokens) if self.offline else self.limit

    @property
    def offline(self) -> bool:
        """The summarizer is the offline ledger (cheap and deterministic: it may be run again on a shorter span)."""
        return isinstance(self.summarizer, ExtractiveSummarizer)

    @property
    def ask(self) -> int:
        """The summary size a summarizer is asked for.

        The limit for the offline ledger; for a model, the limit less :data:`VERIFY_RESERVE`, so the check that
        re-inserts what it dropped has room (a model's summary is still accepted up to the limit).
        """
        if isinstance(self.summarizer, ExtractiveSummarizer):
            return self.limit
        return max(1, self.limit - math.ceil(self.limit * VERIFY_RESERVE))

    def _verified(self, summary: str, step: SummaryStep) -> str:
        """A model's summary, checked against the offline ledger of the span: what it dropped is re-inserted."""
        if isinstance(self.summarizer, ExtractiveSummarizer):
            return summary
        return verify_summary(
            summary, step.request, counter=self.counter, max_tokens=self.limit, offline=self.offline_summarizer
        )

    async def arun(self, step: SummaryStep) -> str:
        """Async :meth:`run`: uses ``asummarize`` when the summarizer has it, else the sync one in a thread."""
        if isinstance(self.summarizer, ExtractiveSummarizer):
            return self._offline(self.summarizer, step)  # bounded and linear: no thread needed
        summary = step.request.previous_summary
        asummarize = getattr(self.summarizer, "asummarize", None)
        for chunk in step.chunks:
            request = _chunk_request(step, chunk, summary, self.ask_for(step))
            try:
                if asummarize is not None:
                    raw = await asyncio.wait_for(asummarize(request), self.timeout)
                else:
                    sync = self.summarizer.summarize  # type: ignore[union-attr]  # the protocol has one or the other
                    raw = await asyncio.wait_for(asyncio.to_thread(sync, request), self.timeout)
            except asyncio.TimeoutError as exc:
                raise SummarizerError(f"summarizer: timed out after {self.timeout}s") from exc
            except asyncio.CancelledError as exc:
                # Task.cancelling() (3.11+) tells the caller's cancellation from the summarizer's own; without it,
                # treat every cancellation as the caller's: propagating is always safe, history is untouched.
                cancelling = getattr(asyncio.current_task(), "cancelling", None)
                if cancelling is None or cancelling():
                    raise
                raise _failure(exc) from exc
            except SummarizerError:
                raise
            except Exception as exc:  # any failure falls back, never corrupts
                raise _failure(exc) from exc
            summary = validate_summary(raw, limit=self.limit_for(step), counter=self.counter)
        if summary is None:
            raise SummarizerError("summarizer: the step had no chunks to summarize")
        return self._verified(summary, step)
