"""What carries information in a transcript, found without a model: :class:`Salient` items, one pass per message.

* **User messages** (harness text removed: :mod:`ctxbudget.compaction.harness`) yield the user's statements in their own
  words (:mod:`ctxbudget.compaction.statements`): facts, constraints, preferences, and requests and questions (the
  latest one is the "latest request"; an imperative one is also the current task). A long paste is one item pointing to
  the archived original.
* **Assistant messages** yield decisions and open items; narration yields nothing. Each tool call yields a
  command, file operation or call item with its outcome (:mod:`ctxbudget.compaction.outcomes`), and a file operation
  also an artifact keyed by its path.
* **Tool results** yield an error item when their structure says they failed, and the paths, result lines, figures
  and record fields they report (:mod:`ctxbudget.compaction.outputs`); a file that was read reports no facts.
* A harness's own continuation summary (Claude Code's, after its compaction) is read as an earlier summary.

Items carry a supersession key where one exists (the path of an artifact, the label of a call), so a later item
with the same key replaces an earlier one; statements are matched by subject in
:mod:`ctxbudget.compaction.supersession`. Every function here is linear in the message's length.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Literal, NamedTuple

from ..messages.message import Message, ToolCall
from ._plans import PLAN_KEY, is_plan_call, plan_item, task_key
from ._text_protocol import HARNESS_META, REJECTED_META, as_tool_use, is_observation
from .calls import (
    call_kind,
    call_label,
    edited_line,
    file_op,
    is_file_read,
    is_install_command,
    is_search,
    reads_source,
    shell_command,
    shell_writes,
)
from .harness import is_continuation_summary, strip_harness
from .memo import ReadMemo
from .outcomes import call_failure, failure_key, failure_line, outcome
from .outputs import output_items
from .statements import Statement, assistant_statements, user_statements
from .textscan import clip, informative_tokens

__all__ = [
    "ASKED",
    "RECORD_CALL",
    "SHOWN_BY_CALL",
    "USER_CHOSE",
    "SalienceKind",
    "Salient",
    "failure_line",
    "informative_tokens",
    "item_key",
    "key_lines",
    "salient_items",
    "statements_reader",
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

HandleOf = Callable[[Message], "str | None"]
"""The archive handle a message of the span will have once compacted (``None``: not known)."""
Said = Callable[[str], Sequence[Statement]]
"""Reads the statements of a user message's text (:func:`~ctxbudget.compaction.statements.user_statements`)."""
_META_FLAGS = ("isMeta", "is_meta", HARNESS_META)
"""Message metadata flags a transcript reader sets on text the harness, not the person, wrote."""
SHOWN_BY_CALL = "shown by: "
"""How the key of a figure line its call's own bullet already shows starts (then the call's label, lower-cased): the
ledger shows it only when that bullet is not kept; a cleared output's marker keeps it."""
RECORD_CALL = " -> ok"
"""How a call whose result was a record ends its bullet; each field of it is ``<call> -> ok: key=value``."""
ASKED = "asked"
"""The key of the question an assistant's reply ends on: the task reads it when the user's answer is a bare yes."""
USER_CHOSE = "User chose: "
"""How a user's decision starts (among the assistant's, in the Decisions section)."""
_CALL_CHARS = 320
"""Longest bullet of a command or call with its outcome."""


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


def _item(kind: SalienceKind, text: str, key: str | None, order: int) -> Salient:
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


def key_lines(message: Message, max_lines: int) -> list[str]:
    """The lines of a tool output worth keeping in view when the output itself is not (a cleared result's marker).

    Its failure first, then the paths it wrote and its result and figure lines, at most ``max_lines``.
    """
    lines: list[str] = []
    failed = failure_line(message)
    if failed is not None:
        lines.append(f"FAILED: {failed}")
    for found in output_items(message.text, message.name or "tool"):
        if len(lines) >= max_lines:
            break
        text = found.text.split(": ", 1)[1] if found.kind == "figure" and ": " in found.text else found.text
        if text not in lines:
            lines.append(clip(text, 200))
    return lines[:max_lines]


def salient_items(
    messages: Sequence[Message],
    results: Mapping[str, Message] | None = None,
    *,
    handle_of: HandleOf | None = None,
    memo: ReadMemo | None = None,
    calls: Mapping[str, ToolCall] | None = None,
) -> list[Salient]:
    """Every salient item of ``messages``, in conversation order.

    Args:
        messages: the span (originals, not bounded or cleared copies, for full coverage).
        results: tool results by call id from outside the span (a call's result may sit after the cut).
        handle_of: the archive handle of a message of the span, named in the item of a long paste.
        memo: what earlier compactions of the session read; a message met again is not read again.
        calls: tool calls by id from outside the span (a result's call may sit before it).
    """
    messages = as_tool_use(messages)  # a command written as a code block, its result sent back as a user turn
    by_call = dict(results or {})
    by_call.update({m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id})
    calls = {**(calls or {}), **{call.id: call for m in messages for call in m.tool_calls}}
    items: list[Salient] = []
    for order, message in enumerate(messages):
        if message.metadata.get("ctxbudget"):
            continue  # our own summary, notices and pinned copies are not conversation
        if memo is None:
            items.extend(message_items(message, order, by_call, calls, handle_of))
            continue
        handle = handle_of(message) if handle_of is not None and message.role == "user" else None
        found = memo.get(
            _read_key(message, by_call, calls, handle), _reader(message, by_call, calls, handle, memo), _chars
        )
        items.extend(Salient(kind=i.kind, text=i.text, key=i.key, order=order, tokens=i.tokens) for i in found)
    return items


def _reader(
    message: Message,
    by_call: Mapping[str, Message],
    calls: Mapping[str, ToolCall],
    handle: str | None,
    memo: ReadMemo,
) -> Callable[[], tuple[Salient, ...]]:
    def failure(result: Message) -> str | None:
        # A result's failure is read once: for its own items (when it is cleared) and for its call's outcome.
        return memo.get(failure_key(result), lambda: failure_line(result), lambda line: len(line or ""))

    def read() -> tuple[Salient, ...]:
        items = message_items(
            message, 0, by_call, calls, lambda _message: handle, failure=failure, said=statements_reader(memo)
        )
        return tuple(items)

    return read


def _read_key(
    message: Message, by_call: Mapping[str, Message], calls: Mapping[str, ToolCall], handle: str | None
) -> tuple[object, ...]:
    """What a message's items depend on: the message itself, its calls' results, the call it answers, its handle."""
    text = message.text
    if message.role == "assistant":
        results = tuple(
            (call.id, result.id, hash(result.text), result.metadata.get("is_error") is True)
            for call in message.tool_calls
            if (result := by_call.get(call.id)) is not None
        )
        return (message.id, hash(text), len(text), tuple(c.id for c in message.tool_calls), results, message.state)
    if message.role == "tool":
        call = calls.get(message.tool_call_id or "")
        return (message.id, hash(text), len(text), call_label(call) if call is not None else message.name)
    return (message.id, hash(text), len(text), handle)


def statements_reader(memo: ReadMemo) -> Said:
    """:func:`~ctxbudget.compaction.statements.user_statements`, remembered in ``memo`` by text.

    A user message is read for its statements once: while it is in view in the kept tail, and again when it is
    evicted (whatever handle its items then name).
    """

    def said(text: str) -> tuple[Statement, ...]:
        return memo.get(
            ("said", text),
            lambda: tuple(user_statements(text)),
            lambda found: len(text) + sum(len(statement.text) for statement in found),
        )

    return said


def _chars(items: tuple[Salient, ...]) -> int:
    return sum(len(item.text) + 48 for item in items)


def message_items(
    message: Message,
    order: int,
    by_call: Mapping[str, Message],
    calls: Mapping[str, ToolCall],
    handle_of: HandleOf | None = None,
    *,
    failure: Callable[[Message], str | None] = failure_line,
    said: Said = user_statements,
) -> Iterator[Salient]:
    """The items of one message at position ``order`` (``by_call``: results by call id; ``calls``: calls by id).

    ``failure`` reads a tool result's failure line (:func:`~ctxbudget.compaction.outcomes.failure_line`, or a
    remembered one); ``said`` a user message's statements (:func:`statements_reader`, or read afresh).
    """
    if message.role == "user":
        yield from _user_items(message, order, handle_of, said)
    elif message.role == "assistant":
        yield from _assistant_items(message, order, by_call, failure)
    elif message.role == "tool":
        yield from _tool_items(message, order, calls, failure)


def _user_items(message: Message, order: int, handle_of: HandleOf | None, said: Said) -> Iterator[Salient]:
    rejected = message.metadata.get(REJECTED_META)
    if isinstance(rejected, str) and rejected:  # a harness rejected the reply before: it ran nothing
        yield _item("error", f"the harness rejected the reply -> {rejected}", "the harness rejected the reply", order)
    if any(message.metadata.get(flag) is True for flag in _META_FLAGS):
        return  # a harness's own line (Claude Code's isMeta, a text-protocol harness's format reminder)
    if is_observation(message):
        return  # a command's result the harness sent as a user turn, whose reply is not in view: nothing the user said
    if is_continuation_summary(message.text):
        yield from _continuation(message.text, order)
        return
    yield from _statement_items(message.text, order, handle_of(message) if handle_of is not None else None, said)


def _statement_items(
    text: str, order: int, handle: str | None = None, said: Said = user_statements
) -> Iterator[Salient]:
    for statement in said(text):
        shown = statement.text
        if statement.kind == "decision":
            shown = f"{USER_CHOSE}{shown}"  # beside the assistant's decisions, whose choice it was
        if statement.kind == "paste":
            shown = f"User {shown}" + (f" (full text: {handle})" if handle else "")
        yield _item(statement.kind, shown, item_key(statement.kind, shown), order)


def _continuation(text: str, order: int) -> Iterator[Salient]:
    """A harness's continuation summary: its lines are notes from an earlier summary (kept, ranked low)."""
    body = strip_harness(text)
    for raw in body.splitlines()[1:400]:
        line = raw.strip().lstrip("-*• ").strip()
        if len(line.split()) >= 3 and not line.startswith("#"):
            yield _item("note", clip(line, 280), None, order)


def _assistant_items(
    message: Message, order: int, by_call: Mapping[str, Message], failure: Callable[[Message], str | None]
) -> Iterator[Salient]:
    for statement in assistant_statements(message.text):
        yield _item(statement.kind, statement.text, item_key(statement.kind, statement.text), order)
    asked = _closing_question(message) if not message.tool_calls else None
    if asked is not None:  # what a user's "Yes, please proceed" answers (never a bullet of its own)
        yield _item("open", asked, ASKED, order)
    if message.state == "interrupted":
        yield _item("open", "The assistant's reply was interrupted before it finished.", "open", order)
    for call in message.tool_calls:
        yield from _call_items(call, by_call.get(call.id), order, failure)


def _call_items(
    call: ToolCall, result: Message | None, order: int, failure: Callable[[Message], str | None]
) -> Iterator[Salient]:
    """The items of one tool call answered by ``result``: its file, its command or call with its outcome."""
    if is_plan_call(call) and (planned := plan_item(call, result)) is not None:
        yield _item(*planned, order)  # the agent's own task list: what is done and next, not a call
        return
    label = call_label(call)
    shown, failed = outcome(result, failure, call)
    kind = call_kind(call)
    if kind == "file":
        operation = file_op(call)
        assert operation is not None
        status = f" -> {shown}" if failed or result is None else ""
        if not status and operation.op == "edited" and (line := edited_line(call)) is not None:
            status = f" -> now: {line}"  # the line as the edit left it: the file's state, read from the call
        yield _item("artifact", f"{operation.path}: {operation.op}{status}", operation.path.lower(), order)
        if failed:
            return
    if failed is not None and kind != "file":
        return  # its result's error item names the call and says how it failed: one bullet, in Errors
    if kind == "command" and result is not None:
        for written in shell_writes(shell_command(call) or ""):  # what the command wrote: files of the work
            yield _item("artifact", f"{written.path}: {written.op}", written.path.lower(), order)
    if kind != "file" or result is None:
        bullet = clip(f"{label} -> {shown}", _CALL_CHARS)
        yield _item("command" if kind == "command" else "call", bullet, label.lower(), order)
    if result is None:
        yield _item("open", clip(f"{label} has no result yet", 240), None, order)


def _tool_items(
    message: Message, order: int, calls: Mapping[str, ToolCall], failure: Callable[[Message], str | None]
) -> Iterator[Salient]:
    call = calls.get(message.tool_call_id or "")
    label = call_label(call) if call is not None else (message.name or "tool")
    failed = call_failure(call, message, failure)
    if failed is not None:
        yield _item("error", clip(f"{label} -> {failed}", 300), label.lower(), order)
    kind = call_kind(call) if call is not None else None
    operation = file_op(call) if kind == "file" and call is not None else None
    if (operation is not None and operation.op != "read") or is_plan_call(call):
        return  # a write's, an edit's or a task list's result is its confirmation: its own item says what it did
    tool = message.name or (call.name if call is not None else "tool")
    read = is_file_read(call)
    search = call is not None and is_search(call)
    text = strip_harness(message.text)
    in_call = call is not None and failed is None  # the call's bullet shows a JSON record's fields
    command = shell_command(call) if kind == "command" and call is not None else None
    found_items = output_items(
        text,
        tool,
        file_read=read,
        source=read and reads_source(call),
        command=kind == "command",
        search=search,
        in_call=in_call,
        install=command is not None and is_install_command(command),
    )
    # The call's own bullet shows its outcome (a short output whole): a line it shows is keyed SHOWN_BY_CALL and the
    # call's label, and the ledger shows it only when the call's bullet is not kept ("bash: Test 6 PASSED: ..."
    # beside "python test_fix.py -> ok: ... | Test 6 PASSED: ..."). A cleared output's marker, with no call bullet,
    # keeps it.
    shown = _call_bullet(call, message, failure) if in_call and kind in ("command", "call") else ""
    for found in found_items:
        if found.kind == "figure" and shown and found.text.split(": ", 1)[-1] in shown:
            yield _item("figure", found.text, f"{SHOWN_BY_CALL}{label.lower()}", order)
        elif found.kind == "field":  # one field of the record the call returned: the ledger shows it in its bullet
            # what it holds is the field's, not the call's arguments' (each field would hold the call's rare ids)
            tokens = informative_tokens(f"{tool}: {found.text}")  # as the ledger reads it back (_records)
            yield Salient("figure", f"{label}{RECORD_CALL}: {found.text}", None, order, tokens)
        else:
            yield _item(found.kind, found.text, found.key, order)


def _call_bullet(call: ToolCall | None, result: Message, failure: Callable[[Message], str | None]) -> str:
    """The bullet :func:`_assistant_items` writes for ``call`` answered by ``result`` (``""``: it writes none)."""
    if call is None:
        return ""
    shown, failed = outcome(result, failure, call)
    return "" if failed is not None else clip(f"{call_label(call)} -> {shown}", _CALL_CHARS)


def _closing_question(message: Message) -> str | None:
    """The question an assistant's reply ends on ("Would you like to proceed with this booking arrangement?")."""
    text = message.text.rstrip().rstrip("*_ ")
    if not text.endswith("?"):
        return None
    start = max(text.rfind(end, 0, len(text) - 1) for end in (". ", "! ", "? ", "\n", ": "))
    question = " ".join(text[start + 1 :].split()).lstrip("*_-# ")
    return clip(question, 240) if len(question.split()) >= 3 else None


def tail_statements(texts: Iterable[str], said: Said = user_statements) -> list[Salient]:
    """The statements of user messages still in view, by their texts (``said`` reads them: :func:`statements_reader`).

    They supersede older statements, and are not repeated in the summary.
    """
    items: list[Salient] = []
    for order, text in enumerate(texts, start=1_000_000):
        items.extend(_statement_items(text, order, None, said))
    return items
