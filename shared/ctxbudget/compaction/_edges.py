"""An output's first and last lines, without what a harness or a tool carries along with them.

How a call ended shows at its output's edges (an exit code, an error line, a summary line), read from its two ends,
never the whole. A harness's wrapper lines (``<returncode>0</returncode>``, ``<output>``), SWE-agent's shell prompt
after the output (``(Open file: n/a)``, ``(Current directory: /repo)``, ``bash-$``) and its EnIGMA end marker
(``///PROCESS-DONE:0:PROCESS-DONE///``), curl's progress meter (which ``2>&1`` adds to a request's output) and a
test runner's progress and session header lines (pytest's ``test/rules/yaml_test.py ...... [ 34%]``, ``rootdir:
/testbed``) are carried with the output, not part of it: its summary line says how the run went.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from .textscan import MAX_RUN, bounded_line

__all__ = ["EDGE_LINES", "HEADED_ERROR", "WRAPPER", "carried", "content", "edge_lines", "json_error"]

EDGE_LINES = 6
"""Lines read at each end of an output."""
WRAPPER = re.compile(r"^\s*</?(?:returncode|output|stdout|stderr|tool_use_error)>\d*(?:</returncode>)?\s*$")
HEADED_ERROR = re.compile(r"^[A-Za-z][\w.-]{0,40}(?: [\w.-]{1,40}){0,4} error: \S")
"""A tool's error under a heading of its own kind (Sphinx's "Sphinx version error:" over the line that says what), read
as one line: ``Sphinx version error: This project needs the extension ... at least in version 0.6``."""
_JSON_ERROR = re.compile(r'"errors?"\s*:\s*(?:\[\s*)?\{.{0,400}?"message"\s*:\s*"((?:[^"\\]|\\.){1,200})"')
"""A JSON error body on a line of output (GraphQL's, an API's): ``{"errors":[{"path":[...],"message":"..."}]}``."""


def json_error(text: str) -> str | None:
    """The message of a JSON error body on a line of ``text``'s head (``Field 'body' doesn't accept argument ...``)."""
    head = text[:2_000]
    found = _JSON_ERROR.search(head) if '"message"' in head else None
    if found is None:
        return None
    try:
        said = json.loads(f'"{found.group(1)}"')
    except ValueError:
        return None
    return said if isinstance(said, str) and said.strip() else None


_HEADING = re.compile(r"^[A-Za-z][\w.-]{0,40}(?: [\w.-]{1,40}){0,4} error:\s*$")
_PROMPT = re.compile(r"^\((?:Open file|Current directory): [^\n]{0,400}\)\s*$|^bash-\$\s*$")
"""SWE-agent's shell prompt after a command's output (the open file, the directory, ``bash-$``)."""
_PROCESS_DONE = re.compile(r"///PROCESS-DONE:-?\d{1,4}:PROCESS-DONE///")
_METER = re.compile(
    r"^\s*(?:% Total +% Received|Dload +Upload|\d{1,3} +\S+ +\d{1,3} +\S+ +\d{1,3} +\S+ +\S+ +\S+ +[-\d]{2}:[-\d]{2}:)"
)
"""A line of curl's progress meter (its header, and a row of it: ``100  1234  100  1234  0  0  8000  0 --:--:-- ...``),
which a command's ``2>&1`` adds to its output: not what the command returned."""

_TEST_PROGRESS = re.compile(r"^\s*(?:[\w./-]{1,300}\.py(?:::[\w\[\]-]+)?\s+)?[.FEsxXP]+\s*\[\s*\d{1,3}%\]\s*$")
"""A test runner's progress line: pytest's dots (``........ [ 44%]``), maybe after the file they are the tests of."""
_TEST_HEADER = re.compile(
    r"^(?:=+ test session starts =+|platform \w+ -- Python \S+|rootdir: |cachedir: |plugins: |Python \d\S* on \w+$)"
)
"""pytest's session header (``=== test session starts ===``, ``platform linux -- Python 3.9.20, pytest-5.4.1``,
``rootdir: /testbed``, ``cachedir:``, ``plugins:``): the same for every run, and no part of what it found."""


def edge_lines(text: str) -> tuple[list[str], list[str]]:
    """The first and last few non-blank lines of ``text`` (read from its two ends, never the whole).

    A harness's wrapper lines (``<returncode>0</returncode>``, ``<output>``) are left out; a short output's lines
    are in both lists. Each end is ``bounded`` (:func:`~ctxbudget.compaction.textscan.bounded`) line by line, and only
    as far as the lines kept: bounding a text longer than a run is the same on each of its lines.
    """
    head = text[:4_000]
    if len(head) <= MAX_RUN:  # the whole text, which bounded() leaves as it is
        lines = [content(line) for line in head.splitlines() if line.strip() and not carried(line)]
        lines = _headed([line for line in lines if line.strip()])
        return lines[:EDGE_LINES], lines[-EDGE_LINES:]
    first = _headed(_kept_lines(head.splitlines()))
    last = _kept_lines(reversed(text[-4_000:].splitlines()))
    last.reverse()
    return first, _headed(last)


def _headed(lines: list[str]) -> list[str]:
    """``lines``, an error heading (``Sphinx version error:``) joined with the line under it (:data:`HEADED_ERROR`)."""
    if not any(line.rstrip().endswith(":") and _HEADING.match(line) for line in lines[:-1]):
        return lines
    out: list[str] = []
    skip = False
    for at, line in enumerate(lines):
        if skip:
            skip = False
        elif at + 1 < len(lines) and _HEADING.match(line):
            out.append(f"{line.strip()} {lines[at + 1].strip()}")
            skip = True
        else:
            out.append(line)
    return out


def carried(line: str) -> bool:
    """``line`` is carried with a result but is not its content: a harness's wrapper tag or prompt, a progress line."""
    return (
        ("<" in line and WRAPPER.match(line) is not None)
        or ("%]" in line and _TEST_PROGRESS.match(line) is not None)
        or (line[:1] in "=prcP" and _TEST_HEADER.match(line) is not None)
        or ("  " in line and _METER.match(line) is not None)
        or (line[:1] in "(b" and _PROMPT.match(line) is not None)
    )


def content(line: str) -> str:
    """``line`` without the end marker SWE-agent's EnIGMA appends to a command's output."""
    return _PROCESS_DONE.sub("", line) if "PROCESS-DONE" in line else line


def _kept_lines(lines: Iterable[str]) -> list[str]:
    """The first :data:`EDGE_LINES` of ``lines`` (bounded) that are neither blank nor a harness's wrapper line."""
    kept: list[str] = []
    for raw in lines:
        if not raw.strip():
            continue  # a blank line is blank bounded
        line = content(bounded_line(raw))
        if line.strip() and not carried(line):
            kept.append(line)
            if len(kept) == EDGE_LINES:
                break
    return kept
