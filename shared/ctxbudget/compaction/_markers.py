"""What compaction writes into the history: the metadata keys of its copies, archive handles, markers, pinned forms.

A message compaction bounded or cleared carries :data:`ARCHIVE_META` (the handle of its archived original); a cleared
tool result also :data:`CLEARED_META` and becomes a :func:`cleared_marker`; a pinned message that leaves the history
is kept in the request in its :func:`pinned_form`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..archive.store import HANDLE_PREFIX, ArchiveReason
from ..messages.message import Message
from ..messages.tokens import TokenCounter
from .salience import key_lines

__all__ = ["ARCHIVE_META", "CLEARED_META", "MARKER_KEY_LINES", "cleared_marker", "handle_for", "pinned_form"]

ARCHIVE_META = "ctxbudget_archived"
"""Metadata key on a message whose original is archived; its value is the archive handle."""

CLEARED_META = "ctxbudget_cleared"
"""Metadata key on a tool result compaction replaced by a cleared marker."""

MARKER_KEY_LINES = 6
"""Key lines a cleared marker keeps of its output."""


def cleared_marker(
    original: Message,
    handle: str,
    counter: TokenCounter,
    *,
    lines: Sequence[str] | None = None,
    tool: str | None = None,
) -> str:
    """The text a cleared tool result becomes: size, tool, the handle of the full original, and its key lines.

    ``lines`` are the output's key lines when the caller has them (a session remembers them); else they are read.
    ``tool`` names the tool when the result does not (its call's name, which a result without ``name`` answers).
    """
    lines = key_lines(original, MARKER_KEY_LINES) if lines is None else lines
    head = (
        f"[tool output cleared to save context: {len(original.text):,} chars from "
        f"{original.name or tool or 'the tool'}; "
        f"full text archived at {handle}; read it back or re-run the tool if you need it]"
    )
    return head + ("\nKey lines:\n" + "\n".join(f"- {line}" for line in lines) if lines else "")


def handle_for(message: Message, reason: ArchiveReason) -> str:
    """The archive handle a message gets when archived for ``reason``."""
    return f"{HANDLE_PREFIX}{message.id}.{reason}"


def pinned_form(message: Message) -> Message:
    """How a pinned message that leaves the history is kept in the request, verbatim.

    Plain user and assistant messages stay as they are. A tool call or a tool result cannot stand apart from its
    partner (providers reject it), so its full text is carried in a user-role message that says what it was.
    """
    if message.role != "tool" and not message.tool_calls:
        return message
    if message.role == "tool":
        label = f"[pinned tool result of call {message.tool_call_id} from {message.name or 'a tool'}]"
    else:
        calls = "; ".join(f"{call.name}({call.args_json()}) id={call.id}" for call in message.tool_calls)
        label = f"[pinned assistant message with tool calls: {calls}]"
    return Message(
        role="user",
        content=f"{label}\n{message.text}" if message.text else label,
        id=f"{message.id}.pinned",
        metadata={"ctxbudget": "pinned", "pinned_from": message.id},
    )
