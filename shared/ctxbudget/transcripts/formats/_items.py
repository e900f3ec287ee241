"""What a transcript reader yields, in order, besides the messages sent: and what it knows before the first one.

A reader (:func:`~._open.open_transcript`) gives a :class:`Head` (the format, tools, request body fields, the model
the transcript names, notes for the report) and a stream of items:

* a :class:`~ctxbudget.messages.message.Message`: a message of the conversation as it would be sent next;
* :class:`Replaced`: a message the transcript's own compaction replaced (Claude Code's history before a
  ``compact_boundary``): kept and reported, never sent;
* :class:`Reported`: the prompt size the transcript itself records for the request made at this point (the
  provider's usage), placed before the reply it produced;
* an :class:`~ctxbudget.archive.store.ArchiveEntry`: an original a ``ctxbudget compact`` document archived earlier.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from ...archive.store import ArchiveEntry
from ...messages.message import Message, ToolSchema

__all__ = ["Head", "Item", "Replaced", "Reported"]


@dataclass(frozen=True)
class Replaced:
    """A message the transcript's own compaction replaced: history, not sent."""

    message: Message


@dataclass(frozen=True)
class Reported:
    """The prompt tokens the transcript records for the request made here (input plus cache tokens)."""

    prompt_tokens: int
    where: str
    """Where the figure is in the file (``line 412``, ``steps[37].metrics``)."""


Item = Union[Message, Replaced, Reported, ArchiveEntry]  # noqa: UP007 - a runtime alias; Python 3.10 has no `type`


@dataclass
class Head:
    """What a reader knows before the first item."""

    format: str
    source: str
    jsonl: bool = False
    key: str | None = None
    tools: tuple[ToolSchema, ...] = ()
    envelope: dict[str, Any] | None = None
    """A request body's other fields (``model``, ``max_tokens``, ...); ``None`` for a bare list or JSONL."""
    model: str | None = None
    """The model the transcript names for its next request, if any."""
    model_from: str | None = None
    """Where that name is (``message.model of line 40``, ``the request's model``)."""
    compacted: bool = False
    """A ``ctxbudget compact`` document: its archive entries come first, then its messages."""
    summary: str | None = None
    goal: str | None = None
    notes: list[str] = field(default_factory=list)
    """Plain sentences for the report (which entry was read, what was skipped)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """What a writer of the same format needs back (another key's conversations, an ATIF agent)."""
