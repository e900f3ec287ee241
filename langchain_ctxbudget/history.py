"""``BudgetedChatMessageHistory``: any chat history, kept compacted, for ``RunnableWithMessageHistory``.

It wraps another ``BaseChatMessageHistory`` (in memory, file, SQL, Redis, ...). Every ``add_messages`` appends to
the inner history, then the session measures it and compacts when over threshold (bound oversized tool outputs,
clear old results, summarize, truncate). After a compaction the inner history is rewritten to the compacted view:
a summary message first, then the live tail. Nothing is lost: every original that leaves the inner history is
appended, as it was, to the ``archive`` history kept alongside (an in-memory :class:`ArchiveHistory` by default;
pass a persistent one to keep originals across processes). Reloading a wrapper over a compacted inner history
restores the summary.

The session's own archive (what ``session.read_archived`` and ``session.search_archive`` read, by handle) is kept in
an archive store (``archive_store``; default the process's in-memory SQLite database, as the middleware's), not in
memory: the wrapper holds the live tail, the summary and the handles, and drops what compaction archived (its
converted forms included). The summary message records the archive's reference, so a wrapper reloaded over the same
inner history and store reads the earlier originals back by handle too.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any

from ctxbudget import BuiltRequest, ContextSession
from ctxbudget.archive import ArchiveEntry
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import AsyncSummarizer, Summarizer
from ctxbudget.errors import ArchiveError, ContextOverflowError
from ctxbudget.messages import Message
from ctxbudget.messages.tokens import TiktokenCounter, TokenCounter
from ctxbudget.session.snapshot import SessionSnapshot, TrackerSnapshot
from ctxbudget.stores.base import SnapshotStore
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from ._archive_store import ArchiveRef, is_ref, space_for
from ._archives import Archives
from ._checks import check_common, check_instance
from ._incremental import stable_id
from ._summary import fold_summary, is_summary, summary_message
from ._thread_archive import ThreadArchive
from .convert import CTXBUDGET_KEY, MessageConverter, from_langchain
from .errors import LangChainContextOverflowError
from .summarizer import LangChainSummarizer

__all__ = ["ArchiveHistory", "BudgetedChatMessageHistory"]


class ArchiveHistory(BaseChatMessageHistory):
    """The default archive: an append-only in-memory list of originals."""

    def __init__(self) -> None:
        self._messages: list[BaseMessage] = []

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # read-only view
        """The archived originals, in archiving order."""
        return list(self._messages)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append originals."""
        self._messages.extend(messages)

    def clear(self) -> None:
        """Forget every original (only on explicit request)."""
        self._messages.clear()


def _readable(inner: BaseChatMessageHistory) -> list[BaseMessage]:
    """What ``inner`` holds; nothing for a write-only history (one that defines no ``messages``)."""
    try:
        return list(inner.messages)
    except (AttributeError, NotImplementedError):
        return []


def _folded(messages: list[BaseMessage]) -> list[BaseMessage]:
    return fold_summary(messages[:2]) + messages[2:] if messages and is_summary(messages[0]) else messages


def _summary_marks(message: BaseMessage) -> dict[str, Any] | None:
    marks = message.response_metadata.get(CTXBUDGET_KEY)
    return marks if isinstance(marks, dict) and marks.get("kind") == "summary" else None


class BudgetedChatMessageHistory(BaseChatMessageHistory):
    """A chat history that stays within ``max_tokens`` by compacting, archiving every original it removes.

    Args:
        inner: the history that stores the (compacted) conversation.
        max_tokens: the token budget of the history.
        counter: token counter (default exact ``o200k_base``).
        policy: compaction policy.
        summarizer: a chat model (``nostream``-tagged), a ctxbudget summarizer, or ``None`` (offline extractive).
        archive: where originals go when they leave ``inner`` (default: a new in-memory history).
        session_id: id of the underlying session (default: random).
        archive_store: where the session's archive is kept (default: the process's in-memory SQLite store).
    """

    def __init__(
        self,
        inner: BaseChatMessageHistory,
        *,
        max_tokens: int,
        counter: TokenCounter | None = None,
        policy: CompactionPolicy | None = None,
        summarizer: BaseChatModel | Summarizer | AsyncSummarizer | None = None,
        archive: BaseChatMessageHistory | None = None,
        session_id: str | None = None,
        archive_store: SnapshotStore | None = None,
    ) -> None:
        check_instance("inner", inner, BaseChatMessageHistory)
        check_instance("archive_store", archive_store, SnapshotStore, optional=True)
        check_instance("archive", archive, BaseChatMessageHistory, optional=True)
        check_common(counter=counter, policy=policy, summarizer=summarizer)
        self.inner = inner
        self.archive = archive if archive is not None else ArchiveHistory()
        self.converter = MessageConverter()
        self._summarizer = LangChainSummarizer(summarizer) if isinstance(summarizer, BaseChatModel) else summarizer
        self._options: dict[str, Any] = {
            "max_tokens": max_tokens,
            "counter": counter or TiktokenCounter(),
            "policy": policy,
            "summarizer": self._summarizer,
            "session_id": session_id,
        }
        self._archives = Archives(archive_store)
        self._archived_ids: set[str] = set()
        self._stored = 0
        self._last_id = ""
        self._thread_archive: ThreadArchive
        self.session = self._load(_readable(inner))

    # -- loading -----------------------------------------------------------------------------------------------
    def _new_archive(self, ref: object) -> ThreadArchive:
        """The session's archive in the store: the chain ``ref`` names (from the summary marks), else a new one."""
        backend = self._archives.backend(None)
        if isinstance(ref, dict) and is_ref(ref):
            try:
                loaded = ArchiveRef.from_state(ref)
                archive = ThreadArchive(loaded.space, backend, self._archives.cache)
                archive.load(loaded)
                return archive
            except ArchiveError:  # another store, or it is gone: the originals are in the archive history
                pass
        space = space_for(f"history-{self._options['session_id'] or id(self)}-{uuid.uuid4().hex[:8]}")
        return ThreadArchive(space, backend, self._archives.cache)

    def _load(self, stored: Sequence[BaseMessage]) -> ContextSession:
        session = ContextSession(**self._options)
        messages = list(stored)
        marks = _summary_marks(messages[0]) if messages else None
        snapshot = SessionSnapshot(
            session_id=session.session_id,
            max_tokens=session.max_tokens,
            policy=session.policy.model_dump(mode="json"),
            summary=marks.get("summary") if marks else None,
            goal=marks.get("goal") if marks else None,
            tracker=TrackerSnapshot(ratio=1.0, samples=0),
        )
        self._thread_archive = self._new_archive(marks.get("archive") if marks else None)
        session = ContextSession.restore(
            snapshot, counter=session.counter, summarizer=self._summarizer, archive=self._thread_archive
        )
        self._last_id = ""
        if marks is not None:
            self._last_id = messages[0].id or ""
            messages = messages[1:]
        session.add(*self._track(messages, len(stored) - len(messages)))
        self._flush()  # bounded on load: the inner history is rewritten at the next add
        return session

    # -- BaseChatMessageHistory --------------------------------------------------------------------------------
    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # a read-only view of the inner history
        """The compacted conversation: the summary message (after a compaction) and the live tail.

        The summary is stored as its own message (as LangChain's ``SummarizationMiddleware`` writes it) and, when a
        human message follows it, read folded into that message, so no two user turns touch.
        """
        return _folded(self.inner.messages)

    async def aget_messages(self) -> list[BaseMessage]:
        """Async :attr:`messages`."""
        return _folded(await self.inner.aget_messages())

    def _track(self, messages: Sequence[BaseMessage], start: int) -> list[Message]:
        """The session's form of each message; the message itself is stored as given (an id-less one stays so).

        An id-less message is converted through a copy whose id comes from its position in the inner history
        (``start`` is the first one's), its content and the id of the message before it, so a wrapper reloaded over
        the same inner history gives it the same id, and a message like an earlier one at the same position after a
        rewrite (the same reply twice) does not; that id maps back to the object given, so the inner history holds
        the caller's own objects.
        """
        converted: list[Message] = []
        previous = self._last_id
        for index, lc in enumerate(messages, start):
            if lc.id:
                converted.append(self.converter.to_message(lc))
                previous = lc.id
                continue
            base = stable_id(index, lc)
            chained = "lc_" + hashlib.sha256((previous + "\x00" + base).encode()).hexdigest()[:32]
            message = from_langchain(lc.model_copy(update={"id": chained}))
            self.converter.adopt(lc, message)
            converted.append(message)
            previous = chained
        self._last_id = previous
        self._stored = start + len(messages)
        return converted

    def _accept(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        accepted = list(messages)
        self.session.add(*self._track(accepted, self._stored))
        return accepted

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append, then compact when over threshold (rewriting the inner history and archiving originals)."""
        accepted = self._accept(messages)
        self.inner.add_messages(accepted)
        try:
            built = self.session.build_request()
        except ContextOverflowError as exc:
            raise LangChainContextOverflowError.from_core(exc) from exc
        flush = self._thread_archive.plan()
        if built.compaction is not None or flush is not None:
            if flush is not None:
                originals = self._originals(flush.new)
                if originals:
                    self.archive.add_messages(originals)
                self._thread_archive.write(flush)
            view = self._view(built)
            self._forget_archived()
            self.inner.clear()
            self.inner.add_messages(view)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Async :meth:`add_messages` (uses the summarizer's ``asummarize`` and the store's async twins)."""
        accepted = self._accept(messages)
        await self.inner.aadd_messages(accepted)
        try:
            built = await self.session.abuild_request()
        except ContextOverflowError as exc:
            raise LangChainContextOverflowError.from_core(exc) from exc
        flush = self._thread_archive.plan()
        if built.compaction is not None or flush is not None:
            if flush is not None:
                originals = self._originals(flush.new)
                if originals:
                    await self.archive.aadd_messages(originals)
                await self._thread_archive.awrite(flush)
            view = self._view(built)
            self._forget_archived()
            await self.inner.aclear()
            await self.inner.aadd_messages(view)

    def clear(self) -> None:
        """Clear the conversation (the archive of earlier originals is kept)."""
        self.inner.clear()
        self.session = self._load([])

    async def aclear(self) -> None:
        """Async :meth:`clear`."""
        await self.inner.aclear()
        self.session = self._load([])

    # -- compaction results ------------------------------------------------------------------------------------
    def _flush(self) -> None:
        """Write what the session archived (on load: outputs bounded as they were read) to the stores."""
        flush = self._thread_archive.plan()
        if flush is not None:
            originals = self._originals(flush.new)
            if originals:
                self.archive.add_messages(originals)
            self._thread_archive.write(flush)

    def _originals(self, entries: Sequence[ArchiveEntry]) -> list[BaseMessage]:
        """The LangChain form of newly archived originals, each message once (its first archived version)."""
        originals: list[BaseMessage] = []
        for entry in entries:
            message = entry.message
            if message is not None and message.id not in self._archived_ids:
                self._archived_ids.add(message.id)
                originals.append(self.converter.to_langchain(message))
        return originals

    def _forget_archived(self) -> None:
        """Drop from memory what left the live history: it is in the stores (and the archive history)."""
        live = {m.id for m in self.session.history}
        self._thread_archive.release(live)
        self.converter.retain(live)

    def _view(self, built: BuiltRequest) -> list[BaseMessage]:
        view: list[BaseMessage] = []
        head = next((m for m in built.messages if m.metadata.get("ctxbudget") == "summary"), None)
        if head is not None:
            marks = {
                "kind": "summary",
                "summary": self.session.summary,
                "goal": self.session.goal,
                "archive": self._thread_archive.ref().to_state(),
            }
            view.append(summary_message(head.text, head.id, marks))
        for message in self.session.history:  # rewritten after a compaction: with ids, so a reload keeps them
            lc = self.converter.to_langchain(message)
            view.append(lc if lc.id else lc.model_copy(update={"id": message.id}))
        self._stored = len(view)
        self._last_id = (view[-1].id or "") if view else ""
        return view
