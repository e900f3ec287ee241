"""How ``ctxbudget inspect`` and ``ctxbudget compact`` run a transcript: streamed into a session, compacted as live.

A transcript streams (:mod:`ctxbudget.transcripts.formats._open`) into a
:class:`~ctxbudget.session.session.ContextSession`, one message at a time, as the live session that produced it would
have been fed: its leading system messages are the session's system prompt (never compacted), the rest is the history.
Whenever the history reaches the policy's threshold the session compacts, as it would have live, and everything it
evicts goes to the archive, which is written out as it grows (:mod:`ctxbudget.cli._archive`): memory holds the window
and one message, not the file (what is remembered of every message, its id, add position and archive handles,
spills to temporary files past a few MiB). At the end a manual compaction runs (what ``/compact`` does); ``inspect``
reports it, ``compact`` keeps it: the request to send next, the cumulative summary and the archive of every original
that left it. The result is a :class:`~ctxbudget.cli._run.Run` (whether compacting is worth it:
:mod:`ctxbudget.cli._run`); its report and document are :mod:`ctxbudget.cli._report`'s (re-exported here).

A document ``compact`` wrote resumes where it left off: its summary, goal and archive seed the session, and the
messages the session generated (the summary message, synthetic tool results) are left out of the history, so
compacting it again loses nothing. Claude Code's own history before a ``compact_boundary`` (not sent) goes to the
archive as it is read (reason ``summarized``): it is kept, and reported apart.

The model is ``--model``, else the one the transcript names when the registry knows it, else :data:`DEFAULT_MODEL`;
the report says which and why. The prompt sizes a transcript records itself (the provider's usage) are reported
beside our count of the same request. A Claude Code file holds neither Claude Code's system prompt nor its tool
definitions (nor does an ATIF trajectory made from one): when a transcript with usage figures holds no system
message and no tools, what the agent adds is measured from the file's first usage figure (the first request's
prompt less our count of the messages it held) and counted in the window usage as ``harness_tokens``; the request
``compact`` writes carries no such system prompt, so its compaction figures leave them out.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import CompactionError, ContextOverflowError
from ..messages.message import Message
from ..messages.registry import DEFAULT_REGISTRY
from ..messages.tokens import EstimatingCounter, TiktokenCounter, TokenCounter
from ..providers.anthropic_tokens import AnthropicCounter, preserves_thinking
from ..session.session import ContextSession
from ..transcripts.formats._detect import COMPACTED_FORMAT
from ..transcripts.formats._items import Head, Replaced, Reported
from ..transcripts.formats._open import TranscriptStream
from ._archive import ArchiveSink, SpillArchive
from ._progress import Progress, compaction_progress, no_progress
from ._report import archived_originals, document, originals_from_compacted, report, sent_messages, tools_of
from ._run import MIN_GAIN_OF_PROMPT, MIN_GAIN_OF_WINDOW, Run, Settings, Usage
from ._stats import Tally

__all__ = [
    "COMPACTED_FORMAT",
    "DEFAULT_MODEL",
    "MIN_GAIN_OF_PROMPT",
    "MIN_GAIN_OF_WINDOW",
    "Run",
    "Settings",
    "archived_originals",
    "counter_for",
    "document",
    "flags_in",
    "originals_from_compacted",
    "report",
    "resolve_model",
    "run_transcript",
    "sent_messages",
    "tools_of",
]

DEFAULT_MODEL = "gpt-4o"
"""The model used when neither ``--model`` nor the transcript names one the registry knows."""
_SESSION_ID = "ctxbudget-cli"
_CACHE = 4_096
"""Counts the counter remembers: enough for the window's messages, bounded whatever the file's length."""
_REPORT_EVERY = 256  # messages between two progress reports


def counter_for(model: str, max_tokens: int | None = None) -> TokenCounter:
    """The counter a session picks for ``model``, with a cache bounded by :data:`_CACHE`.

    A model the registry lacks is estimated when the window is given (``max_tokens``), as a session does.

    Raises:
        UnknownModelError: ``model`` is not registered and no window is given (the nearest names suggested).
    """
    info = DEFAULT_REGISTRY.find(model)
    if info is None:
        if max_tokens is None:
            raise DEFAULT_REGISTRY.unknown(model)
        return EstimatingCounter(cache_size=_CACHE)
    if info.exact:
        return TiktokenCounter(info.encoding, cache_size=_CACHE)
    if info.provider == "anthropic":
        return AnthropicCounter(info.name, factor=info.token_factor, encoding=info.encoding, cache_size=_CACHE)
    return EstimatingCounter(info.token_factor, encoding=info.encoding, cache_size=_CACHE)


def resolve_model(flag: str | None, head: Head) -> tuple[str, str]:
    """The model to count with, and where it came from (for the report)."""
    if flag is not None:
        return flag, "--model"
    if head.model is not None and DEFAULT_REGISTRY.find(head.model) is not None:
        return head.model, head.model_from or "the transcript"
    if head.model is not None:
        return DEFAULT_MODEL, (
            f"the default: the transcript names {head.model!r} ({head.model_from}), which the model registry does "
            "not know; --model NAME or --max-tokens N to choose"
        )
    return DEFAULT_MODEL, "the default: the transcript names no model"


def run_transcript(
    stream: TranscriptStream,
    settings: Settings,
    sink: ArchiveSink,
    *,
    progress: Progress = no_progress,
    trial: bool = False,
) -> Run:
    """Stream ``stream`` into a session, compacting as a live session would, then compact once more.

    ``trial`` (``inspect``) records a compaction failure in :attr:`Run.error` instead of raising it.

    Raises:
        TranscriptError: a malformed row (line and field named).
        UnknownModelError: ``--model`` names no registered model.
        CompactionError, ContextOverflowError: the history cannot be made to fit (unless ``trial``).
    """
    return _Feeder(stream, settings, sink, progress, trial).run()


class _Feeder:
    """Feeds a transcript's items into a session (built when the leading system messages are known)."""

    def __init__(
        self, stream: TranscriptStream, settings: Settings, sink: ArchiveSink, progress: Progress, trial: bool
    ) -> None:
        self.stream = stream
        self.settings = settings
        self.progress = progress
        self.trial = trial
        self.head = stream.head
        self.model, self.model_from = resolve_model(settings.model, self.head)
        self.counter = counter_for(self.model, settings.max_tokens)
        self.sink = sink
        self.archive = SpillArchive(sink)
        counter = self.counter
        strips = isinstance(counter, AnthropicCounter) and not preserves_thinking(self.model)
        self.tally = Tally(
            settings.top, counter.thinking_tokens if isinstance(counter, AnthropicCounter) and strips else None
        )
        self.system: list[Message] = []
        self.session: ContextSession | None = None
        self.fixed = self.counter.request_overhead + self.counter.count_tools(self.head.tools)
        self.harness = 0
        self.usage: list[Usage] = []
        self.replaced = self.replaced_tokens = 0
        self.compactions = 0
        self.tiers: list[str] = []
        self.error: str | None = None
        self.retry_at = 0  # after a failed compaction: the count to reach before trying again

    # -- the session -------------------------------------------------------------------------------------------
    def _build(self) -> ContextSession:
        settings = self.settings
        fresh = ContextSession(
            model=self.model,
            max_tokens=settings.max_tokens,
            counter=self.counter,
            system_prompt="\n\n".join(m.text for m in self.system) or None,
            tools=self.head.tools,
            session_id=_SESSION_ID,
            compact_instructions=settings.instructions,
            policy=settings.policy,
        )
        snapshot = fresh.snapshot().model_copy(update={"summary": self.head.summary, "goal": self.head.goal})
        session = ContextSession.restore(snapshot, counter=self.counter, archive=self.archive)
        session.conversation.keep_order_in(self.sink.index())  # every id added: spilled, not held
        return session

    def _session(self) -> ContextSession:
        if self.session is None:
            self.session = self._build()
        return self.session

    # -- reading -----------------------------------------------------------------------------------------------
    def run(self) -> Run:
        self.progress("reading", *self.stream.position())
        self.progress("counting", 0, None)
        for item in self.stream.items():
            if isinstance(item, Message):
                self._message(item)
            elif isinstance(item, Replaced):
                self.replaced += 1
                self.replaced_tokens += self.counter.count_message(item.message)
                self.archive.put_message(item.message, "summarized")
            elif isinstance(item, Reported):
                self._reported(item)
            else:
                self.archive.add(item)
        self.tally.pairs.finish()
        self.progress("reading", self.stream.position()[1], self.stream.position()[1])
        count = self.tally.messages
        self.progress("counting", count, count)
        session = self._session()
        run = Run(
            head=self.head,
            model=self.model,
            model_from=self.model_from,
            session=session,
            sink=self.sink,
            tally=self.tally,
            system=self.system,
            used=self.tally.sent + self.fixed,
            harness=self.harness,
            replaced=self.replaced,
            replaced_tokens=self.replaced_tokens,
            usage=self.usage,
        )
        self._finish(run)
        return run

    def _message(self, message: Message) -> None:
        tokens = self.counter.count_message(message)
        self.tally.add(message, tokens)
        if self.tally.messages % _REPORT_EVERY == 0:
            self.progress("reading", *self.stream.position())
            self.progress("counting", self.tally.messages, None, f"{self.compactions:,} compactions")
        if message.metadata.get("ctxbudget"):  # generated by the session that wrote this document: made again
            return
        if self.session is None and message.role == "system":
            self.system.append(message)
            return
        session = self._session()
        self.sink.arriving = True
        try:
            session.add(message)
        finally:
            self.sink.arriving = False
        if self.error is None and session.counted_tokens() >= max(self._threshold(), self.retry_at):
            self._compact_live(session)

    def _threshold(self) -> int:
        session = self._session()
        return int(session.policy.threshold * session.max_tokens) if session.policy.auto else 1 << 62

    def _reported(self, item: Reported) -> None:
        ours = self.tally.sent + self.fixed + self.harness
        if not self.usage and not self.system and not self.head.tools:
            # The file holds neither a system prompt nor tools (Claude Code's, and ATIF made from it): what the
            # first request held beyond the file's messages is what the agent adds to every request.
            self.harness = max(0, item.prompt_tokens - ours)
            ours += self.harness
        report = Usage(item.prompt_tokens, ours, self.tally.messages, item.where)
        self.usage = [self.usage[0], report] if self.usage else [report]

    def _compact_live(self, session: ContextSession) -> None:
        """Compact as the live session would have, before its next request."""
        try:
            request = session.build_request()
        except ContextOverflowError as exc:
            self._failed(exc)
            return
        event = request.compaction
        if event is None:  # the compaction failed (reported as an event): try again once the history grew
            self.retry_at = session.counted_tokens() + max(1, session.max_tokens // 10)
            return
        self._compacted(event.tiers, session)

    def _compacted(self, tiers: Sequence[str], session: ContextSession) -> None:
        self.compactions += 1
        self.tiers.extend(tier for tier in tiers if tier not in self.tiers)
        self.retry_at = 0
        self.archive.retain({m.id for m in session.history})

    def _failed(self, exc: Exception) -> None:
        if not self.trial:
            raise exc
        self.error = _flags(str(exc))

    # -- the final compaction ----------------------------------------------------------------------------------
    def _finish(self, run: Run) -> None:
        session = run.session
        run.compactions = run.live_compactions = self.compactions
        run.tiers = self.tiers
        if self.error is None:
            try:
                with compaction_progress(session, self.progress):
                    event = session.compact()
                run.tiers.extend(tier for tier in event.tiers if tier not in run.tiers)
                run.compactions += 1
            except CompactionError as exc:
                if run.needed:  # else nothing to compact: nothing to do
                    self.error = _flags(str(exc))
                    if not self.trial:
                        raise
            try:
                request = session.build_request()
            except ContextOverflowError as exc:
                self._failed(exc)
                run.sent = []
            else:
                run.sent = list(request.messages[1:] if session.system_prompt else request.messages)
                sent_ids = {m.id for m in run.sent}
                for message in session.history:
                    if message.id not in sent_ids:
                        session.archive.put_message(message, "dropped")
                run.after = request.tokens
        run.error = self.error
        if run.error is not None:
            run.after = run.used


_FLAGS = (("max_tokens", "--max-tokens"), ("keep_recent_messages", "--keep-recent"), ("target", "--target"))


def _flags(message: str) -> str:
    """An error's Python parameter names as the command line's flags."""
    for name, flag in _FLAGS:
        message = message.replace(f"raise {name}", f"raise {flag}").replace(f"lower {name}", f"lower {flag}")
        message = message.replace(f"({name})", f"({flag})")
    return message


def flags_in(message: str) -> str:
    """:func:`_flags` for the CLI's error lines."""
    return _flags(message)
