"""One conversation thread as the middleware sees it: a session mirroring the agent state, plus what to persist.

The agent state (``messages`` + the ``ctxbudget_*`` fields) is the source of truth; the session is a cache of it
that makes each model call cost O(new messages). :class:`ThreadView` keeps the ids of the state's messages as it
expects them after its pending update is applied, and recognises the state by those ids (a checkpointer hands over
fresh objects on every invoke): the view's first and last ids, and ids sampled between them, must be where the view
has them. When they are not (a checkpoint from another branch, messages removed or inserted, an update that was never
applied because the model call failed) the view is rebuilt from the state. A message edited in place under its own
id is read as edited when the view does not hold it yet (the AI reply a human-in-the-loop step edits before its tools
run is new to the view at the next call), and noticed when it is the first or the last message the view holds (the
view is then rebuilt, so what is sent is what is counted). Elsewhere such an edit is taken for the message the view
holds (known limitation): counted as the view holds it and, while the view is verbatim (a request hands on the
state's own list), sent as the state holds it.

The archived originals are not in the state: it holds an :class:`~langchain_ctxbudget._archive_store.ArchiveRef`
to the thread's archive in a store (see ``_archive_store``), written by :meth:`ThreadView.take_update` just before
the update that names it. A state written by an earlier version, with its archive inline, is migrated on first use:
its entries are written to the store and the reference replaces them.

New state messages are counted from their LangChain form and kept *waiting* (in ``lc``, not yet in the session) while
a request can be sent without the session having them: below the compaction threshold, nothing for the session to
shape. They are converted and added, with their counts, when it must have them (:meth:`ThreadView.settle`); see
:mod:`~langchain_ctxbudget._waiting`.

A caller's ``SystemMessage`` in the state joins the session's leading system block (providers accept system content
only at the start), so it is sent first in every request; it stays where it is in the state, is never removed by
compaction, and a view rebuilt from a checkpoint adds it again.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from operator import attrgetter, itemgetter
from typing import Any

from ctxbudget.compaction import ARCHIVE_META
from ctxbudget.compaction.tiers import CLEARED_META
from ctxbudget.messages import Message
from ctxbudget.session import ContextSession
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from ._editing import ClearedResult, cleared_results
from ._thread_archive import ThreadArchive
from ._update import Pending, session_meta
from ._waiting import Waiting, fields_counter
from .convert import CTXBUDGET_KEY, MessageConverter, ensure_id, lacks_tool_call_ids, with_tool_call_ids
from .events import EventForwarder

__all__ = ["ThreadView"]

_SAMPLES = 16
"""Ids checked between the first and the last when recognising the state (besides those two)."""
_ID = attrgetter("id")


def _same(given: BaseMessage, held: BaseMessage) -> bool:
    """``given`` (the state's) says what ``held`` (the view's) does: the same id, content and tool calls."""
    if given is held:
        return True
    if given.id != held.id or given.content != held.content:
        return False
    if isinstance(given, AIMessage) or isinstance(held, AIMessage):  # only an AIMessage has tool calls
        return isinstance(given, AIMessage) and isinstance(held, AIMessage) and given.tool_calls == held.tool_calls
    return True


def _slim(message: BaseMessage) -> tuple[BaseMessage, str | None, Any]:
    """Split a bounded tool output into (message without its original, handle, original content)."""
    if not isinstance(message, ToolMessage):
        return message, None, None
    marks = message.response_metadata.get(CTXBUDGET_KEY)
    if not isinstance(marks, dict) or "original" not in marks:
        return message, None, None
    kept = {k: v for k, v in marks.items() if k != "original"}
    metadata = {**message.response_metadata, CTXBUDGET_KEY: kept}
    return message.model_copy(update={"response_metadata": metadata}), kept.get("handle"), marks["original"]


class ThreadView:
    """The session of one thread, the state messages it mirrors, and the update still to persist."""

    def __init__(
        self,
        session: ContextSession,
        converter: MessageConverter,
        forwarder: EventForwarder,
        archive: ThreadArchive,
    ) -> None:
        self.session = session
        self.archive = archive
        self.cleared: dict[str, ClearedResult] = {}
        """Tool results compaction cleared, by message id (for the request-time edits)."""
        self.converter = converter
        self.forwarder = forwarder
        self.lc: list[BaseMessage] = []
        """The state's messages as they will be once the pending update is applied (caller system messages too)."""
        self.ids: list[str | None] = []
        """``lc``'s ids, position for position."""
        self.msgs: list[Message] = []
        """The session's history: ``lc`` without its system messages (which the session keeps in its system block)
        and without the messages waiting (its last ones)."""
        self.system_at: list[int] = []
        """Positions in ``lc`` of the caller's system messages, ascending."""
        self.pending = Pending()
        self.lock = threading.RLock()
        self.tool_key: tuple[int, ...] = ()
        self.system_seen: tuple[BaseMessage, object, str] | None = None
        """The agent's system message last read, its str content (by identity) and its text."""
        self.changed = False
        """Whether the session's history ever differed from the state's messages (compaction, bounding)."""
        self.verbatim = True
        """Whether ``lc`` holds the state's messages as the state handed them over, position for position (none
        bounded, given call ids, absorbed, nor a system message): a request that sends the history as it is then
        sends the state's own list, which holds the same messages (recognised by id, see :meth:`extends`)."""
        self.synced: tuple[list[Message], int] | None = None
        """``(list, n)``: ``msgs`` is, object for object, the first ``n`` messages of that list of the session's live
        history. The session only ever appends to such a list or swaps it for a new one, so while a request reads
        the same list and length, ``msgs`` is its history without comparing them (``None``: not known)."""
        live = session.conversation.live.messages
        if not live:
            self.synced = (live, 0)
        counter = fields_counter(session.counter)
        self.waiting = Waiting(counter, session) if counter is not None else None
        """State messages counted and not yet in the session (see :mod:`~langchain_ctxbudget._waiting`): the last
        ones of ``lc``; ``None`` when the counter cannot count them from their fields (each is added on arrival)."""
        self.served: int | None = None
        """Our count of the request last sent with messages waiting (the reply's usage calibrates it), else ``None``."""
        forwarder.attach(session)

    def extends(self, messages: Sequence[BaseMessage]) -> bool:
        """True when ``messages`` starts with the view's messages, recognised by id in O(1) (see the module doc).

        The first and the last of them are also compared by content (and tool calls): an edit under the same id
        there (``update_state`` on the request that started the thread, or on the newest message the model saw) is
        a change the view must be rebuilt for, not a message it already holds.
        """
        n = len(self.ids)
        if len(messages) < n:
            return False
        if n == 0:
            return True
        held = self.lc
        if len(held) == n and not (_same(messages[0], held[0]) and _same(messages[n - 1], held[n - 1])):
            return False
        if n == 1:
            return bool(messages[0].id == self.ids[0])
        sampled = itemgetter(n - 1, *range(0, n - 1, max(1, n // _SAMPLES)))  # two or more: a tuple each
        return bool(tuple(map(_ID, sampled(messages))) == sampled(self.ids))  # fetched and compared in C

    def body(self) -> list[BaseMessage]:
        """``lc`` without the caller's system messages: the LangChain form of ``msgs``, position for position."""
        if not self.system_at:
            return self.lc
        out: list[BaseMessage] = []
        start = 0
        for position in self.system_at:  # list slices: copied in C, one per system message
            out.extend(self.lc[start:position])
            start = position + 1
        out.extend(self.lc[start:])
        return out

    def arrive(self, new: Sequence[BaseMessage]) -> None:
        """Take in the messages appended to the state since the last call: they wait while they can (O(their size)).

        A message that cannot wait (see :mod:`~langchain_ctxbudget._waiting`) is added to the session with those
        waiting before it and all after it.
        """
        taken = 0
        waiting = self.waiting
        if waiting is not None and (waiting or self._mirrored()):
            for message in new:
                if not waiting.take(message):
                    break
                self.lc.append(message)
                self.ids.append(message.id)
                taken += 1
        if taken < len(new):
            self.settle()
            self.extend(new[taken:])

    def _mirrored(self) -> bool:
        """The session holds ``msgs``, sends them as they are, and nobody listens to every message it adds."""
        session = self.session
        live, synced = session.conversation.live, self.synced
        return (
            synced is not None
            and synced[0] is live.messages
            and synced[1] == len(live)
            and not live.needs_repair
            and not session.events.wants("context_update")
        )

    def settle(self) -> None:
        """Add the waiting messages to the session, with their counts: it holds every message of ``lc`` after."""
        if not self.waiting:
            return
        messages, sizes = self.waiting.clear()
        converted = self.converter.to_messages(messages)
        self._add(converted, converted, sizes)

    def waiting_request(self) -> int | None:
        """Our count of this call's request, when it can be sent with messages waiting, else ``None``.

        ``None`` when none waits, a call they made is unanswered, the session changed behind the view, a human
        message waits while the summary shows the user's goal (it could become the goal), or the request is at the
        compaction threshold or past the hard stop: the caller settles them, and the session builds the request.
        Otherwise the request is the session's with the waiting messages added, counted as it would count it.
        """
        self.served = None
        waiting = self.waiting
        if not waiting or waiting.open or not self._mirrored():
            return None
        session = self.session
        conversation = session.conversation
        with conversation.lock:
            if waiting.users and conversation.goal is not None and not conversation.goal_live:
                return None
            counted = session.counted_tokens() + waiting.tokens
            used = session.tracker.used(counted)
        policy, window = session.policy, session.max_tokens
        if (policy.auto and used >= policy.threshold * window) or used > math.floor(policy.hard_stop * window):
            return None
        self.served = counted
        return counted

    def record_usage(self, prompt_tokens: int, completion_tokens: int | None) -> None:
        """Calibrate the session from the provider's usage of the request this call sent."""
        session = self.session
        if self.served is None:
            session.record_usage(prompt_tokens, completion_tokens)
            return
        with session.conversation.lock:
            session.tracker.report(counted=self.served, reported=prompt_tokens)

    def extend(self, new: Sequence[BaseMessage]) -> None:
        """Add messages appended to the state since the view was last updated to the session (O(their size))."""
        if not new:
            return
        converted: list[Message] = []
        body: list[Message] = []
        for lc in new:
            slim, handle, original = _slim(lc)
            if lacks_tool_call_ids(slim):  # persist the ids its calls are sent with, so a restart sends the same
                slim = with_tool_call_ids(slim)
                self.pending.replaced[ensure_id(slim)] = slim
            message = self.converter.to_message(slim)
            if message.metadata.get(CLEARED_META):
                self.cleared[message.id] = ClearedResult(
                    message.tool_call_id or "", handle or message.metadata.get(ARCHIVE_META), message.text
                )
            if handle is not None:
                metadata = {k: v for k, v in message.metadata.items() if k != ARCHIVE_META}
                content = original if isinstance(original, str) else message.text
                full = message.model_copy(update={"content": content, "metadata": metadata})
                self.archive.put_message(full, "bounded")
                self.pending.replaced[message.id] = slim
                self.changed = True
            if message.role == "system":
                self.system_at.append(len(self.lc))  # the session puts it in its system block, not its history
            else:
                body.append(message)
            if slim is not lc or message.role == "system":
                self.verbatim = False
            self.lc.append(slim)
            self.ids.append(slim.id)
            converted.append(message)
        self._add(converted, body)

    def _add(self, converted: list[Message], body: list[Message], sizes: list[int] | None = None) -> None:
        """Add ``converted`` (``body``: those not system messages) to the session (``sizes``: their counts)."""
        self.msgs.extend(body)
        live = self.session.conversation.live.messages  # the list itself: its tail is read, never a copy of it
        synced, before = self.synced, len(live)
        if sizes is None:
            self.session.add(*converted)
        else:
            self.session.add_counted(converted, sizes)
        live = self.session.conversation.live.messages
        tail = live[len(live) - len(body) :]
        if len(tail) != len(body) or any(a is not b for a, b in zip(tail, body, strict=True)):
            self.absorb()  # the session bounded an oversized output on arrival: persist the bounded version
        elif synced is not None and synced[0] is live and synced[1] == before == len(live) - len(body):
            self.synced = (live, len(live))
        else:
            self.synced = None

    def absorb(self) -> None:
        """Diff the session's history against the state view and queue the removals and replacements."""
        self.changed, self.verbatim = True, False
        history = self.session.history
        live = {m.id: m for m in history}
        before = {m.id: m for m in self.msgs}
        for message in self.msgs:
            if message.id not in live:
                self.pending.replaced.pop(message.id, None)
                self.pending.removed.append(message.id)
        for message in history:
            old = before.get(message.id)
            if old is not None and old is not message:
                self.pending.replaced[message.id] = self.converter.to_langchain(message)
        body = [self.pending.replaced.get(m.id) or self.converter.to_langchain(m) for m in history]
        self.msgs = history
        current = self.session.conversation.live.messages  # ``history`` is a copy of it
        self.synced = (current, len(current))
        self.cleared = cleared_results(history)
        self._apply(body)
        session = self.session
        # What compaction removed is not converted again: the converter keeps the state's messages and the prefix's.
        self.converter.retain({i for i in self.ids if i is not None} | {m.id for m in session.conversation.prefix()})
        self.pending.summary, self.pending.summary_dirty = session.summary, True
        self.pending.meta = session_meta(session)

    def _apply(self, body: list[BaseMessage]) -> None:
        """Set ``lc`` to the state as the update leaves it: removals gone, replacements in place, system messages kept.

        When the session's history holds a message the state does not (the update never adds messages), ``lc`` no
        longer matches the state, and the next call rebuilds the view from the state.
        """
        systems = {self.lc[i].id for i in self.system_at}
        forms = {m.id: m for m in body}
        lc: list[BaseMessage] = []
        system_at: list[int] = []
        kept: list[BaseMessage] = []
        for old in self.lc:
            if old.id in systems:
                system_at.append(len(lc))
                lc.append(old)
            elif (form := forms.get(old.id)) is not None:
                lc.append(form)
                kept.append(form)
        if kept != body:  # same objects in the same order, compared in C
            lc, system_at = [self.lc[i] for i in self.system_at] + body, list(range(len(self.system_at)))
        self.lc, self.system_at = lc, system_at
        self.ids = [m.id for m in lc]

    def take_update(self) -> dict[str, Any] | None:
        """Write new archive entries to the store, then hand over the pending update (the graph now owns it)."""
        if self.pending.empty and not self.archive.pending():  # the common call: nothing to write or hand over
            return None
        flush = self.archive.plan()
        if flush is not None:
            self.archive.write(flush)
        return self._handed(flush is not None)

    async def atake_update(self) -> dict[str, Any] | None:
        """Async :meth:`take_update`."""
        if self.pending.empty and not self.archive.pending():
            return None
        flush = self.archive.plan()
        if flush is not None:
            await self.archive.awrite(flush)
        return self._handed(flush is not None)

    def _handed(self, wrote: bool) -> dict[str, Any] | None:
        update = self.pending.update(self.archive.ref() if wrote else None)
        self.pending = Pending()
        if wrote:
            self.archive.release({m.id for m in self.session.history})
        return update
