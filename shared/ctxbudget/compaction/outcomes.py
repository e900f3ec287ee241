"""How a tool call ended, read from the result's structure (what a call *is*: :mod:`~ctxbudget.compaction.calls`).

An outcome comes from the result's structure, never from words inside file contents: an error flag in the metadata
(``is_error``, ``status``), a JSON body's ``status``/``error``/``success`` fields, an HTTP status line, a traceback's
final exception line (with the frame it was raised in), a leading ``Error:`` line, a non-zero exit code or a shell
error at the output's edges, a test summary with failures. So ``raise RuntimeError`` inside a file that was read is
not an error, and ``{"status": "error", "code": "PAYMENT_METHOD_INACTIVE"}`` is. Two results that look failed are
not: a call the harness never ran (Claude Code's "Sibling tool call errored"), and, weighed against its call
(:mod:`~ctxbudget.compaction.call_outcomes`), a search that matched nothing or a file read the harness marked ok.

Every scan is linear in the output: patterns are searched by the regex engine over the text (C speed), and Python
looks only at the few lines they find, at the output's first and last lines, and at the JSON body's top level.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..messages.message import Message
from ..messages.toolpairs import not_run
from ._edges import HEADED_ERROR, WRAPPER, edge_lines, json_error
from ._test_runs import failed_tests
from .textscan import bounded, clip

__all__ = ["EXIT_STATUS", "SCAN_CHARS", "failure_key", "failure_line", "json_body", "rejected"]

SCAN_CHARS = 400_000
"""Characters of an output whose structure is read (its head; the tail is read separately)."""
_TRACEBACK = "Traceback (most recent call last)"
_FRAME = re.compile(r'\s*File (?:"[^"\n]{1,500}", line (\d+)|[~/.\w][^\s:]{0,500}:(\d+))(, in .{1,200})?$')
_RAISED = re.compile(r"^(?!During handling|The above exception|Traceback)[A-Za-z_][\w.]*(?::\s.*|:?)$")
_LEADING_ERROR = re.compile(
    r"^\s*(?:error|fatal|panic|exception|failed|failure)(?:\[[\w-]+\])?\s*[:!]"
    r"|^\s*[\w.]+(?:Error|Exception)\b(?::|$| while )",  # pytest's "ImportError while loading conftest '...'"
    re.IGNORECASE,
)
_REPORTED_ERROR = re.compile(r"^(?:E {2,})?\W{0,3}(?:[A-Z]\d{3,4}\s+)?[\w.]*(?:Error|Exception):\s")
"""An exception reported on a line of its own; ``E   `` is pytest's gutter before the line that failed."""
_GUTTER = re.compile(r"^E {2,}")
EXIT_STATUS = re.compile(  # a status report ("Exit code 2", "exited with 1"), never a script's own "|| exit 1"
    r"\b(?:exited(?: with)?(?: code| status)?|exit(?: with)?(?: code| status)|exit with|return ?code|returncode|"
    r"exit_code|status code)\s*[:=>]?\s*([1-9]\d{0,2})\b",
    re.IGNORECASE,
)
_EXIT_WORDS = ("exit", "return", "status code")
"""What every match of :data:`EXIT_STATUS` holds (lower-cased)."""
_CLI_ERROR = re.compile(r"^\s*(?:ERROR|FATAL|fatal|error|Error|npm ERR!)(?:\[[\w-]+\])?:?\s+\S")
"""The error prefix of command-line tools (pip, git, gcc, cargo, npm): ``ERROR: No matching distribution``."""
_DIAGNOSTIC = re.compile(r"^\s*[\w./-]+\.\w{1,8}:\d+(?::\d+)?:\s*(?:error:\s*)?[A-Za-z]")
"""A compiler's or linter's diagnostic: ``strategy/manual_commit_test.go:755:53: not enough arguments in call``."""
_REJECTED = re.compile(
    r"^\s*(?:<tool_use_error>)?\s*(?:Error: )?The user doesn't want to (?:proceed with this tool use|take this action)"
)
"""Claude Code's result for a call the user rejected (its "STOP what you are doing and wait ..." was for the model
then, not an instruction that still stands): the call never ran."""
"""Commands whose exit status 1 means they ran and matched nothing (2 and above are their errors)."""
_WRAPPER_TAG = re.compile(r"</?(?:tool_use_error|error|stderr|stdout|output)>")
_HTTP = re.compile(
    r"^\s*(?:HTTP/\d(?:\.\d)?\s+)?([45]\d\d)\s+[A-Z][A-Za-z ]{2,40}$|^\s*HTTP/\d(?:\.\d)?\s+([45]\d\d)\b"
)
_HTTP_FIELD = re.compile(r"\b(?:status(?:_code)?|http(?: status)?)\s*[:=]\s*([45]\d\d)\b", re.IGNORECASE)
_TEST_FAIL = re.compile(
    r"\b([1-9]\d*) (?:failed|errors?)\b|^FAILED\b|^FAIL:|^ERROR:"
    r"|^\s*--- FAIL: |^FAIL\t",  # go test: a test's failure line, a package's ("FAIL\tentire.io/cli/x\t0.41s")
    re.IGNORECASE,
)
_ZERO_FAILED = re.compile(r"\b0 failed\b")
_EDGE_ERROR = re.compile(
    r"command not found|no such file or directory|permission denied|not recognized as|^\S+: no module named "
    r"|\btimed out after \d|^[^\s:]{1,200}: line \d{1,6}: \S",
    re.I,
)
"""A shell's or an interpreter's refusal (``python: No module named pytest``, bash's ``run.sh: line 16: X: unbound
variable``), or a harness's timeout (Claude Code's ``Command timed out after 2m 0s``, after its ``Exit code 143``)."""
_EDGE_ERROR_WORDS = (
    "command not found",
    "no such file or directory",
    "permission denied",
    "not recognized as",
    "no module named",
    "timed out after",
    ": line ",
)
_HTTP_WORDS = ("status", "http")
_TEST_FAIL_WORDS = ("fail", "error")
"""What every match of :data:`_EDGE_ERROR`, :data:`_HTTP_FIELD`, :data:`_TEST_FAIL` holds (lower-cased)."""
_FAILED_STATUS = frozenset({"error", "failed", "failure", "fail", "denied", "rejected", "invalid", "not_found"})
_MESSAGE_KEYS = ("code", "error_code", "message", "error", "detail", "reason", "msg", "description")


def _scalar(value: object) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


# -- failure ----------------------------------------------------------------------------------------------------
def _flagged(metadata: Mapping[str, Any]) -> bool:
    """The result's metadata marks it failed: ``is_error``/``status`` here or in the provider's own fields."""
    if metadata.get("status") == "error" or metadata.get("is_error") is True:
        return True
    provider = metadata.get("provider")
    if isinstance(provider, Mapping):
        for fields in provider.values():
            inner = fields.get("fields") if isinstance(fields, Mapping) else None
            if isinstance(inner, Mapping) and (inner.get("is_error") is True or inner.get("status") == "error"):
                return True
    return False


def rejected(result: Message) -> bool:
    """The result says the user rejected its call (Claude Code's "The user doesn't want to proceed ..."): not run."""
    return _REJECTED.match(result.text[:200]) is not None


def failure_key(message: Message) -> tuple[object, ...]:
    """What :func:`failure_line` of ``message`` depends on: its id, its text (hashed) and its error flags."""
    metadata = message.metadata if isinstance(message.metadata, Mapping) else {}
    text = message.text
    return ("failure", message.id, hash(text), len(text), _flagged(metadata))


def failure_line(message: Message) -> str | None:
    """The line that shows a tool result failed, or ``None`` when it did not (read from structure only)."""
    metadata = message.metadata if isinstance(message.metadata, Mapping) else {}
    flagged = _flagged(metadata)
    text = message.text
    if not_run(message) or rejected(message):
        return None
    head = text[:SCAN_CHARS]
    found = _json_failure(head) or _traceback_failure(head) or _edge_failure(text)
    if found is None and flagged:
        first, _ = edge_lines(text)
        found = " ".join(first[:2]) if first else "the tool reported an error"
    if found is None:
        return None
    if "<" in found:  # a harness's wrapper around the message (Claude Code's <tool_use_error>) is not its text
        found = _WRAPPER_TAG.sub("", found).strip() or found
    return clip(found, 240)


def _may_hold(line: str, words: tuple[str, ...]) -> bool:
    """``line`` may match a case-insensitive pattern that needs one of ``words`` (lower-case): a quick test first.

    An ASCII line matches only by ASCII letters, which ``lower()`` folds as the pattern does; any other line is
    left to the pattern (a few non-ASCII letters match ASCII ones without case: ``K`` for ``k``).
    """
    if not line.isascii():
        return True
    return any(map(line.lower().__contains__, words))


def _exit_status(line: str) -> re.Match[str] | None:
    return EXIT_STATUS.search(line) if _may_hold(line, _EXIT_WORDS) else None


def _edge_failure(text: str) -> str | None:
    """A failure shown at an output's edges, by its most informative line.

    A leading error line, a command-line tool's error line, an exit code (the error's own words before the bare
    code), an HTTP error status, a shell error, a failing test summary.
    """
    first, last = edge_lines(text)
    if not first:
        return None
    code_line = next((ln.strip() for ln in [*first[:3], *last[-3:]] if _exit_status(ln)), None)
    edges = [*first, *last]
    said_errors = (_CLI_ERROR, _REPORTED_ERROR, HEADED_ERROR)
    errors = [
        ln
        for ln in edges
        if any(p.match(ln) for p in said_errors) or (_may_hold(ln, _EDGE_ERROR_WORDS) and _EDGE_ERROR.search(ln))
    ] or [said for said in [code_line and json_error(text)] if said]  # '{"errors":[{"message":"..."}]}', exit 1
    if code_line is not None:  # a failed build or lint: its compiler's "file:line:col: message" lines say what failed
        errors = [ln for ln in edges if _DIAGNOSTIC.match(ln)] + errors  # the first and the last of them are named
    said = None
    if errors:
        distinct = list(dict.fromkeys(_GUTTER.sub("", line.strip()) for line in errors))
        said = distinct[0] if len(distinct) == 1 else f"{distinct[0]} … {distinct[-1]}"
    if _LEADING_ERROR.match(first[0]) and not _exit_status(first[0]):
        said = said if said and said != first[0].strip() and len(errors) > 1 else first[0].strip()
    if code_line is not None and said is None:  # a test run that exited 1: the tests that failed say why
        said = _failing_tests(first, last) or failed_tests(text[:SCAN_CHARS]) or _said_alone(text, code_line)
    if code_line is not None:
        return f"{said} ({code_line})" if said and said != code_line else code_line
    if said is not None:
        return said
    for line in first[:3]:
        if _HTTP.match(line) or (_may_hold(line, _HTTP_WORDS) and _HTTP_FIELD.search(line)):
            return line
    return _failing_tests(first, last)


_SAID_ALONE_CHARS = 400
_SAID_ALONE_LINES = 3


def _said_alone(text: str, code_line: str) -> str | None:
    """The first line of a short failed output beside its exit code: what the command said when it failed.

    Claude Code writes "Exit code 1" first and the command's stderr after it ("go: cannot run *_test.go files"): in
    a few lines, those words say why it failed, whatever tool wrote them.
    """
    if len(text) > _SAID_ALONE_CHARS:
        return None
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip() != code_line]
    lines = [ln for ln in lines if not WRAPPER.match(ln)]
    return lines[0] if 0 < len(lines) <= _SAID_ALONE_LINES else None


def _failing_tests(first: list[str], last: list[str]) -> str | None:
    """The first failing test line at an output's edges and the last (a run's summary, or the last test that failed).

    "Test 1 FAILED: ... … Test 5 FAILED: ...", "FAILED tests/a.py::t - KeyError … === 1 failed, 40 passed ===".
    """
    failing = list(
        dict.fromkeys(
            line.strip()
            for line in (*first, *last[-5:])
            if _may_hold(line, _TEST_FAIL_WORDS) and _TEST_FAIL.search(line) and not _ZERO_FAILED.search(line)
        )
    )
    if not failing:
        return None
    return failing[0] if len(failing) == 1 else f"{failing[0]} … {failing[-1]}"


def _traceback_failure(text: str) -> str | None:
    """A Python traceback's final exception line (with its message) and the frame it was raised in.

    The exception line is the first unindented ``Name`` or ``Name: message`` line after the last frame of the last
    traceback (chained tracebacks end with the one that propagated): ``ImproperlyConfigured: The SECRET_KEY setting
    must not be empty.`` as much as ``KeyError: 'user_id'``, and the first line of a message that runs on over
    several lines (``ImportError: You appear to be trying to import astropy ... Either run:``, not its ``or``).
    """
    start = text.rfind(_TRACEBACK, 0, SCAN_CHARS)
    if start < 0:
        return None
    piece = bounded(text[start : start + 40_000])
    lines = [line for line in piece.splitlines() if line.strip() and not WRAPPER.match(line)]
    at = max((i for i, line in enumerate(lines) if _FRAME.match(line)), default=None)
    frame = _FRAME.match(lines[at]) if at is not None else None  # 'File "a.py", line 3, in f' or IPython's a.py:3
    after = lines[at + 1 :] if at is not None else []
    last = next((line for line in after if not line[:1].isspace() and _RAISED.match(line)), None)
    if last is None:
        last = next((line for line in reversed(lines[1:]) if _RAISED.match(line)), lines[0])
    where = f" (at line {frame.group(1) or frame.group(2)}{frame.group(3) or ''})" if frame else ""
    return last.strip() + where


def _json_failure(text: str) -> str | None:
    """A JSON body whose ``status``, ``success``, ``ok`` or ``error`` field says it failed, shown by those fields."""
    body = json_body(text)
    if not isinstance(body, dict):
        return None
    status = body.get("status")
    failed = (
        (isinstance(status, str) and status.lower() in _FAILED_STATUS)
        or (isinstance(status, int) and not isinstance(status, bool) and status >= 400)
        or body.get("success") is False
        or body.get("ok") is False
        or bool(body.get("error"))
        or bool(body.get("errors"))
    )
    if not failed:
        return None
    parts = [f"status={status}"] if status is not None else []
    for key in _MESSAGE_KEYS:
        value = body.get(key)
        if _scalar(value) and str(value):
            parts.append(f"{key}={clip(str(value), 120)}")
        elif isinstance(value, dict):
            inner = [f"{k}={clip(str(v), 80)}" for k, v in value.items() if _scalar(v)][:3]
            parts.extend(f"{key}.{part}" for part in inner)
    return "JSON " + ", ".join(parts) if parts else "JSON body reports failure"


def json_body(text: str) -> Any:
    """The JSON value ``text`` holds whole (an object or a list, under :data:`SCAN_CHARS`), else ``None``."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[" or stripped[-1] not in "}]" or len(stripped) >= SCAN_CHARS:
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None
