"""How ``inspect`` and ``compact`` report how far their long steps are, without rich (the CLI draws the bars).

A :class:`Progress` callback hears each step with its counts, in order: ``reading`` (bytes of the file),
``parsing`` (messages; the total is unknown until done), ``counting`` (messages measured into the session, oversized
tool outputs bounded on arrival), then the compaction: ``clearing`` (tool outputs replaced by a marker; the total
is the tool outputs that could be, the bar closes at the number cleared once the target is reached) and
``summarizing`` (of the history's messages, those read into the ledger so far; shown only when the summarizer
runs, it closes at the number read: the recent tail is kept, not summarized).

The compaction is observed through the session's seams, not its internals: the default summarizer is swapped for
one that reports each chunk (:class:`ReportingSummarizer`, the same ledger), and the counter for one that notes
each cleared marker it measures (:class:`ClearWatch`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from ..compaction.summarize import ExtractiveSummarizer, SummaryRequest
from ..compaction.tiers import CLEARED_META
from ..messages.message import Message, ToolSchema
from ..messages.tokens import TokenCounter
from ..session.session import ContextSession

__all__ = ["STEPS", "ClearWatch", "Progress", "ReportingSummarizer", "compaction_progress", "no_progress"]

STEPS = ("reading", "parsing", "counting", "clearing", "summarizing")
"""The steps a :class:`Progress` hears about, in order."""


class Progress(Protocol):
    """Told how far a step is: ``completed`` of ``total`` (``None`` while unknown), with a short live note."""

    def __call__(self, step: str, completed: int, total: int | None, detail: str = "") -> None:
        """Report ``step`` (one of :data:`STEPS`) at ``completed`` of ``total``."""


def no_progress(step: str, completed: int, total: int | None, detail: str = "") -> None:
    """A :class:`Progress` that reports nowhere."""


class ReportingSummarizer(ExtractiveSummarizer):
    """The session's default offline summarizer, telling how many messages each chunk it summarizes holds."""

    def __init__(self, counter: TokenCounter, on_chunk: Callable[[int], None]) -> None:
        super().__init__(counter)
        self._on_chunk = on_chunk

    def summarize(self, request: SummaryRequest) -> str:
        """Report the chunk, then build the ledger as :class:`ExtractiveSummarizer` does."""
        self._on_chunk(len(request.messages))
        return super().summarize(request)


class ClearWatch:
    """A :class:`~ctxbudget.messages.TokenCounter` passing every call to ``inner``, noting each cleared marker once.

    Compaction measures every tool output it replaces by a cleared marker, so counting the distinct markers
    measured counts the outputs cleared so far.
    """

    def __init__(self, inner: TokenCounter, on_cleared: Callable[[int], None]) -> None:
        self._inner = inner
        self._on_cleared = on_cleared
        self._cleared: set[str] = set()

    @property
    def name(self) -> str:
        """The inner counter's name."""
        return self._inner.name

    @property
    def request_overhead(self) -> int:
        """The inner counter's reply priming."""
        return self._inner.request_overhead

    def count_text(self, text: str) -> int:
        """The inner counter's count."""
        return self._inner.count_text(text)

    def count_message(self, message: Message) -> int:
        """The inner counter's count; a cleared marker not seen before is reported."""
        if message.metadata.get(CLEARED_META) and message.id not in self._cleared:
            self._cleared.add(message.id)
            self._on_cleared(len(self._cleared))
        return self._inner.count_message(message)

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        """The inner counter's count."""
        return self._inner.count_tools(tools)

    def __getattr__(self, name: str) -> Any:  # ``exact`` and whatever else the inner counter offers
        return getattr(self._inner, name)


class _Compaction:
    """The ``clearing`` and ``summarizing`` bars of one compaction."""

    def __init__(self, session: ContextSession, progress: Progress) -> None:
        self.progress = progress
        self.messages = len(session.history)
        self.tools = sum(1 for m in session.history if m.role == "tool" and not m.metadata.get(CLEARED_META))
        self.cleared = 0
        self.summarized = 0
        self.clearing = True

    def on_cleared(self, count: int) -> None:
        self.cleared = count
        self.progress("clearing", count, max(self.tools, count), "old tool results to markers")

    def on_chunk(self, messages: int) -> None:
        self.close_clearing()
        self.summarized = min(self.messages, self.summarized + messages)
        self.progress("summarizing", self.summarized, self.messages, "into the ledger")

    def close_clearing(self) -> None:
        if self.clearing:
            self.clearing = False
            self.progress("clearing", self.cleared, self.cleared, "done")

    def close(self) -> None:
        self.close_clearing()
        if self.summarized:
            self.progress("summarizing", self.summarized, self.summarized, "done")


@contextmanager
def compaction_progress(session: ContextSession, progress: Progress) -> Iterator[None]:
    """Report the compaction ``session`` runs inside the block (its counter and default summarizer observed)."""
    bars = _Compaction(session, progress)
    progress("clearing", 0, bars.tools, "old tool results to markers")
    counter, summarizer = session.counter, session.summarizer
    session.counter = ClearWatch(counter, bars.on_cleared)
    if type(summarizer) is ExtractiveSummarizer:  # the default: the same ledger, reported chunk by chunk
        session.summarizer = ReportingSummarizer(counter, bars.on_chunk)
    try:
        yield
    finally:
        session.counter, session.summarizer = counter, summarizer
    bars.close()
