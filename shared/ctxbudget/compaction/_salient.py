"""One salient item: what it records, the bullet it is shown as, the key later items replace it by, where it came from.

:mod:`~ctxbudget.compaction.salience` finds items in messages (:mod:`~ctxbudget.compaction._tool_use` in tool calls
and their results); the ledger merges, ranks and renders them, and reads them back from its own text with
:func:`item_key`.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from ._plans import PLAN_KEY, task_key
from .textscan import informative_tokens

__all__ = [
    "ASKED",
    "PASTED_FAILURE",
    "RECORD_CALL",
    "SHOWN_BY_CALL",
    "USER_CHOSE",
    "SalienceKind",
    "Salient",
    "item",
    "item_key",
]

SalienceKind = Literal[
    "task",
    "fact",
    "constraint",
    "preference",
    "paste",
    "request",
    "question",
    "decision",
    "finding",
    "note",
    "open",
    "command",
    "call",
    "artifact",
    "figure",
    "error",
]
"""What an item records; the ledger files each kind under one section."""

SHOWN_BY_CALL = "shown by: "
"""How the key of a figure line its call's own bullet already shows starts (then the call's label, lower-cased): the
ledger shows it only when that bullet is not kept; a cleared output's marker keeps it."""
RECORD_CALL = " -> ok"
"""How a call whose result was a record ends its bullet; each field of it is ``<call> -> ok: "key": value``."""
PASTED_FAILURE = "the user pasted a failure -> "
"""How a failure read out of a user's paste (a test run, a traceback) begins, and its key."""
ASKED = "asked"
"""The key of the question an assistant's reply ends on: the task reads it when the user's answer is a bare yes."""
USER_CHOSE = "User chose: "
"""How a user's decision starts (among the assistant's, in the Decisions section)."""
_PLANNED = re.compile(r"^(?:Plan \(\d+ of \d+ done\):|Task #(\d{1,6})\b)")
_DONE_TASK = re.compile(r"^Done: task #(\d{1,6})\b")
"""How a plan's items read back (:mod:`~ctxbudget.compaction._plans`): their keys, so an update merges with them."""


class Salient(NamedTuple):
    """One thing worth keeping: its kind, the bullet text, a supersession key and where it came from.

    Attributes:
        kind: what the item records.
        text: the bullet as it is shown (one line).
        key: items with the same kind and key supersede each other (the later one wins); ``None``: no key.
        order: position in the conversation (larger is later); items from an earlier summary are negative.
        tokens: the informative tokens the item holds (values and content words), lower-cased.
    """

    kind: SalienceKind
    text: str
    key: str | None
    order: int
    tokens: frozenset[str]


def item(kind: SalienceKind, text: str, key: str | None, order: int) -> Salient:
    """An item of ``kind`` shown as ``text``, its informative tokens read from the text."""
    return Salient(kind=kind, text=text, key=key, order=order, tokens=informative_tokens(text))


def item_key(kind: SalienceKind, text: str) -> str | None:
    """The supersession key of an item of ``kind`` shown as ``text`` (used to read an earlier ledger back)."""
    if kind == "artifact":
        return text.split(": ", 1)[0].split(" (", 1)[0].lower() or None
    if kind in ("command", "call", "error"):
        return text.split(" -> ", 1)[0].lower() if " -> " in text else None
    if kind == "open" and (planned := _PLANNED.match(text)) is not None:
        return PLAN_KEY if planned.group(1) is None else task_key(planned.group(1))
    if kind == "finding" and (done := _DONE_TASK.match(text)) is not None:
        return task_key(done.group(1))
    if kind in ("open", "request", "task"):
        return kind
    return None
