"""What a tool output holds that a summary should keep: paths it wrote, its result line, figures, record fields.

Read from an output's structure, in time linear in its length:

* a JSON body: the fields that name, count or price something (:mod:`~ctxbudget.compaction._json_fields`),
  each an item the ledger shows in its call's bullet (or in one line when the call is not known);
* otherwise the lines the regex engine finds: a path on a line that says it was written (``wrote``, ``created``,
  ``modified`` ...) or on a result line, the summary line at the end (``3 failed, 40 passed in 2.1s``), and figures
  (a number with its unit) in outputs that report something;
* in a short listing (search results, ``ls``), the paths themselves: they are the answer;
* a verbose test run's line per test is one figure of the run (:mod:`~ctxbudget.compaction._test_runs`), and a
  unified diff's header names a file as ``modified``.

What a *file read* shows is the file's content: values in it (``PROD_DSN = db-prod-1:5432``) are not current facts,
so a read yields only the paths it reports as written and a log's measurements; a source or configuration file's
lines of code yield none (``bytes := make([]byte, 6) // 6 bytes``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from ._edges import carried
from ._figure_lines import FIGURE_WORDS, figure_lines
from ._json_fields import fields_line, record_fields
from ._prose import is_prose
from ._test_runs import own_tests, run_lines, run_tally
from .outcomes import SCAN_CHARS
from .textscan import MAX_HITS, clip, may_occur, word_lines

__all__ = ["OutputItem", "output_items"]

MAX_ITEMS = 12
"""Most items one output yields (the most informative first)."""
_SHORT_OUTPUT_LINES = 40
MAX_LISTED = 8
"""A listing with more paths than this names none of them (search finds them; the command names the listing)."""
_MAX_HITS = MAX_HITS
"""Lines one pattern may find in one output (the items kept are the best of these, at most MAX_ITEMS)."""
_WRITE = re.compile(
    r"\b(?:wrote|written|writing|created|creating|modified|updated|edited|changed|deleted|removed|renamed|moved|"
    r"added|patched|saved|generated|applied)\b",
    re.IGNORECASE,
)
_PATH = re.compile(
    # Where a run starts and its first "." or "/" (a Windows path's backslash, or its drive: D:\) comes before any
    # other joiner (every path's does): a word is given up at its end, without trying both forms of a path inside it.
    r"(?<![\w/.-])(?!(?<=\*)[_-])(?=~?[\w-]*[./\\]|[A-Za-z]:[\\/])"  # not a glob's tail: ``*_test.go``
    r"(?:(?:[A-Za-z]:[\\/]|~?/|\.[/\\])?(?:[\w.-]{1,80}[/\\]){1,12}[\w.-]{0,80}\w\.[A-Za-z]\w{0,7}\b"
    r"(?:[/\\][\w.-]{1,80}){0,12}"  # on past a dotted directory: ``Sourcetree.app/Contents/MacOS/Sourcetree``
    r"|[\w-]{1,80}\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|kt|rb|php|cs|c|h|cc|cpp|hpp|md|rst|json|ya?ml|"
    r"toml|cfg|ini|txt|csv|sql|sh|html|css|lock|env|ipynb|proto|tf|xml)\b)"
    r"(?!-[A-Za-z])"  # "pyproject.toml-based" names no file
)
_HIT = re.compile(r"^\s*(?:[A-Za-z]:[\\/])?[^\s:]{1,300}[:-]\d+[:-]")
"""A search hit: ``path:line:`` (or ``path-line-`` for context lines) before the matched text; a Windows path's
drive (``D:\\src\\a.go:12:``) is part of its path."""
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_REFERENCE = re.compile(r"\.\w{1,8}(?::\d+|::)")
_WRITE_WORDS = (
    "wrote", "written", "writing", "created", "creating", "modified", "updated", "edited", "changed", "deleted",
    "removed", "renamed", "moved", "added", "patched", "saved", "generated", "applied",
)  # fmt: skip
_OUTCOME_WORDS = (
    "failed", "failure", "error", "passed", "succeeded", "success", "conflict", "missing", "skipped", "unchanged",
    "not found", "timed out", "rejected", "reverted",
)  # fmt: skip
"""Words of a result line: a path on such a line is an artifact with its outcome ("failed to import a.py: ...")."""
_WORDS = tuple(dict.fromkeys(_WRITE_WORDS + _OUTCOME_WORDS + FIGURE_WORDS))
_RESULT_WORDS = re.compile(r"\b(?:failed|error|passed|ok|success|succeeded|missing|conflict|not found|skipped)\b", re.I)
_RECORD = re.compile(r"^\s*[\"']?([A-Za-z][\w .-]{0,40}?)[\"']?\s*[:=]\s*[\"']?([^\"'{}\[\]]{1,100}?)[\"']?,?\s*$")
_ERROR_LINE = re.compile(r"^\s*(?:[\w-]{1,20} )?(?:error|fatal)\b", re.IGNORECASE)
"""A line an output reports its failure with (``Error: Command failed: npx tsx src/index.ts``, ``npm error ...``)."""
_MISSING = re.compile(r"no such file|cannot access|not found|does not exist", re.IGNORECASE)
_CODE_OR_LISTING = re.compile(r"^\s*(?:#|//|/\*|--\s|;)|^total \d+$")
"""A comment line of a script or config, or ``ls -l``'s block count: not a figure of the work (nor is a line a
harness or a test runner carries along, :func:`~ctxbudget.compaction._edges.carried`)."""
_GIT_STATUS = re.compile(
    r"^\s*(new file|modified|deleted|renamed|copied|typechange):\s+(\S{1,300}?)( -> \S{1,300})?\s*$"
)
"""A line of ``git status``: what happened to a path (``renamed:    pkg/a.go -> a.go``)."""
_DIFF_HEADER = re.compile(r"^diff --git a/\S+ b/(\S{1,300})$", re.MULTILINE)
"""A unified diff's header line (``diff --git a/src/x.py b/src/x.py``): the file it changes is its ``b/`` path."""
_NUMBERS = re.compile(r"\d+(?:[.,:]\d+)*")
"""The numbers of a line, which a series of lines like it changes (``0.137 total``, ``0.135 total``)."""
_DIFF_BODY = re.compile(r"^[+-](?![+-]{2} )")
"""A unified diff's added or removed line (its ``+++``/``---`` headers name files, and are read as such)."""
_BULLET = re.compile(r"^[-*•]\s+")
_GUTTER = re.compile(r"^\s*\d+(?:→|\t)")
"""The line number a file viewer shows a line behind (Claude Code's ``    43→``, ``cat -n``'s tab)."""
_CODE = re.compile(r"[()\[\]{}=;]|//|->")
"""What a line of code or configuration holds and a sentence about the work does not."""
_FUNCTION_WORDS = frozenset({"at", "to", "in", "of", "for", "from", "on", "by", "with", "is", "are", "was", "the", "a"})
"""Words a field's name never ends with: a line ending so before its colon is a sentence going on."""
_FAILED_FIELDS = frozenset({"error", "errors", "exception", "fatal", "failure"})
"""A ``field: value`` line naming a failure is the output's outcome (the Errors section reads it), not a record."""


@dataclass(frozen=True)
class OutputItem:
    """One thing an output reports: ``artifact`` (a path, keyed by it), ``figure`` or a record's ``field``.

    A ``field`` (``"key": value``) is one field of the JSON record a known call returned: shown in the call's bullet.
    """

    kind: Literal["artifact", "figure", "field"]
    text: str
    key: str | None


def output_items(
    text: str,
    tool: str,
    *,
    file_read: bool = False,
    source: bool = False,
    document: bool = False,
    command: bool = False,
    search: bool = False,
    in_call: bool = False,
    install: bool = False,
) -> list[OutputItem]:
    """The items of one tool output (see the module docstring), most informative first, at most :data:`MAX_ITEMS`.

    A search yields the files its matches are in; a file read only the paths it says were written (the rest is the
    file's content); a command or another call the paths it wrote or reports an outcome for, its figures, and, for
    a short output, the paths it lists (and, for a lookup, its ``field: value`` lines). A JSON output is one item,
    its fields in a line (:func:`~ctxbudget.compaction._json_fields.fields_line`), or, ``in_call`` (its call is
    known), one item per field (``"key": value``), which the ledger shows in the call's bullet. A read of a ``source``
    or configuration file reports a figure only from a line of prose, not of code (``bytes := make([]byte, 6)``); of a
    ``document`` (``STATE.md``), no path it says was written or updated.
    An ``install`` command's output (``pip install``: ``Downloading pytest-9.0.3-py3-none-any.whl (375 kB)``) is the
    installer's progress: it reports nothing of the work (the call's outcome says whether it installed, and a
    failure is read as one).
    """
    if install:
        return []
    head = text[:SCAN_CHARS]  # read by find() and bounded patterns; what regexes scan at length is bounded() below
    records = _json_records(head, tool, in_call=in_call)
    if records is not None:
        return [] if file_read else records
    lower = head.lower()  # lower-cased once for every word scan below, which skip the words known absent
    present = may_occur(lower, _WORDS) if len(lower) == len(head) else None
    found = _Found()
    diff = "\n@@ -" in head or head.startswith("@@ -")  # a diff's + and - lines are the files' text, not events
    _add_written(found, head, lower, present, search=search, diff=diff, source=source, document=document)
    if not search and "diff --git " in head:
        _add_diffed(found, head)
    short = head.count("\n") < _SHORT_OUTPUT_LINES
    if search:
        found.listing(_first_paths(head[:20_000]), f"found by {tool}", weight=2)
    if search or file_read:
        _add_file_lines(found, head, (lower, present), tool, search=search, source=source)
        return found.best()
    for position, line in word_lines(head, _OUTCOME_WORDS, lower, present):
        path = _PATH.search(line)
        # "Error: ENOENT: ... open 'a.md'", "npm error ...": the command's failure (its Errors bullet), no file's news
        failed = _ERROR_LINE.match(line) is not None
        if path and not failed and not _REFERENCE.search(line) and not (diff and _DIFF_BODY.match(line)):
            found.add(2, position, OutputItem("artifact", clip(line.strip(), 240), path.group(0).lower()))
    figures = _add_figures(found, head, (lower, present), tool)
    if short:
        listed = _listed(head)
        if len(listed) <= MAX_LISTED:
            found.listing(listed, f"listed by {tool}", weight=1)
        if not command:
            read = {position for position, _ in figures}  # a figure's line is not read again as a record
            for position, line in _record_lines(head):
                if position not in read:
                    found.add(1, position, OutputItem("figure", f"{tool}: {line}", None))
    return found.best()


def _add_file_lines(
    found: _Found,
    head: str,
    read: tuple[str, frozenset[str] | None],
    tool: str,
    *,
    search: bool = False,
    source: bool = False,
) -> None:
    """The items of a file read or a search: its measurements and prose outcome lines, nothing of its values."""
    # What a file holds is the file's: its assignments (PROD_DSN = ...) are not current facts. A measurement it
    # reports (a log's "p95 latency: 212 ms") is a figure of that read, and a prose line saying what happened to
    # a path (a log's "failed to import a/b.py: circular import") an outcome; code and search hits are neither.
    lower, present = read  # the lower-cased head, and the words that may occur in it
    for position, line in word_lines(head, _OUTCOME_WORDS, lower, present):
        path = _PATH.search(line)
        if path and _prose(line, path.start()) and not _REFERENCE.search(line) and not (search and _HIT.match(line)):
            found.add(3, position, OutputItem("artifact", clip(line.strip(), 240), path.group(0).lower()))
    for position, shown in figure_lines(head, lower, present):
        line = shown if search else _GUTTER.sub("", shown)  # Claude Code's Read and ``cat -n`` number their lines
        if source and (_CODE.search(line) or not is_prose(line)):
            continue  # the code or configuration itself: "bytes := make([]byte, 6) // 6 bytes", "printf '%02X' $c"
        if (search and _HIT.match(line)) or _CODE_OR_LISTING.match(line) or carried(line):
            continue  # a hit's or a script's figure is the file's ("a.py:12: TIMEOUT = 30 s", "# $1 is the remote")
        line = _BULLET.sub("", line.strip(), count=1)  # a list's "- ": the figure's bullet is the summary's own
        if line.startswith("|"):
            continue  # a table's row says what its values are in a header it does not hold
        found.add(1, position, OutputItem("figure", f"{tool}: {clip(line, 180)}", None))


def _listed(head: str) -> list[str]:
    """The paths a short output lists (at most :data:`MAX_LISTED` + 1), not those it says are missing.

    A diff's ``a/`` and ``b/`` prefixes are not part of its paths (``--- a/src/x.py``).
    """
    listed: dict[str, None] = {}
    if "Traceback (most recent call last)" in head:
        return []  # a traceback's paths are its frames: the failure is what it says
    diff = "\n+++ b/" in head or head.startswith("diff --git")
    for line in head.splitlines():
        if _MISSING.search(line) or (diff and _DIFF_BODY.match(line)):
            continue  # "ls: gc.log: No such file or directory" lists no file; a diff's +/- lines are the file's text
        for match in _PATH.finditer(line):
            path = match.group(0)
            listed[path[2:] if diff and path.startswith(("a/", "b/")) else path] = None
            if len(listed) > MAX_LISTED:
                return list(listed)
    return list(listed)


def _prose(line: str, path_at: int) -> bool:
    """``line`` reads as a sentence about the path at ``path_at``, not as code or a search hit (``a.py:12: ...``)."""
    before = line[:path_at]
    return line[:1].isalpha() and not any(map(before.__contains__, "(=\"'#{["))


def _add_figures(found: _Found, head: str, read: tuple[str, frozenset[str] | None], tool: str) -> list[tuple[int, str]]:
    """The figure lines of a command's or a call's output (returned); a verbose test run's lines are one figure."""
    figures = figure_lines(head, *read)
    tests, each_test = run_lines(head)
    others = [
        (p, line) for p, line in figures if not (_CODE_OR_LISTING.match(line) or carried(line)) and p not in each_test
    ]
    if tests and (any(status == "failed" for _, (status, _, _) in tests) or (not others and own_tests(tests))):
        # One line per test (go test -v, pytest -v, unittest -v, a script's "Test 3 PASSED: ..."): one figure of a run
        # that failed, its failures named, or of a script's run that passed (a test runner's own summary line, "6
        # passed in 0.1s", is a figure as it stands).
        found.add(1, tests[0][0], OutputItem("figure", f"{tool}: {run_tally(tests)}", None))
    for position, line, alike in _series(others):
        shown = clip(line.strip(), 180) + (f" (last of {alike} lines like it)" if alike > 1 else "")
        found.add(1, position, OutputItem("figure", f"{tool}: {shown}", None))
    return figures


def _series(lines: list[tuple[int, str]]) -> list[tuple[int, str, int]]:
    """Figure lines that differ only in their numbers (a loop's ``time`` line run five times) as one each.

    Each series is its last line and how many lines it has; every other line stands as it is, in the order of each
    series' last line.
    """
    shapes: dict[str, list[tuple[int, str]]] = {}
    for position, line in lines:
        shapes.setdefault(_NUMBERS.sub("#", line.strip()), []).append((position, line))
    series = [(*alike[-1], len(alike)) for alike in shapes.values()]
    return sorted(series) if len(series) < len(lines) else [(p, line, 1) for p, line in lines]


def _add_diffed(found: _Found, head: str) -> None:
    """The files a unified diff in ``head`` changes (``git diff``, ``cat patch.txt``): each ``path: modified``."""
    for match in _DIFF_HEADER.finditer(head):
        path = match.group(1)
        found.add(3, match.start(), OutputItem("artifact", f"{path}: modified", path.lower()))


def _in_literal(line: str, start: int) -> bool:
    """The path at ``start`` is inside a string literal of code: a call's or an assignment's quoted text.

    ``fmt.Fprintln(w, "Local settings saved (.entire/settings.local.json)")`` says nothing was saved.
    """
    before = line[:start]
    opening = before.find('"')
    return before.count('"') % 2 == 1 and ("(" in before[:opening] or "=" in before[:opening])


def _add_written(
    found: _Found,
    head: str,
    lower: str,
    present: frozenset[str] | None,
    *,
    search: bool = False,
    diff: bool = False,
    source: bool = False,
    document: bool = False,
) -> None:
    """The lines of ``head`` saying a path was written (weighted above every other item); none of a ``document``'s.

    A search's hit lines (``a.go-303- // CreatedAt is when it was created``), a diff's added and removed lines
    (``+Logs are written to `.entire/logs/entire.log` ...``) and a source file's string literals are the files'
    text: not read.
    """
    if document:
        return
    for position, line in word_lines(head, _WRITE_WORDS, lower, present):
        if (search and _HIT.match(line)) or (diff and _DIFF_BODY.match(line)):
            continue
        path = _PATH.search(line)
        if path and source and _in_literal(line, path.start()):
            continue
        if path and not _REFERENCE.search(path.group(0) + line[path.end() : path.end() + 2]):
            status = _GIT_STATUS.match(line)  # "renamed:  a.go -> b.go": the file first, as every artifact bullet
            shown = f"{status.group(2)}: {status.group(1)}{status.group(3) or ''}" if status else line.strip()
            found.add(3, position, OutputItem("artifact", clip(shown, 240), path.group(0).lower()))


class _Found:
    """The items found in one output, each once (by key or text), with the weight and position that rank them."""

    def __init__(self) -> None:
        self.entries: list[tuple[int, int, OutputItem]] = []
        self.seen: set[str] = set()

    def add(self, weight: int, position: int, item: OutputItem) -> None:
        marker = item.key or item.text
        if marker not in self.seen and len(self.entries) < _MAX_HITS:
            self.seen.add(marker)
            self.entries.append((weight, position, item))

    def listing(self, paths: list[str], how: str, *, weight: int) -> None:
        for path in paths:
            self.add(weight, 0, OutputItem("artifact", f"{path} ({how})", path.lower()))

    def best(self) -> list[OutputItem]:
        ranked = sorted(self.entries, key=lambda entry: (-entry[0], entry[1]))
        return [item for _, _, item in ranked[:MAX_ITEMS]]


def _first_paths(text: str) -> list[str]:
    """The first :data:`MAX_LISTED` distinct paths ``text`` names (a search hit's line reference left out).

    The search stops there: a long listing is not matched to its end for the few paths it shows.
    """
    listed: dict[str, None] = {}
    for line in text.splitlines():
        hit = _HIT.match(line)  # a hit's path is before its line number: its text is the file's (``u.env.Pwd``)
        for match in _PATH.finditer(line[: hit.end()] if hit else line):
            listed[_ref_path(match.group(0))] = None
            if len(listed) >= MAX_LISTED:
                return list(listed)
    return list(listed)


def _ref_path(path: str) -> str:
    """A path without the line reference a search result gives it (``a.py:12`` is ``a.py``; a drive's colon stays)."""
    drive = 2 if _DRIVE.match(path) else 0
    if ":" in path[drive:] and "://" not in path:
        return path[: drive + path[drive:].index(":")]
    return path


def _record_lines(text: str) -> list[tuple[int, str]]:
    """``field: value`` lines of a short structured output whose value holds a digit (an id, amount or number)."""
    if text.count("\n") > 200:
        return []
    out = []
    position = 0
    for line in text.splitlines():
        match = _RECORD.match(line) if len(line) < 160 else None
        if (
            match
            and any(ch.isdigit() for ch in match.group(2))
            and match.group(1).strip().lower() not in _FAILED_FIELDS
            and _field_name(match.group(1))
        ):
            out.append((position, f"{match.group(1).strip()} = {match.group(2).strip()}"))
        position += len(line) + 1
    return out


def _field_name(field: str) -> bool:
    """``field`` names a field (``Booking ID``, ``total price``), not a sentence (``File created successfully at``)."""
    words = field.split()
    return len(words) <= 3 and words[-1].lower() not in _FUNCTION_WORDS


def _json_records(text: str, tool: str, *, in_call: bool) -> list[OutputItem] | None:
    """A JSON output's fields as one item (:func:`fields_line`), or one per field (``"key": value``) when ``in_call``.

    ``None`` when the output is not JSON.
    """
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[" or stripped[-1] not in "}]":
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    if in_call:
        return [OutputItem("field", field, None) for field in record_fields(data)[0]]
    line = fields_line(data)
    return [OutputItem("figure", f"{tool}: {line}", None)] if line else []
