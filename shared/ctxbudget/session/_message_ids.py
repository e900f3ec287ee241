"""A session's message ids: the add position of every message it was given, and the ids of those it writes.

Every message added to a session is registered once, by id, in add order; a second message with an id already added
is refused. The messages the session writes itself (the system prompt, the summary, the planned context, the pinned
form of a tool message; the synthetic results and the notice of
:class:`~ctxbudget.session.live_history.LiveHistory`) take their usual ids unless a message it was given has one,
then the next free one (:mod:`ctxbudget.messages._own_ids`): a request never holds two messages with one id.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Literal

from ..errors import InvalidMessageError
from ..messages._own_ids import free_id, may_be_own, with_free_id
from ..messages.message import Message

__all__ = ["MessageIds"]


class MessageIds:
    """The ids of one session's messages (guard it with the conversation's lock).

    Args:
        session_id: names the usual ids of the system prompt, summary and planned context.
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.order: MutableMapping[str, int] = {}
        """Add position of every message ever added, by id."""

    def knows(self, message_id: str) -> bool:
        """A message with this id was added before (live, compacted away or a system message)."""
        return message_id in self.order

    def register(self, message: Message) -> bool:
        """Record a new message's add position; return whether the session's own messages must be named again.

        They must when the id has the form of theirs (``ctxbudget-...``, ``....pinned``): one of them may have it.

        Raises:
            InvalidMessageError: a message with the same id was added before.
        """
        if message.id in self.order:
            raise InvalidMessageError(f"message.id: {message.id!r} is already in this session", field="id")
        self.order[message.id] = len(self.order)
        return may_be_own(message.id)

    def keep_in(self, order: MutableMapping[str, int]) -> None:
        """Keep the add positions in ``order`` from now on (those recorded so far are moved into it)."""
        for message_id, position in self.order.items():
            order[message_id] = position
        self.order = order

    def own(self, kind: Literal["system", "summary", "context"]) -> str:
        """The id of the session's ``kind`` message: ``ctxbudget-<kind>-<session id>``, unless a message has it."""
        return free_id(f"ctxbudget-{kind}-{self.session_id}", self.knows)

    def own_form(self, message: Message) -> Message:
        """``message`` with its own id, when the session wrote it (a summary, the context, a pinned form).

        Any other message (one it was given, a caller's pin) comes back as it is.
        """
        kind = message.metadata.get("ctxbudget")
        source = message.metadata.get("pinned_from")
        if kind in ("summary", "context"):
            usual = f"ctxbudget-{kind}-{self.session_id}"
        elif kind == "pinned" and isinstance(source, str):
            usual = f"{source}.pinned"
        else:
            return message
        return with_free_id(message, self.knows, usual=usual)
