"""What a session's next request is made of, and what it costs, kept current as it changes.

:class:`Conversation` owns the state a :class:`~ctxbudget.session.session.ContextSession` holds between calls: the
system prompt and tools, system messages added mid-conversation, the cumulative summary and the user's goal, pinned
messages, planned context, the live history (a :class:`~ctxbudget.session.live_history.LiveHistory`), the archive of
originals, and the add order of every message ever seen. Its token accounting is cached and updated per change, so
measuring or assembling a request costs O(what changed), never O(history).

The session validates input, bounds tool outputs, emits events and decides when to compact; compaction
(:mod:`ctxbudget.session._compaction`) and snapshots (:mod:`ctxbudget.session._snapshots`) work on this object
through its public methods, never on the session's private fields.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, MutableMapping, Sequence

from ..archive.store import Archive, ArchiveEntry
from ..compaction.tiers import ARCHIVE_META, CompactionOutcome
from ..messages.message import Message, MessageSequence, ToolSchema
from ..messages.tokens import TokenCounter, count_message_by_lines
from ._goal import GOAL_HEADING, Goal, goal_block, is_request, shown_goal
from ._message_ids import MessageIds
from .live_history import LiveHistory, UnsentResult
from .request import INTERRUPTED_NOTICE, SUMMARY_HEADER

__all__ = ["Conversation"]


_NOTICE_PROBE = Message(role="user", content=INTERRUPTED_NOTICE, id="ctxbudget-notice")


class Conversation:
    """The contents of the next request and their token accounting (one per session; guard it with :attr:`lock`).

    Args:
        session_id: the owning session's id (names the summary and system messages it renders).
        counter: the session's token counter.
        max_tokens: the session's window (a goal larger than a quarter of it is shown as an excerpt).
        system_prompt: sent first in every request.
        tools: tool schemas counted in every request.
        on_unsent: called once per tool result kept in the history that no request will carry (it answers no
            open call), so the session can say so.
    """

    def __init__(
        self,
        *,
        session_id: str,
        counter: TokenCounter,
        max_tokens: int,
        system_prompt: str | None = None,
        tools: Sequence[ToolSchema] = (),
        on_unsent: Callable[[UnsentResult], None] = lambda _unsent: None,
    ) -> None:
        self.session_id = session_id
        self.counter = counter
        self.max_tokens = max_tokens
        self.lock = threading.RLock()
        self.archive = Archive()
        self.ids = MessageIds(session_id)
        self.live = LiveHistory(counter.count_message, self.ids.knows)
        self._system_prompt = system_prompt
        self._tools = tuple(tools)
        self._summary: str | None = None
        self._goal = Goal(self.lock)
        self._goal_shown: tuple[str, str] | None = None
        self._pinned: list[Message] = []
        self._pinned_ids: set[str] = set()
        self._system_extras: list[Message] = []
        self._context: Message | None = None
        self._reserve = 0
        self._fixed_cache: int | None = None
        self._prefix_cache: tuple[Message | None, tuple[Message, ...]] | None = None
        self._summary_cache: tuple[tuple[str | None, str | None, bool], Message | None, int] | None = None
        self._system_message: Message | None = None
        self._notice_tokens: int | None = None
        self._on_unsent = on_unsent
        self._unsent_ids: set[str] = set()

    # -- reading -----------------------------------------------------------------------------------------------
    @property
    def system_prompt(self) -> str | None:
        """The system prompt."""
        return self._system_prompt

    @property
    def tools(self) -> tuple[ToolSchema, ...]:
        """The tool schemas."""
        return self._tools

    @property
    def summary(self) -> str | None:
        """The cumulative summary of everything compacted so far."""
        return self._summary

    @property
    def goal(self) -> str | None:
        """The user's goal."""
        return self._goal.text

    @property
    def goal_id(self) -> str | None:
        """Id of the message the goal was taken from, or ``None``."""
        return self._goal.id

    @property
    def goal_live(self) -> bool:
        """The goal's message is in the live history (so the summary need not show it)."""
        return self._goal.live

    @property
    def pinned(self) -> tuple[Message, ...]:
        """Pinned messages, sent after the summary."""
        return tuple(self._pinned)

    @property
    def pinned_ids(self) -> frozenset[str]:
        """Ids of history messages added pinned."""
        return frozenset(self._pinned_ids)

    @property
    def system_messages(self) -> tuple[Message, ...]:
        """System messages added mid-conversation (they join the leading system block)."""
        return tuple(self._system_extras)

    @property
    def context(self) -> Message | None:
        """The planned-context message, or ``None``."""
        return self._context

    @property
    def order(self) -> dict[str, int]:
        """Add position of every message ever added (a copy)."""
        return dict(self.ids.order)

    def keep_order_in(self, order: MutableMapping[str, int]) -> None:
        """Keep the add positions in ``order`` from now on (those recorded so far are moved into it).

        A session fed a whole transcript (``ctxbudget inspect``) passes a map that spills to disk, so the position
        of every message ever added does not grow its memory with the file; the positions are the same.
        """
        with self.lock:
            self.ids.keep_in(order)

    def knows(self, message_id: str) -> bool:
        """A message with this id was added before (live, compacted away or a system message)."""
        return self.ids.knows(message_id)

    def original_of(self, message: Message) -> Message | None:
        """The archived original of a live copy the session bounded or cleared, else ``None``.

        The marker in the metadata is only a pointer: it counts when the archive holds an original with the same
        message id under that handle, so a caller's message that carries the marker is treated as its own original.
        """
        handle = message.metadata.get(ARCHIVE_META)
        if not isinstance(handle, str) or handle not in self.archive:
            return None
        original = self.archive.get(handle).message
        return original if original is not None and original.id == message.id else None

    def originals(self) -> list[Message]:
        """Every message ever added, as it was given, in add order (archive + live history + system messages)."""
        by_id: dict[str, Message] = {m.id: m for m in self.live}
        by_id.update({m.id: m for m in self._system_extras})
        by_id.update({m.id: m for m in self.archive.messages()})  # the archived version is the original
        order = self.ids.order
        return sorted((m for m in by_id.values() if m.id in order), key=lambda m: order[m.id])

    # -- adding ------------------------------------------------------------------------------------------------
    def register(self, message: Message) -> None:
        """Record a new message's add position; the session's own messages move off its id (:class:`MessageIds`).

        Raises:
            InvalidMessageError: a message with the same id was added before.
        """
        if self.ids.register(message):  # an id of the form of the session's own: name those again
            self._system_message = self._summary_cache = None
            self._invalidate_prefix()
            self.live.rename_own()

    def add_system(self, message: Message) -> None:
        """A registered system message: it joins the leading system block and is never compacted away."""
        self._system_extras.append(message)
        self._invalidate_prefix()

    def append(self, message: Message, size: int | None = None) -> None:
        """Append a registered (and, for tool outputs, already bounded) message to the live history.

        Takes the goal from the first user message that asks for something (until one does, from the first user
        message) and remembers messages added pinned. ``size``: its count, when the caller has it (else counted).
        """
        if message.metadata.get("pinned") is True:
            self._pinned_ids.add(message.id)
        self._goal.arrived(message)
        self.append_known(message, size)

    def append_known(self, message: Message, size: int | None = None) -> None:
        """Append a message the conversation already knows (re-appended after a rebuild); ``size``: its count."""
        self._goal.appended(message)
        unsent = self.live.append(message, size)
        if unsent is not None and unsent.message.id not in self._unsent_ids:
            self._unsent_ids.add(unsent.message.id)
            self._on_unsent(unsent)

    def replace_history(self, history: Iterable[Message]) -> None:
        """Swap the live history for ``history`` (messages it knows; one still live keeps its count)."""
        live = self.live.counted()
        self._goal.replacing_history()
        self.live.replace(())
        for message in history:
            known = live.get(id(message))
            self.append_known(message, known[1] if known is not None and known[0] is message else None)

    # -- changing what surrounds the history -------------------------------------------------------------------
    def set_system_prompt(self, value: str | None) -> None:
        """Replace the system prompt."""
        self._system_prompt = value
        self._invalidate_prefix()

    def set_tools(self, tools: Sequence[ToolSchema]) -> None:
        """Replace the tool schemas."""
        self._tools = tuple(tools)
        self._invalidate_prefix()

    def set_reserve(self, tokens: int) -> bool:
        """Set the caller's reserve; return whether it changed."""
        if tokens == self._reserve:
            return False
        self._reserve = tokens
        self._invalidate_prefix()
        return True

    def set_goal(self, goal: str | None, goal_id: str | None = None) -> None:
        """Pin ``goal`` (``goal_id`` names the live message it came from), or forget it with ``None``."""
        self._goal.set(goal, goal_id, live=goal_id is not None and any(m.id == goal_id for m in self.live))

    def first_user_message(self) -> Message | None:
        """The goal's message among the live ones: the first that asks for something, else the first user message."""
        users = [m for m in self.live if m.role == "user" and not m.metadata.get("ctxbudget")]
        return next((m for m in users if is_request(m)), users[0] if users else None)

    def add_pin(self, message: Message) -> None:
        """Send ``message`` after the summary in every request."""
        self._pinned.append(message)
        self._invalidate_prefix()

    def set_context(self, message: Message | None) -> None:
        """Replace the planned-context message."""
        self._context = message
        self._invalidate_prefix()

    def commit(self, outcome: CompactionOutcome) -> None:
        """Apply a compaction outcome in one step: archive its originals, pin, take its summary and history."""
        for message, reason in outcome.archived:
            self.archive.put_message(message, reason)
        for message in outcome.pinned:
            if all(m.id != message.id for m in self._pinned):
                self.add_pin(message)
        self._summary = outcome.summary
        self._invalidate_prefix()
        self.replace_history(outcome.history)

    def load(
        self,
        *,
        archive: Iterable[ArchiveEntry] | Archive,
        order: dict[str, int],
        summary: str | None,
        goal: str | None,
        goal_id: str | None,
        pinned: Sequence[Message],
        pinned_ids: Iterable[str],
        system_messages: Sequence[Message],
        context: Message | None,
        history: Sequence[Message],
    ) -> None:
        """Load saved state into a fresh conversation (a snapshot being restored)."""
        self.archive = archive if isinstance(archive, Archive) else Archive(archive)
        self.ids.order = dict(order)
        self._summary = summary
        self._goal.set(goal, goal_id, live=False)
        self._pinned = list(pinned)
        self._pinned_ids = set(pinned_ids)
        self._system_extras = list(system_messages)
        self._context = context
        self._invalidate_prefix()
        self.replace_history(history)

    # -- measuring ---------------------------------------------------------------------------------------------
    def summary_message(self, summary: str | None, goal_live: bool | None = None) -> Message | None:
        """The message that carries ``summary`` and, when its message is gone, the goal (``None``: nothing to say)."""
        live = self._goal.live if goal_live is None else goal_live
        text = None if live else self._goal.text
        show_goal = text is not None
        if summary is None and not show_goal:
            return None
        body = summary or ""
        if show_goal and text is not None:
            goal = f"{GOAL_HEADING}\n{goal_block(self._shown_goal(text))}"
            body = f"{goal}\n{body}" if body else goal
        return Message(
            role="user",
            content=f"{SUMMARY_HEADER}\n{body}" if body else SUMMARY_HEADER,
            id=self.ids.own("summary"),
            metadata={"ctxbudget": "summary"},
        )

    def shown_goal(self) -> str | None:
        """The goal as the summary message shows it (verbatim, or the excerpt of a long one), or ``None``."""
        text = self._goal.text
        return self._shown_goal(text) if text is not None else None

    def _shown_goal(self, goal: str) -> str:
        """The goal as the summary message shows it: verbatim, or an excerpt when it alone would crowd the window.

        A pasted document as the first message is shown as head and tail, naming the handle of its full text.
        """
        cached = self._goal_shown
        if cached is not None and cached[0] is goal:
            return cached[1]
        shown = shown_goal(goal, counter=self.counter, max_tokens=self.max_tokens, archive=self.archive)
        self._goal_shown = (goal, shown)
        return shown

    def fixed_tokens(self) -> int:
        """What a request costs besides history and summary: framing, tools, system, pinned, context, reserve."""
        if self._fixed_cache is None:
            count = self.counter.count_message
            fixed = self.counter.request_overhead + self.counter.count_tools(self._tools)
            if self._system_prompt:
                fixed += count(Message(role="system", content=self._system_prompt, id="sys"))
            fixed += sum(count(m) for m in self._system_extras) + sum(count(m) for m in self._pinned)
            fixed += self._reserve + (count(self._context) if self._context is not None else 0)
            self._fixed_cache = fixed
        return self._fixed_cache

    def counted_tokens(self) -> int:
        """Our own count of the request as it stands (system, tools, pinned, summary, history, notices)."""
        return self.fixed_tokens() + self.live.sent_tokens(self.notice_tokens()) + self._cached_summary()[1]

    def notice_tokens(self) -> int:
        """What the interrupted-reply notice costs in a request."""
        if self._notice_tokens is None:
            self._notice_tokens = self.counter.count_message(_NOTICE_PROBE)
        return self._notice_tokens

    def sent_sizes(self) -> list[int]:
        """Each live message's cost in a request, with the synthetic results and notice it brings (a copy)."""
        return self.live.sent_sizes(self.notice_tokens())

    def _cached_summary(self) -> tuple[Message | None, int]:
        # A goal read now could only become live (not shown): the message is the same unless the goal is not live.
        live = self._goal.live_unread or self._goal.live
        key = (self._summary, None if live else self._goal.text, live)
        if self._summary_cache is None or self._summary_cache[0] != key:
            summary = self.summary_message(self._summary, goal_live=live)
            self._summary_cache = (
                key,
                summary,
                count_message_by_lines(self.counter, summary) if summary is not None else 0,
            )
        return self._summary_cache[1], self._summary_cache[2]

    def _invalidate_prefix(self) -> None:
        self._fixed_cache = None
        self._prefix_cache = None

    def prefix(self) -> tuple[Message, ...]:
        """System prompt, system messages, summary, pinned and planned context: cached until one of them changes."""
        summary = self._cached_summary()[0]
        cached = self._prefix_cache
        if cached is not None and cached[0] is summary:
            return cached[1]
        messages: list[Message] = []
        if self._system_prompt:
            if self._system_message is None or self._system_message.content != self._system_prompt:
                self._system_message = Message(role="system", content=self._system_prompt, id=self.ids.own("system"))
            messages.append(self._system_message)
        messages.extend(self._system_extras)
        if summary is not None:
            messages.append(summary)
        messages.extend(map(self.ids.own_form, self._pinned))  # a pinned form moved off a caller's id
        if self._context is not None:
            messages.append(self.ids.own_form(self._context))
        self._prefix_cache = (summary, tuple(messages))
        return self._prefix_cache[1]

    def request_messages(self) -> MessageSequence:
        """The request's messages: the prefix, then the live history as a strict provider accepts it (zero-copy)."""
        return self.live.view(self.prefix())
