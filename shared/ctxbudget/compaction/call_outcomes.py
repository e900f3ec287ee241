"""What a call's result says, given the call: ``ok`` with what it printed, ``FAILED`` with why, or why it did not run.

:mod:`~ctxbudget.compaction.outcomes` reads whether a result's text and flags show a failure; this module weighs that
against the call: a search command whose exit status 1 says it matched nothing did not fail, nor did a file read the
harness marked as no error whose text holds a traceback (the file's, a test's expected output); a lookup answered
only "No trip recommendation found with ID 11" did.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from ..messages.message import Message, ToolCall
from ..messages.toolpairs import not_run
from ._edges import WRAPPER, carried, content, edge_lines
from .calls import COMMAND_SEPARATOR, call_kind, is_file_read, is_search, shell_command, unquoted
from .harness import persisted_output
from .outcomes import EXIT_STATUS, SCAN_CHARS, failure_line, json_body, rejected
from .textscan import bounded, clip

__all__ = ["background", "call_failure", "outcome"]

_NOT_FOUND = re.compile(
    r"^(?:no\b[^.:\n]{1,100}\b(?:found|exists?)\b|(?:could not|cannot|can't|unable to) find\b"
    r"|[^.:\n]{1,80} not found\b)",
    re.IGNORECASE,
)

_REJECTED_SHOWN = "not run (the user rejected it)"

_MATCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "pgrep"})

_NOT_RUN_SHOWN = "not run (a parallel call failed first)"

_BACKGROUND = re.compile(r"\A\s*Command running in background with ID: ([\w-]{1,40})\.")


def background(text: str) -> str | None:
    """What a result that only says its command went on in the background says (Claude Code's), else ``None``."""
    started = _BACKGROUND.match(text[:200])
    return None if started is None else f"running in the background (ID {started.group(1)})"


def _matched_nothing(call: ToolCall, result: Message) -> bool:
    """A search command (the last stage of its pipeline is grep, rg, pgrep...) that exited 1 with no output."""
    command = shell_command(call)
    if command is None or len(result.text) > 200:
        return False
    lines = [ln for ln in result.text.splitlines() if any(ch.isalnum() for ch in ln) and not WRAPPER.match(ln)]
    status = EXIT_STATUS.fullmatch(lines[0].strip()) if len(lines) == 1 else None  # echoed separators ("---") aside
    if status is None or status.group(1) != "1":
        return False
    plain = unquoted(command, lambda _quoted: '""')  # a "|" inside a pattern ("a|b") separates nothing
    # the exit status of a command line is its last command's
    words = [word for word in COMMAND_SEPARATOR.split(plain)[-1].split() if "=" not in word]
    if words[:1] == ["git"]:  # git [-C dir] grep ... / git config <key>: 1 is "no match" / "no such key"
        rest = words[1:]
        while rest[:1] in (["-C"], ["-c"]) and len(rest) > 1:
            rest = rest[2:]
        return rest[:1] == ["grep"] or (rest[:1] == ["config"] and not any(w.startswith("--list") for w in rest))
    return bool(words) and words[0].rsplit("/", 1)[-1] in _MATCHERS


def call_failure(
    call: ToolCall | None, result: Message, failure: Callable[[Message], str | None] = failure_line
) -> str | None:
    """The failure line of ``call``'s ``result``: ``failure(result)``, with the call weighed in.

    Not a search that matched nothing, nor a file read the harness marked as no error (:func:`_read_as_data`).
    """
    failed = failure(result)
    if failed is not None and call is not None and (_matched_nothing(call, result) or _read_as_data(call, result)):
        return None
    return failed if failed is not None or call is None else _not_found(call, result)


def _read_as_data(call: ToolCall, result: Message) -> bool:
    """A file read (``cat``, ``sed -n``, Read) whose result the harness marked as no error.

    A traceback or an ``ERROR:`` line in it is the file's text (a test's expected output), not a failure of the read.
    """
    metadata = result.metadata if isinstance(result.metadata, Mapping) else {}
    return metadata.get("is_error") is False and is_file_read(call)


def _not_found(call: ToolCall, result: Message) -> str | None:
    """A call (not a command, a file operation or a search) answered only "No trip recommendation found with ID 11".

    An action or a lookup that finds nothing to act on failed; a search that finds nothing did not (it answered).
    """
    text = result.text.strip()
    if len(text) > 200 or "\n" in text or not _NOT_FOUND.match(text) or is_search(call) or call_kind(call) != "call":
        return None
    return text


def _json_said(body: object) -> str | None:
    """What a JSON result says beside its fields (items of their own): how many results a list holds, or none."""
    if isinstance(body, list):
        return f"{len(body)} result{'s' if len(body) != 1 else ''}" if body else "no results"
    return None if body else "empty"


# -- outcome ----------------------------------------------------------------------------------------------------
_SUMMARY_LINE = re.compile(
    r"\b\d[\d,.]*\s?(?:passed|failed|errors?|tests?|skipped|ms|s|seconds?|rows?|items?|files?|%)\b"
    r"|\b(?:done|success(?:ful(?:ly)?)?|succeeded|completed?|created|wrote|updated|saved|ok)\b",
    re.IGNORECASE,
)


_SHORT_RESULT = 360
"""A result this short (wrapper lines aside) is its own outcome: "ok: gitdir: /path", "ok: Match: True"."""


def outcome(
    result: Message | None, failure: Callable[[Message], str | None] = failure_line, call: ToolCall | None = None
) -> tuple[str, str | None]:
    """A short outcome of ``call``'s result, and its failure line.

    ``FAILED: <failure line>``; for a short result, ``ok:`` and the result itself (its lines joined); otherwise
    ``ok:`` and its header and summary line (counts, timings, "done") or its last line; ``ok`` for an empty result
    or a JSON body (its record's fields are items of their own: :mod:`~ctxbudget.compaction._json_fields`);
    ``ok: no match`` for a search command that exited 1 with no output; ``not run`` when a harness cancelled the
    call. ``failure`` reads the failure line
    (:func:`failure_line`, or a caller's remembered one).
    """
    if result is None:
        return "no result", None
    if not_run(result):
        return _NOT_RUN_SHOWN, None
    if rejected(result):
        return _REJECTED_SHOWN, None
    failed = failure(result)
    if failed is not None and call is not None and _matched_nothing(call, result):
        return "ok: no match (exit code 1)", None
    if failed is not None and call is not None and _read_as_data(call, result):
        failed = None
    if failed is None and call is not None:
        failed = _not_found(call, result)
    if failed is not None:
        return f"FAILED: {clip(failed, 200)}", failed
    said = background(result.text) or _success(result.text)  # where a background command's output goes: the harness's
    return f"ok: {said}" if said else "ok", None


def _success(text: str) -> str | None:
    """What a successful result says in a line: all of a short one, else its header and its summary line."""
    first, last = edge_lines(text)
    if not first:
        return None
    persisted = persisted_output(text)
    if persisted is not None:
        return persisted[0]  # "output (20.5KB) saved to /path": where the whole output is
    body = json_body(text[: SCAN_CHARS - 1]) if text.lstrip()[:1] in ("{", "[") else None
    if body is not None:
        return _json_said(body)
    short = bounded(text) if len(text) <= _SHORT_RESULT * 2 else ""
    lines = [content(ln).strip() for ln in short.splitlines() if ln.strip() and not carried(ln)]
    lines = [ln for ln in lines if ln]
    if lines and sum(len(ln) + 3 for ln in lines) <= _SHORT_RESULT:
        return " | ".join(lines)
    summary = next((line for line in reversed(last) if _SUMMARY_LINE.search(line) and len(line) < 200), last[-1])
    head = first[0].strip()
    if head != summary.strip() and len(head) < 160:  # a header says what the output is: "[File: a.py (372 lines)]"
        return f"{clip(head, 120)} … {clip(summary.strip(), 120)}"
    return clip(summary.strip(), 160)
