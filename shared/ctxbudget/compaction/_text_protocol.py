"""Tool use written as text: an agent's command in a code block, the harness's result in the next user message.

Harnesses without function calling (mini-swe-agent's text format, SWE-agent's, many research agents) have the
model write its command as the one fenced ``bash`` block of its reply, and send the result back as a *user* turn
(``<returncode>0</returncode>`` then ``<output>...</output>``, the listing of ``ls -F`` say).

That user turn is the harness speaking, not the person: read as the user's statements, a file listing becomes "User
facts" and the harness's ``<warning>`` ("Please try a different command that produces less output.") becomes the
latest request. :func:`as_tool_use` gives compaction's readers the same conversation as tool use: the reply keeps
its reasoning and gets one tool call, and the result is that call's tool message (failed when its return code is
not 0). The history itself is unchanged (it is what the model was sent); only what compaction reads of it is.

A user turn that answers a reply without one command block by showing the action format's example (a
``<response_example>`` or ``<format_example>``: "Please always provide EXACTLY ONE action in triple backticks") is the
harness's format reminder: it is marked as harness text (metadata ``harness``), which states nothing the user said;
its first line, the harness rejecting the reply, is kept under :data:`REJECTED_META` (the reply ran nothing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..messages._text_actions import ACTION_TOOL, action, is_result_turn
from ..messages.message import Message
from ._terminal import read_terminal

__all__ = ["ACTION_TOOL", "HARNESS_META", "REJECTED_META", "as_tool_use", "harness_turn", "is_observation"]

_OBSERVATION = re.compile(r"\A\s*<returncode>\s*(-?\d{1,4})\s*</returncode>\s*")
"""How the harness's result turn starts: the command's return code."""
_BODIES = ("output", "output_head", "output_tail")
"""What the command printed: all of it, or, when it was too long, the head and the tail the harness showed (the
``<warning>`` beside them is the harness's own advice to the model, not output: only its first line, which says the
output was cut, is kept, before the head)."""
_FORMAT_TAGS = ("<response_example>", "<format_example>")


def is_observation(message: Message) -> bool:
    """A user turn that is a command's result, as a text-protocol harness writes it (``<returncode>0</returncode>``)."""
    return is_result_turn(message)


HARNESS_META = "harness"
"""The metadata flag of a message the harness, not the person, wrote (salience reads nothing of it)."""
_META_FLAGS = ("isMeta", "is_meta", HARNESS_META)


def harness_turn(message: Message) -> bool:
    """A user turn the harness wrote, with nothing the user said in it.

    Its own line (Claude Code's isMeta, a text-protocol harness's format reminder), or a command's result sent as a
    user turn whose reply is not in view.
    """
    return any(message.metadata.get(flag) is True for flag in _META_FLAGS) or is_observation(message)


REJECTED_META = "ctxbudget_rejected"
"""The metadata key of a format reminder: why the harness rejected the reply before it (its first line)."""


def _format_reminder(message: Message) -> bool:
    """A user turn that shows the action format's own example to the model."""
    return message.role == "user" and any(tag in message.text for tag in _FORMAT_TAGS)


def _result(message: Message, call_id: str | None) -> Message:
    """The tool message a harness's result turn stands for (failed when its return code is not 0).

    Without ``call_id`` (its reply is not in view) it answers a call of its own id, which no reply makes.
    """
    text = message.text
    found = _OBSERVATION.match(text[:64])
    code = int(found.group(1)) if found else 0
    rest = text[found.end() if found else 0 :]
    bodies = _tagged(rest, _BODIES)
    output = "\n".join(bodies) if bodies else "\n".join(_outside(rest, "warning")).strip()
    if bodies and "<output_head>" in rest:
        # Too long to show: the head and tail are what the model saw, and the warning's first line says so ("The
        # output of your last command was too long."), which a reader of the head alone would not know.
        warned = next(
            (line.strip() for w in _tagged(rest, ("warning",)) for line in w.splitlines() if line.strip()), ""
        )
        output = f"{warned}\n{output}" if warned else output
    if code != 0:
        output = f"{output}\nExit code {code}" if output.strip() else f"Exit code {code}"
    return Message(
        role="tool",
        id=message.id,
        content=output,
        name=ACTION_TOOL,
        tool_call_id=call_id or f"{message.id}.result",
        metadata={"is_error": code != 0},
    )


def _tagged(text: str, names: tuple[str, ...]) -> list[str]:
    """The contents of the blocks tagged with one of ``names`` (``<output>...</output>``), in order.

    One pass of ``str.find`` forward: a block never closed runs to the end, and a text of many unclosed tags costs its
    length, not its square.
    """
    found: list[str] = []
    position = 0
    upcoming = {name: text.find(f"<{name}>") for name in names}  # each tag's next opening (-1: none left)
    while True:
        opened = [(at, name) for name, at in upcoming.items() if at >= 0]
        if not opened:
            return found
        at, name = min(opened)
        start = at + len(name) + 2
        end = text.find(f"</{name}>", start)
        found.append(text[start : len(text) if end < 0 else end].strip("\n"))
        if end < 0:
            return found
        position = end + len(name) + 3
        for other, next_at in upcoming.items():  # only a tag found before here is looked for again: each once
            if 0 <= next_at < position:
                upcoming[other] = text.find(f"<{other}>", position)


def _outside(text: str, name: str) -> list[str]:
    """The parts of ``text`` outside its ``<name>...</name>`` blocks (linear, as :func:`_tagged`)."""
    parts: list[str] = []
    position = 0
    while (at := text.find(f"<{name}>", position)) >= 0:
        parts.append(text[position:at])
        end = text.find(f"</{name}>", at)
        if end < 0:
            return parts
        position = end + len(name) + 3
    parts.append(text[position:])
    return parts


def _unfenced(text: str) -> str:
    """``text`` without its fenced blocks (lines from a ```` ``` ```` line to the next one), in one pass over lines."""
    kept: list[str] = []
    inside = False
    for line in text.split("\n"):
        if line.startswith("```"):
            inside = not inside
            continue
        if not inside:
            kept.append(line)
    return "\n".join(kept).strip()


def as_tool_use(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with text-protocol tool use read as tool use (see the module docstring); others as they are.

    Each reply whose one command block is answered by the next message, a harness's result turn, gets that command
    as a tool call (id ``<reply id>.action``) and keeps the rest of its text; the result turn becomes the call's
    tool message (same id). A result turn whose reply is not in ``messages`` (a span starting after it) is a tool
    message answering no known call. What a terminal wrote is read first (colour codes dropped, the user's own
    commands as calls: :func:`~ctxbudget.compaction._terminal.read_terminal`); a conversation with no result turn is
    returned as that reading gives it.
    """
    messages = read_terminal(messages)
    if not any(is_observation(m) for m in messages):
        return list(messages)
    out: list[Message] = []
    pending: str | None = None  # the call id of the reply just read, until its result turn
    unanswerable = False  # the reply just read wrote no one command block
    for message in messages:
        if is_observation(message):
            out.append(_result(message, pending))
            pending, unanswerable = None, False
            continue
        if unanswerable and _format_reminder(message):
            # The reply it answers was rejected: its command blocks never ran (they are not what the agent found)
            out[-1] = out[-1].model_copy(update={"content": _unfenced(out[-1].text)})
            why = next((line.strip() for line in message.text.splitlines() if line.strip()), "")[:240]
            flags = {HARNESS_META: True, REJECTED_META: why}
            out.append(message.model_copy(update={"metadata": {**message.metadata, **flags}}))
            pending, unanswerable = None, False
            continue
        pending = None
        made = action(message)
        unanswerable = message.role == "assistant" and not message.tool_calls and made is None
        if made is None:
            out.append(message)
            continue
        call, said = made
        pending = call.id
        out.append(message.model_copy(update={"content": said, "tool_calls": (call,)}))
    return out
