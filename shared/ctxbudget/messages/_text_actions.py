"""Tool use written as text: a reply's one command block is a call, the harness's next user turn is its result.

Harnesses without function calling (mini-swe-agent's text format, SWE-agent's) have the model write its command as
the one fenced ``bash`` block of its reply and send the result back as a *user* turn that starts with the return
code (``<returncode>1</returncode>`` then ``<output>...</output>``). The history keeps them as they were sent; what
reads them for meaning reads them as tool use: the archive's search units (:mod:`ctxbudget.archive._units`) and
compaction (:mod:`ctxbudget.compaction._text_protocol`), both with :func:`action` and :func:`is_result_turn`.

A reply with one command block (the block on lines of its own, a ``bash``, ``sh``, ``shell`` fence, or a bare one
when it labels none) makes a call; a reply with several blocks (which the harness rejects) or none is text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..messages.message import ToolCall

if TYPE_CHECKING:
    from ..messages.message import Message

__all__ = ["ACTION_TOOL", "action", "is_result_turn"]

ACTION_TOOL = "bash"
"""The tool name a command written as a code block is read under (compaction's name for it)."""
_RESULT = re.compile(r"\A\s*<returncode>\s*-?\d{1,4}\s*</returncode>")
"""How a harness's result turn starts: the command's return code."""
_OPENING = re.compile(r"```(bash|sh|shell)?[ \t]*")
"""A line that opens a command block (fullmatched against one line)."""
_CLOSING = re.compile(r"```[ \t]*")
_THOUGHT = re.compile(r"\A(?:THOUGHT|DISCUSSION|Thought):[ \t]*")
"""The label a text-protocol harness has the reply's reasoning start with: not part of what the reply says."""


def is_result_turn(message: Message) -> bool:
    """A user turn that is a command's result as a text-protocol harness writes it (``<returncode>0</returncode>``)."""
    return message.role == "user" and _RESULT.match(message.text[:64]) is not None


def action(message: Message) -> tuple[ToolCall, str] | None:
    """The call a reply's one command block makes (id ``<reply id>.action``) and the reply's text without it.

    ``None`` for a message that is not an assistant reply written as text, or holds no command block, or several.
    """
    if message.role != "assistant" or message.tool_calls or "```" not in message.text:
        return None
    lines = message.text.split("\n")
    blocks = _blocks(lines)
    if len(blocks) != 1:
        return None
    start, end = blocks[0]
    command = "\n".join(lines[start + 1 : end]).strip()
    if not command:
        return None
    said = "\n".join([*lines[:start], *lines[end + 1 :]]).strip()
    call = ToolCall(id=f"{message.id}.action", name=ACTION_TOOL, args={"command": command})
    return call, _THOUGHT.sub("", said, count=1)


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """The (opening, closing) line indices of the reply's command blocks (the first two), in one pass over ``lines``.

    A block opens on a line that is only a fence and closes on the next line that is only a fence. A ``bash``,
    ``sh`` or ``shell`` block is a command; so is a bare one when the reply labels none (SWE-agent's format), but
    beside a labelled block a bare one is a quote (a traceback shown in mini-swe-agent's reasoning, which its
    harness does not run); a fence of another language opens a block that is no command.
    """
    labelled: list[tuple[int, int]] = []
    bare: list[tuple[int, int]] = []
    opened: int | None = None
    kind: list[tuple[int, int]] | None = None
    for index, line in enumerate(lines):
        if not line.startswith("```"):
            continue
        if opened is None:
            opened = index
            found = _OPENING.fullmatch(line)
            kind = None if found is None else (labelled if found.group(1) else bare)
        elif _CLOSING.fullmatch(line):
            if kind is not None:
                kind.append((opened, index))
                if len(labelled) == 2:
                    break
            opened = None
    return labelled or bare[:2]
