"""What a terminal wrote into the conversation, read as compaction's readers need it.

Two things reach a transcript from a terminal as they were printed:

* **Colour codes.** A test runner or linter run in a terminal prints ANSI escape sequences (``ESC[31m FAIL
  ESC[39m``); an agent's tool output keeps them. They are no text: a line is read without them.
* **The user's own commands.** Claude Code's ``!`` mode runs a command the user typed and sends it as two user
  turns: ``<bash-input>./run_test.sh</bash-input>`` and ``<bash-stdout>...</bash-stdout><bash-stderr>...
  </bash-stderr>``. Read as the user's words they are harness tags (nothing) or, when a block is not where a tag
  opens, lines of output filed as "User facts". They are a command and its result: :func:`read_terminal` gives
  them to compaction's readers as a tool call (``Bash (user)``) and its tool message, so the summary says what the
  user ran and what it printed (a failure read as one).

The history itself is unchanged (it is what the model was sent); only what compaction reads of it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..messages.message import Message, ToolCall

__all__ = ["USER_COMMAND_TOOL", "read_terminal"]

USER_COMMAND_TOOL = "Bash (user)"
"""The name a command the user ran themselves is read under (its result is the tool message of that call)."""

_ANSI = re.compile(r"\x1b\[[0-9;?]{0,32}[A-Za-z]|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)")
"""A terminal's escape sequence: a CSI sequence (colours, cursor moves) or an OSC one (a window title, a link)."""
_INPUT = re.compile(r"\A\s*<bash-input>(.{1,4000}?)</bash-input>\s*\Z", re.DOTALL)
_OUTPUT = re.compile(r"<(bash-stdout|bash-stderr)>(.*?)</\1>", re.DOTALL)
_OUTPUT_START = re.compile(r"\A\s*<bash-std(?:out|err)>")


def read_terminal(messages: Sequence[Message]) -> list[Message]:
    """``messages`` without colour codes, and with the user's own commands read as tool use (module docstring).

    A ``<bash-input>`` turn becomes an assistant turn holding one ``Bash (user)`` call (id ``<turn id>.user``); the
    output turn after it becomes that call's tool message: what it wrote to stdout, then to stderr. Returns the same
    messages (copies only of those changed).
    """
    out: list[Message] = []
    pending: str | None = None  # the call id of the user's command just read, until its output turn
    for message in messages:
        if "\x1b" in message.text:
            message = message.model_copy(update={"content": _ANSI.sub("", message.text)})  # noqa: PLW2901
        if message.role != "user" or "<bash-" not in message.text[:200]:
            out.append(message)
            pending = None
            continue
        typed = _INPUT.match(message.text)
        if typed is not None:
            call = ToolCall(id=f"{message.id}.user", name=USER_COMMAND_TOOL, args={"command": typed.group(1).strip()})
            out.append(Message(role="assistant", tool_calls=(call,), id=message.id, metadata=message.metadata))
            pending = call.id
            continue
        if pending is not None and _OUTPUT_START.match(message.text):
            printed = "\n".join(body.strip("\n") for _, body in _OUTPUT.findall(message.text) if body.strip())
            out.append(Message(role="tool", tool_call_id=pending, content=printed, id=message.id))
            pending = None
            continue
        out.append(message)
        pending = None
    return out
