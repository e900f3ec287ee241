"""What a tool call and its result say: the call's bullet with its outcome, its file, and what the output reports.

A call yields a command, a file operation or another call with its outcome (:mod:`ctxbudget.compaction.call_outcomes`),
and a file operation also an artifact keyed by its path; the agent's own task list is its plan
(:mod:`~ctxbudget.compaction._plans`). A result yields an error item when its structure says it failed, and the
paths, result lines, figures and record fields it reports (:mod:`ctxbudget.compaction.outputs`); a file that was
read reports no facts, and a line the call's own bullet shows is keyed so the ledger does not repeat it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping

from ..messages.message import Message, ToolCall
from ..messages.toolpairs import not_run
from ._plans import is_plan_call, plan_item
from ._salient import RECORD_CALL, SHOWN_BY_CALL, USER_CHOSE, Salient
from ._salient import item as _item
from ._terminal import USER_SLASH_TOOL
from .call_outcomes import background, call_failure, outcome
from .calls import (
    call_kind,
    call_label,
    edited_line,
    file_op,
    is_file_read,
    is_install_command,
    is_search,
    only_writes,
    reads_document,
    reads_source,
    shell_command,
    shell_reads,
    shell_writes,
)
from .harness import strip_harness
from .outcomes import rejected
from .outputs import output_items
from .textscan import clip, informative_tokens

__all__ = ["call_items", "tool_items"]

_CALL_CHARS = 320
"""Longest bullet of a command or call with its outcome."""
_ANSWERED = re.compile(r"\s*(?:Your questions have been answered|User has answered your questions?)\b")
_ANSWERS = re.compile(r'"([^"\n]{1,300})"="([^"\n]{1,300})"')
"""A question and the user's answer as a question tool's result gives them (Claude Code's AskUserQuestion: "Your
questions have been answered: "Which direction should the fix take?"="Client batching (git-sync)". ...")."""


def call_items(
    call: ToolCall, result: Message | None, order: int, failure: Callable[[Message], str | None]
) -> Iterator[Salient]:
    """The items of one tool call answered by ``result``: its file, its command or call with its outcome."""
    other = _not_work(call, result, order)
    if other is not None:
        yield from other
        return
    label = call_label(call)
    shown, failed = outcome(result, failure, call)
    kind = call_kind(call)
    if kind == "file":
        operation = file_op(call)
        assert operation is not None
        never_ran = result is not None and (rejected(result) or not_run(result))
        status = f" -> {shown}" if failed or result is None or never_ran else ""
        if not status and operation.op == "edited" and (line := edited_line(call)) is not None:
            status = f" -> now: {line}"  # the line as the edit left it: the file's state, read from the call
        yield _item("artifact", f"{operation.path}: {operation.op}{status}", operation.path.lower(), order)
        if failed:
            return
    if failed is not None and kind != "file":
        return  # its result's error item names the call and says how it failed: one bullet, in Errors
    if kind == "command" and result is not None:
        command = shell_command(call) or ""
        for written in shell_writes(command):  # what the command wrote: files of the work
            yield _item("artifact", f"{written.path}: {written.op}", written.path.lower(), order)
        for path in shell_reads(command) if failed is None else ():  # what it showed: files the work read
            yield _item("artifact", f"{path}: read", path.lower(), order)
    if (kind != "file" or result is None) and not (result is not None and _told_by_its_files(call, shown)):
        bullet = clip(f"{label} -> {shown}", _CALL_CHARS)
        yield _item("command" if kind == "command" else "call", bullet, label.lower(), order)
    if result is None:
        yield _item("open", clip(f"{label} has no result yet", 240), None, order)


def _not_work(call: ToolCall, result: Message | None, order: int) -> list[Salient] | None:
    """The items of a call that is no work of the agent's on the project (``None`` for every other call).

    The agent's own task list (what is done and next), the user's answers through a question tool (Claude Code's
    AskUserQuestion: their choices), and a slash command the user ran (``/gsd:progress``): that has no tool result,
    what follows it is its result (its prompt, the agent's work), so "-> no result" and "has no result yet" would read
    as a command still to run.
    """
    if is_plan_call(call) and (planned := plan_item(call, result)) is not None:
        return [_item(*planned, order)]
    answered = result is not None and _ANSWERED.match(result.text[:200]) is not None
    answers = _ANSWERS.findall(result.text[:4_000]) if result is not None and answered else []
    if answers:
        return [
            _item("decision", clip(f"{USER_CHOSE}{answer} (to: {question})", 280), None, order)
            for question, answer in answers
        ]
    if call.name == USER_SLASH_TOOL and result is None:
        label = call_label(call)
        return [_item("call", clip(label, _CALL_CHARS), label.lower(), order)]
    return None


def _told_by_its_files(call: ToolCall, shown: str) -> bool:
    """The call only wrote files, silently: ``cat > t.py << 'EOF' ... -> ok`` says no more than ``t.py: wrote``."""
    return shown == "ok" and only_writes(shell_command(call) or "")


def tool_items(
    message: Message, order: int, calls: Mapping[str, ToolCall], failure: Callable[[Message], str | None]
) -> Iterator[Salient]:
    """The items of one tool result at position ``order`` (``calls``: calls by id; ``failure`` reads failures)."""
    call = calls.get(message.tool_call_id or "")
    label = call_label(call) if call is not None else (message.name or "tool")
    failed = call_failure(call, message, failure)
    if failed is not None:
        yield _item("error", clip(f"{label} -> {failed}", 300), label.lower(), order)
    kind = call_kind(call) if call is not None else None
    operation = file_op(call) if kind == "file" and call is not None else None
    if (operation is not None and operation.op != "read") or is_plan_call(call) or rejected(message):
        return  # a write's, an edit's or a task list's result is its confirmation, a rejected call's says it never ran
    if background(message.text) is not None:
        return  # the command went on in the background: its call's bullet says so, and the output file is the harness's
    tool = message.name or (call.name if call is not None else "tool")
    read = is_file_read(call)
    if read and operation is not None:  # "Read STATE.md: Total plans completed: 121": which file said it
        tool = f"{tool} {operation.path.replace(chr(92), '/').rsplit('/', 1)[-1]}"
    search = call is not None and is_search(call)
    text = strip_harness(message.text)
    in_call = call is not None and failed is None  # the call's bullet shows a JSON record's fields
    command = shell_command(call) if kind == "command" and call is not None else None
    found_items = output_items(
        text,
        tool,
        file_read=read,
        source=read and reads_source(call),
        document=read and reads_document(call),
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
