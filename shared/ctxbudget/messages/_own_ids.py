"""Ids for the messages ctxbudget writes itself, never the id of another message of the same request.

A request can carry messages ctxbudget wrote: the system prompt, the summary, the planned context, the notice after
an interrupted reply, a synthetic result for a call never answered, the pinned form of a tool message. Each has a
*usual* id (``ctxbudget-system-<session id>``, ``ctxbudget-missing-<call id>``, ``<message id>.pinned``...). A
caller's message may carry any id, that one too: a framework passes its ids through (the LangChain adapter keeps a
message whose id looks like ours, and its tests hold it to that), and a transcript ctxbudget wrote may be read back.
So such an id is not refused: ctxbudget's message takes ``<usual id>~2`` (``~3``...) instead, the first id no other
message has, and no request holds two messages with one id (anything keyed by id downstream would confuse them: an
adapter's converter, LangChain's ``RemoveMessage``, a cache).
"""

from __future__ import annotations

from collections.abc import Callable

from .message import Message

__all__ = ["OWN_PREFIX", "free_id", "may_be_own", "with_free_id"]

OWN_PREFIX = "ctxbudget-"
"""How the usual ids of the messages ctxbudget writes start (all but a pinned form, ``<message id>.pinned``)."""


def free_id(usual: str, *taken: Callable[[str], bool]) -> str:
    """``usual``, or the first of ``usual~2``, ``usual~3``... that none of ``taken`` says another message has."""
    if not any(has(usual) for has in taken):
        return usual
    number = 2
    while any(has(f"{usual}~{number}") for has in taken):
        number += 1
    return f"{usual}~{number}"


def with_free_id(message: Message, *taken: Callable[[str], bool], usual: str | None = None) -> Message:
    """``message`` under :func:`free_id` of ``usual`` (default: its own id); the same object when that is its id."""
    message_id = free_id(message.id if usual is None else usual, *taken)
    return message if message_id == message.id else message.model_copy(update={"id": message_id})


def may_be_own(message_id: str) -> bool:
    """Whether ``message_id`` has the form of an id ctxbudget gives a message it writes (usual, or moved off it)."""
    return message_id.startswith(OWN_PREFIX) or ".pinned" in message_id
