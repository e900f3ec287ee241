"""``BudgetedChatMessageHistory``: any chat history, kept compacted, for ``RunnableWithMessageHistory``.

It wraps another ``BaseChatMessageHistory`` (in memory, file, SQL, Redis, ...). Every ``add_messages`` appends to
the inner history, then the session measures it and compacts when over threshold (bound oversized tool outputs,
clear old results, summarize, truncate). After a compaction the inner history is rewritten to the compacted view:
a summary message first, then the live tail. Nothing is lost: every original that leaves the inner history is
appended, as it was, to the ``archive`` history kept alongside (an in-memory :class:`ArchiveHistory` by default;
pass a persistent one to keep originals across processes). Reloading a wrapper over a compacted inner history
restores the summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxbudget import BuiltRequest, ContextSession
from ctxbudget.errors import ContextOverflowError
from ctxbudget.messages import Message
from ctxbudget.policy import CompactionPolicy
from ctxbudget.snapshot import SessionSnapshot, TrackerSnapshot
from ctxbudget.summarize import AsyncSummarizer, Summarizer
from ctxbudget.tokens import TiktokenCounter, TokenCounter
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from ._checks import check_common, check_instance
from ._incremental import stable_id
from ._summary import fold_summary, is_summary, summary_message
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
    ) -> None:
        check_instance("inner", inner, BaseChatMessageHistory)
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
        self._archived: set[str] = set()
        self._archived_ids: set[str] = set()
        self._stored = 0
        self.session = self._load(_readable(inner))

    # -- loading -----------------------------------------------------------------------------------------------
    def _load(self, stored: Sequence[BaseMessage]) -> ContextSession:
        session = ContextSession(**self._options)
        messages = list(stored)
        marks = _summary_marks(messages[0]) if messages else None
        if marks is not None:
            snapshot = SessionSnapshot(
                session_id=session.session_id,
                max_tokens=session.max_tokens,
                policy=session.policy.model_dump(mode="json"),
                summary=marks.get("summary"),
                goal=marks.get("goal"),
                tracker=TrackerSnapshot(ratio=1.0, samples=0),
            )
            session = ContextSession.restore(snapshot, counter=session.counter, summarizer=self._summarizer)
            messages = messages[1:]
        session.add(*self._track(messages, len(stored) - len(messages)))
        for entry in session.archive:  # bounded on load: the inner history is rewritten at the next add
            if entry.message is not None:
                self.archive.add_messages([self.converter.to_langchain(entry.message)])
                self._archived_ids.add(entry.message.id)
            self._archived.add(entry.handle)
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
        (``start`` is the first one's) and its content, so a wrapper reloaded over the same inner history gives it
        the same id; that id maps back to the object given, so the inner history holds the caller's own objects.
        """
        converted: list[Message] = []
        for index, lc in enumerate(messages, start):
            if lc.id:
                converted.append(self.converter.to_message(lc))
                continue
            message = from_langchain(lc.model_copy(update={"id": stable_id(index, lc)}))
            self.converter.adopt(lc, message)
            converted.append(message)
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
        if built.compaction is not None or self._has_new_archive():
            originals = self._new_originals()
            if originals:
                self.archive.add_messages(originals)
            self.inner.clear()
            self.inner.add_messages(self._view(built))

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Async :meth:`add_messages` (uses the summarizer's ``asummarize``)."""
        accepted = self._accept(messages)
        await self.inner.aadd_messages(accepted)
        try:
            built = await self.session.abuild_request()
        except ContextOverflowError as exc:
            raise LangChainContextOverflowError.from_core(exc) from exc
        if built.compaction is not None or self._has_new_archive():
            originals = self._new_originals()
            if originals:
                await self.archive.aadd_messages(originals)
            await self.inner.aclear()
            await self.inner.aadd_messages(self._view(built))

    def clear(self) -> None:
        """Clear the conversation (the archive of earlier originals is kept)."""
        self.inner.clear()
        self.session = self._load([])

    async def aclear(self) -> None:
        """Async :meth:`clear`."""
        await self.inner.aclear()
        self.session = self._load([])

    # -- compaction results ------------------------------------------------------------------------------------
    def _has_new_archive(self) -> bool:
        return len(self.session.archive) != len(self._archived)

    def _new_originals(self) -> list[BaseMessage]:
        """Originals archived since last time, each message once (its first archived version is the original)."""
        originals: list[BaseMessage] = []
        for entry in self.session.archive:
            if entry.handle in self._archived:
                continue
            self._archived.add(entry.handle)
            message = entry.message
            if message is not None and message.id not in self._archived_ids:
                self._archived_ids.add(message.id)
                originals.append(self.converter.to_langchain(message))
        return originals

    def _view(self, built: BuiltRequest) -> list[BaseMessage]:
        view: list[BaseMessage] = []
        head = next((m for m in built.messages if m.metadata.get("ctxbudget") == "summary"), None)
        if head is not None:
            marks = {"kind": "summary", "summary": self.session.summary, "goal": self.session.goal}
            view.append(summary_message(head.text, head.id, marks))
        for message in self.session.history:  # rewritten after a compaction: with ids, so a reload keeps them
            lc = self.converter.to_langchain(message)
            view.append(lc if lc.id else lc.model_copy(update={"id": message.id}))
        self._stored = len(view)
        return view
