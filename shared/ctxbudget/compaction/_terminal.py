r"""What a terminal wrote into the conversation, read as compaction's readers need it.

Two things reach a transcript from a terminal as they were printed:

* **Colour codes.** A test runner or linter run in a terminal prints ANSI escape sequences (``ESC[31m FAIL
  ESC[39m``); an agent's tool output keeps them. They are no text: a line is read without them.
* **The user's own commands.** Claude Code's ``!`` mode runs a command the user typed and sends it as two user
  turns: ``<bash-input>./run_test.sh</bash-input>`` and ``<bash-stdout>...</bash-stdout><bash-stderr>...
  </bash-stderr>``. Read as the user's words they are harness tags (nothing) or, when a block is not where a tag
  opens, lines of output filed as "User facts". They are a command and its result: :func:`read_terminal` gives
  them to compaction's readers as a tool call (``Bash (user)``) and its tool message, so the summary says what the
  user ran and what it printed (a failure read as one).

* **A CI log.** ``gh run view --log`` starts every line with the job, the step and a timestamp (``test\tTests\t
  2026-04-29T08:18:34.79Z --- FAIL: TestRun``): without them a line reads as the tool printed it.
* **A terminal the user pasted.** "nope I don't see it. ~/Projects $ ls ~/.cursor/plugins\nentire  local": the
  prompt lines are commands the user ran and the lines under each are what it printed, not sentences the user
  wrote ("entire local" as a user fact). The prose before the first prompt stays the user's words; each command
  is read as a ``Bash (user)`` call answered by its output, as a ``!`` command is (up to
  :data:`MAX_PASTED_COMMANDS` of them in one turn: the rest stays the user's text).

The history itself is unchanged (it is what the model was sent); only what compaction reads of it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..messages.message import Message, ToolCall
from ._prose import FENCE

__all__ = ["MAX_PASTED_COMMANDS", "USER_COMMAND_TOOL", "USER_SLASH_TOOL", "read_terminal"]

USER_SLASH_TOOL = "Command (user)"
"""The name a Claude Code slash command the user ran (``/rename kiki``, ``/model opus``) is read under."""
USER_COMMAND_TOOL = "Bash (user)"
"""The name a command the user ran themselves is read under (its result is the tool message of that call)."""
MAX_PASTED_COMMANDS = 64
"""How many prompt lines of one pasted terminal are read as commands; past it, the first :data:`_PASTED_FIRST` and
the last ones are.

Each command read is a call and its tool message, and each goes through every per-call reader of compaction (what
it ran, read, wrote, whether it failed), about 25 times what the same text costs read as the user's words: with no
bound, a megabyte of pasted prompt lines (36,000 of them) took 12 s to compact, growing faster than its size. A
pasted terminal holds a few commands (the real transcripts measured hold at most 7 in one turn, the tests 3): 64 is
well above that and costs little. The commands between the first and the last ones are not dropped: their lines, as
the user pasted them, stay one user message (id ``<id>.pasted``) between those calls, read as the user's words are.
"""
_PASTED_FIRST = 16
"""How many of the first commands of a paste past the bound are read as calls: where it started (the directory, the
setup). The other calls are the last commands (what happened last, what the user is asking about): they matter more."""

_ANSI = re.compile(r"\x1b\[[0-9;?]{0,32}[A-Za-z]|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)")
"""A terminal's escape sequence: a CSI sequence (colours, cursor moves) or an OSC one (a window title, a link)."""
_ACTIONS_LINE = re.compile(
    r"^[^\t\n]{1,120}\t[^\t\n]{1,200}\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z ?"
    r"(?:##\[(?:error|warning|notice|debug|group|endgroup)\])?",
    re.MULTILINE,
)
"""What starts each line of a GitHub Actions log as ``gh run view --log`` prints it: the job, the step, a timestamp,
and the runner's marker (``##[error]``, ``##[group]``)."""
_INPUT = re.compile(r"\A\s*<bash-input>(.{1,4000}?)</bash-input>\s*\Z", re.DOTALL)
_OUTPUT_TAG = re.compile(r"<(bash-stdout|bash-stderr)>")
_OUTPUT_START = re.compile(r"\A\s*<bash-std(?:out|err)>")
_DIR_PROMPT = r"(?:\([\w.-]{1,40}\) ?)?(?:[\w.-]{1,40}@[\w.-]{1,60}:?)?[~/][^\s$#]{0,200}\s{0,4}\$"
"""A shell prompt after a working directory: ``~/Projects $``, ``alex@box:~/src$``, ``(venv) /app $``."""
_PROMPT_LINE = re.compile(rf"^\s{{0,4}}(?:{_DIR_PROMPT}|\$) (?P<command>\S.{{0,2000}})$")
"""A line a terminal prompt starts (a bare ``$`` too): the command after it."""
_PROSE_THEN_PROMPT = re.compile(rf"^(?P<prose>.{{1,500}}?[.!?:])\s+{_DIR_PROMPT} (?P<command>\S.{{0,2000}})$")
"""A first line whose sentence runs into a pasted prompt (with its working directory: a bare ``$`` there is prose)."""


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
        if (
            message.role == "tool"
            and "Z " in message.text[:400]
            and len(_ACTIONS_LINE.findall(message.text[:4000])) >= 3
        ):
            message = message.model_copy(update={"content": _ACTIONS_LINE.sub("", message.text)})  # noqa: PLW2901
        if message.role == "user" and "<command-name>" in message.text[:200]:
            slash = _slash_command(message)
            out.append(slash or message)
            pending = slash.tool_calls[0].id if slash is not None else None
            continue
        if pending is not None and message.role == "user" and "<local-command-stdout>" in message.text[:200]:
            stdout = _STDOUT.search(message.text)
            out.append(Message(role="tool", tool_call_id=pending, content=stdout.group(1).strip() if stdout else ""))
            pending = None
            continue
        if message.role != "user" or "<bash-" not in message.text[:200]:
            out.extend(_pasted_terminal(message) if message.role == "user" and "$ " in message.text else (message,))
            pending = None
            continue
        typed = _INPUT.match(message.text)
        if typed is not None:
            call = ToolCall(id=f"{message.id}.user", name=USER_COMMAND_TOOL, args={"command": typed.group(1).strip()})
            out.append(Message(role="assistant", tool_calls=(call,), id=message.id, metadata=message.metadata))
            pending = call.id
            continue
        if pending is not None and _OUTPUT_START.match(message.text):
            printed = "\n".join(body.strip("\n") for body in _outputs(message.text) if body.strip())
            out.append(Message(role="tool", tool_call_id=pending, content=printed, id=message.id))
            pending = None
            continue
        out.append(message)
        pending = None
    return out


def _outputs(text: str) -> list[str]:
    """What each ``<bash-stdout>`` / ``<bash-stderr>`` block of ``text`` holds, in order (to its closing tag).

    One forward pass: a block's closing tag is found with ``str.find``, and a tag never closed is not looked for again
    (``"<bash-stdout>" * 10_000`` costs its length, not its square).
    """
    bodies: list[str] = []
    unclosed: set[str] = set()
    position = 0
    while (found := _OUTPUT_TAG.search(text, position)) is not None:
        tag = found.group(1)
        end = -1 if tag in unclosed else text.find(f"</{tag}>", found.end())
        if end < 0:
            unclosed.add(tag)
            position = found.end()
            continue
        bodies.append(text[found.end() : end])
        position = end + len(tag) + 3
    return bodies


_BARE_PROMPT = re.compile(r"^\s{0,4}\$ ")
"""A prompt line with no working directory before its ``$``: how documentation writes a command to run, too."""


def _printed(lines: list[str]) -> tuple[str, str]:
    """What a pasted command printed, and what the user wrote after the paste.

    The lines up to the next prompt, or to a code fence that closes the paste; then the lines after that fence.
    """
    fence = next((at for at, line in enumerate(lines) if line.lstrip().startswith(FENCE)), len(lines))
    return "\n".join(lines[:fence]).strip("\n"), "\n".join(lines[fence + 1 :]).strip("\n")


_SLASH = re.compile(
    r"<command-name>(/[\w:.-]{1,80})</command-name>(?:.{0,400}?<command-args>(.{0,400}?)</command-args>)?", re.DOTALL
)
_STDOUT = re.compile(r"<local-command-stdout>(.{0,4000}?)</local-command-stdout>", re.DOTALL)
_NO_EFFECT = frozenset({"/exit", "/quit", "/clear", "/help", "/cost", "/status"})
"""Slash commands that change nothing in the work (their output is a farewell, an empty screen or a report)."""


def _slash_command(message: Message) -> Message | None:
    """A slash command the user ran in Claude Code (``/rename kiki``), as a ``Command (user)`` call.

    ``None`` for one that changes nothing (``/exit``, ``/clear``): its turn stays the harness's.
    """
    found = _SLASH.search(message.text[:1000])
    if found is None or found.group(1) in _NO_EFFECT:
        return None
    command = f"{found.group(1)} {(found.group(2) or '').strip()}".strip()
    call = ToolCall(id=f"{message.id}.slash", name=USER_SLASH_TOOL, args={"command": command})
    return Message(role="assistant", tool_calls=(call,), id=message.id)


def _pasted_terminal(message: Message) -> list[Message]:
    """A user turn holding a pasted terminal session, read as the user's prose and the commands they ran.

    Returns ``[message]`` when no line is a prompt. Otherwise the prose before the first prompt (a user message,
    same id, when there is any), then per prompt line a ``Bash (user)`` call (id ``<id>.paste<n>``) and its tool
    message: the lines up to the next prompt (or to the fence that closes the paste; what follows that fence is a
    user message again, id ``<id>.after``). Past :data:`MAX_PASTED_COMMANDS` prompt lines, those between the first
    and the last ones read are one user message of their lines as pasted (id ``<id>.pasted``), in their place.
    """
    lines = message.text.splitlines()
    commands: list[tuple[int, str]] = []  # (line index, command) of each prompt line
    prose: list[str] = []
    said = False  # a line with text was read
    for index, line in enumerate(lines):
        found = _PROMPT_LINE.match(line)
        if found is None and not commands and not said:  # only the first line said runs into a prompt
            found = _PROSE_THEN_PROMPT.match(line)
            if found is not None:
                prose.append(found.group("prose"))
        said = said or bool(line.strip())
        if found is not None:
            commands.append((index, found.group("command").strip()))
        elif not commands:
            prose.append(line)
    if not commands:
        return [message]
    ends = [index for index, _ in commands[1:]] + [len(lines)]
    runs = [_printed(lines[index + 1 : end]) for (index, _), end in zip(commands, ends, strict=True)]
    printed = [text for text, _ in runs]
    if len(commands) == 1 and not printed[0]:
        return [message]  # one command and nothing it printed: the user may be saying what to run, not pasting
    bare = all(_BARE_PROMPT.match(lines[index]) for index, _ in commands)
    if bare and 2 * sum(1 for text in printed if text) < len(commands):
        return [message]  # "$ git clone ...", "$ cd ...", "$ make": steps to reproduce, as an issue writes them
    prose = [line for line in prose if not line.lstrip().startswith(FENCE)]  # the fence the paste opens with
    out = [message.model_copy(update={"content": "\n".join(prose)})] if "".join(prose).strip() else []
    unread = _unread(len(commands))
    after = "\n".join(rest for n, (_, rest) in enumerate(runs) if rest and n not in unread)  # unread: in their lines
    for n, (_, command) in enumerate(commands):
        if n == unread.start < unread.stop:
            pasted = "\n".join(lines[commands[n][0] : commands[unread.stop][0]])
            out.append(message.model_copy(update={"content": pasted, "id": f"{message.id}.pasted"}))
        if n in unread:
            continue
        call = ToolCall(id=f"{message.id}.paste{n}", name=USER_COMMAND_TOOL, args={"command": command})
        out.append(Message(role="assistant", tool_calls=(call,), id=call.id, metadata=message.metadata))
        out.append(Message(role="tool", tool_call_id=call.id, content=printed[n], id=f"{message.id}.paste{n}.out"))
    if after:  # what the user wrote after the pasted block: their words again
        out.append(message.model_copy(update={"content": after, "id": f"{message.id}.after"}))
    return out


def _unread(count: int) -> range:
    """Which of a paste's ``count`` commands are not read as calls (their lines stay the user's text).

    None up to :data:`MAX_PASTED_COMMANDS`; past it, all but the first :data:`_PASTED_FIRST` and the last
    ``MAX_PASTED_COMMANDS - _PASTED_FIRST``.
    """
    if count <= MAX_PASTED_COMMANDS:
        return range(0)
    return range(_PASTED_FIRST, count - (MAX_PASTED_COMMANDS - _PASTED_FIRST))
