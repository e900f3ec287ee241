"""Adding messages to a :class:`~ctxbudget.session.session.ContextSession`: ours, a provider's, or a framework's view.

Every way in (``add``, the ``add_openai``/``add_anthropic`` converters, the ``add_user``/``add_assistant``/
``add_tool_result`` builders, and ``sync`` with a framework's history) ends in one arrival: the message is
registered, a system message joins the leading system block, an oversized tool output is bounded (its original
archived), and the rest is appended to the live history. Built on :class:`~ctxbudget.session._core.SessionCore`'s
public members.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from ..compaction.tiers import ARCHIVE_META
from ..context.evidence import excerpt
from ..errors import InvalidMessageError
from ..messages._foreign import check_not_foreign
from ..messages._validation import short_repr
from ..messages.message import Message, ToolCall
from ..providers import is_responses_item, messages_from_anthropic, messages_from_openai, messages_from_responses
from ._args import check_messages, check_tool_calls, check_type
from ._core import SessionCore, emit_update
from .events import ToolOutputBounded

__all__ = ["MessageIntake"]

_THEN_ADD = " and pass that to add()"
"""How a framework message given to ``add_user``/``add_assistant``/``add_tool_result`` gets in instead."""


class MessageIntake(SessionCore):
    """The adding-messages API of :class:`~ctxbudget.session.session.ContextSession`."""

    def add(self, *messages: Message) -> None:
        """Append messages (O(their size)); oversized tool outputs are bounded as they arrive.

        A tool result that answers no open tool call (a framework may hand one over) is kept in the history and in
        :meth:`originals`, but no request carries it; a ``tool_result_unsent`` event says so.
        """
        with self.conversation.lock:
            for message in messages:
                self._add_one(message)
            emit_update(self)

    def add_counted(self, messages: Sequence[Message], sizes: Sequence[int]) -> None:
        """:meth:`add` for messages the caller has counted with this session's counter: none is counted again.

        ``sizes[i]`` must be ``counter.count_message(messages[i])`` (a framework adapter that counted each message
        as it arrived, with the counter's ``count_fields``, keeps the counts and adds the messages later in one go);
        a size that is not exact makes every later measurement wrong by as much. Everything else is as :meth:`add`.

        Raises:
            InvalidMessageError: ``messages`` is not a sequence of :class:`Message`, or ``sizes`` not as many ints
                >= 0; nothing is added.
        """
        listed = check_messages(messages)
        if (
            not isinstance(sizes, (list, tuple))
            or len(sizes) != len(listed)
            or not all(type(size) is int and size >= 0 for size in sizes)
        ):
            raise InvalidMessageError(
                f"sizes: must be {len(listed)} ints >= 0, one per message, got {short_repr(sizes)}", field="sizes"
            )
        with self.conversation.lock:
            for message, size in zip(listed, sizes, strict=True):
                self._add_one(message, size)
            emit_update(self)

    def add_openai(self, *messages: object) -> list[Message]:
        """Convert OpenAI messages and add them; return the converted messages.

        Takes Chat Completions messages (dicts, or ``response.choices[0].message``) or Responses items (dicts, or
        the items of ``response.output``), told apart by the ``type`` every Responses item has. What a message
        carries beyond our fields is kept in its metadata, so :meth:`BuiltRequest.to_openai` sends it back as given.

        Raises:
            InvalidMessageError: a message that is not of either format (naming its index and field); nothing is
                added.
        """
        listed = list(messages)
        responses = any(is_responses_item(item) for item in listed)
        converted = messages_from_responses(listed) if responses else messages_from_openai(listed)
        self.add(*converted)
        return converted

    def add_anthropic(self, *messages: object, system: object = None) -> list[Message]:
        """Convert Anthropic messages (dicts, or a response ``Message``) and add them; return the converted messages.

        Tool results become tool messages (one per ``tool_result`` block), thinking blocks are kept and counted.
        ``system`` (a string or text blocks) joins the leading system block, unless it is this session's
        ``system_prompt`` already; pass it once, when importing a conversation.

        Raises:
            InvalidMessageError: a message that is not an Anthropic message (naming its index and field); nothing is
                added.
        """
        if system == self.conversation.system_prompt:
            system = None
        converted = messages_from_anthropic(messages, system=system)
        self.add(*converted)
        return converted

    def add_user(self, text: str, **metadata: Any) -> Message:
        """Append a user message and return it."""
        check_not_foreign("text", text, "a str", _THEN_ADD)
        message = Message(role="user", content=text, metadata=metadata)
        self.add(message)
        return message

    def add_assistant(
        self, text: str = "", *, tool_calls: Sequence[ToolCall] = (), interrupted: bool = False
    ) -> Message:
        """Append an assistant reply (``interrupted=True`` for a reply the user aborted) and return it."""
        check_type("interrupted", interrupted, bool, InvalidMessageError)
        check_not_foreign("text", text, "a str", _THEN_ADD)
        message = Message(
            role="assistant",
            content=text,
            tool_calls=check_tool_calls(tool_calls),
            state="interrupted" if interrupted else "complete",
        )
        self.add(message)
        return message

    def add_tool_result(self, tool_call_id: str, content: str, *, name: str | None = None) -> Message:
        """Append a tool result and return it as stored (bounded when oversized).

        Raises:
            InvalidMessageError: ``tool_call_id`` answers no open tool call of the latest assistant message (never
                made, or already answered); the message names the open calls.
        """
        check_not_foreign("content", content, "a str", _THEN_ADD)
        message = Message(role="tool", tool_call_id=tool_call_id, content=content, name=name)
        with self.conversation.lock:
            self._check_answers_open_call(message.tool_call_id or "")
            self.add(message)
            return self.conversation.live.messages[-1]

    def _check_answers_open_call(self, call_id: str) -> None:
        open_ids = self.conversation.live.open_calls
        if call_id in open_ids:
            return
        problem = "was already answered" if call_id in self.conversation.live.run_calls else "answers no open tool call"
        listed = f"open calls: {', '.join(map(repr, open_ids))}" if open_ids else "no tool call is open"
        raise InvalidMessageError(f"tool_call_id: {call_id!r} {problem}; {listed}", field="tool_call_id")

    def _add_one(self, message: Message, size: int | None = None) -> None:
        if not isinstance(message, Message):
            check_not_foreign("message", message, "ctxbudget.Message", " and add that")
            raise InvalidMessageError(
                f"message: expected ctxbudget.Message, got {type(message).__name__}", field="message"
            )
        self.conversation.register(message)
        if message.role == "system":
            # Providers accept system content only at the start: a system message added mid-conversation joins the
            # leading system block, in the order it arrived, and is never compacted away.
            self.conversation.add_system(message)
            return
        if message.role == "tool" and self.policy.bound_tool_outputs_on_add:
            message, size = self._bound_on_arrival(message, size)
        self.conversation.append(message, size)

    def _bound_on_arrival(self, message: Message, size: int | None = None) -> tuple[Message, int]:
        """``message``, bounded when over the tool-output limit, and its count (``size``: known already).

        The history takes the count returned as the message's.
        """
        limit = self.policy.tool_output_limit(self.max_tokens)
        before = self.counter.count_message(message) if size is None else size
        if (
            before <= limit
            or message.metadata.get("pinned") is True
            or self.conversation.original_of(message) is not None
        ):
            return message, before
        handle = self.archive.put_message(message, "bounded")
        text = excerpt(message.text, max_tokens=limit, counter=self.counter, handle=handle)
        bounded = message.model_copy(update={"content": text, "metadata": {**message.metadata, ARCHIVE_META: handle}})
        after = self.counter.count_message(bounded)
        self.events.emit(
            ToolOutputBounded(
                session_id=self.session_id,
                seq=self.events.next_seq(),
                message_id=message.id,
                handle=handle,
                tokens_before=before,
                tokens_after=after,
            )
        )
        return bounded, after

    def sync(self, messages: Sequence[Message]) -> None:
        """Make the live history equal ``messages`` (a framework's view of the conversation).

        * When ``messages`` extends the live history (the same messages, in order, then new ones), only the new ones
          are added: O(new) for the same message objects.
        * Otherwise the history is rebuilt in the order given. A known message keeps its live (possibly bounded)
          form; one whose content was edited under the same id replaces it, the old version archived as
          ``replaced``; live messages that disappear are archived as ``dropped``; messages already compacted away
          are not brought back; new messages are added where they stand.
        * System messages join the leading system block (see :meth:`add`).

        Raises:
            InvalidMessageError: ``messages`` is not a sequence of :class:`Message` (naming the index of the first
                item that is not); nothing changes.
        """
        messages = check_messages(messages)
        with self.conversation.lock:
            body = [message for message in messages if message.role != "system"]
            if len(body) != len(messages):
                for message in messages:
                    if message.role == "system" and not self.conversation.knows(message.id):
                        self._add_one(message)
            live = self.conversation.live.messages
            extends = len(body) >= len(live) and (
                all(map(operator.is_, body, live))  # the same objects: checked at C speed
                or all(self._same(b, m) for b, m in zip(body, live, strict=False))
            )
            if extends:
                for message in body[len(live) :]:
                    self._add_one(message)
                emit_update(self)
                return
            self._rebuild(body)
            emit_update(self)

    def _same(self, given: Message, live: Message) -> bool:
        """``given`` (from a framework) is the message ``live`` holds: same object, or same id and content.

        A message we bounded or cleared is the same when the ids match: its original is in the archive.
        """
        return given is live or (
            given.id == live.id and (given == live or self.conversation.original_of(live) is not None)
        )

    def _rebuild(self, body: list[Message]) -> None:
        live_by_id = {m.id: m for m in self.conversation.live}
        wanted = {m.id for m in body}
        for message in self.conversation.live:
            if message.id not in wanted:
                self.conversation.archive.put_message(message, "dropped")
        self.conversation.replace_history(())
        for message in body:
            current = live_by_id.get(message.id)
            if current is not None:
                if not self._same(message, current):  # edited under the same id
                    self.conversation.archive.put_message(current, "replaced")
                    current = message
                self.conversation.append_known(current)
            elif not self.conversation.knows(message.id):
                self._add_one(message)
