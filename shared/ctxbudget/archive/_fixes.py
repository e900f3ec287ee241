"""Which calls fixed a failure: the calls between a failed call and its re-run that got past the failure.

An agent whose command fails (``python test.py`` -> ``ModuleNotFoundError: No module named 'sqlparse'``) does
something about it (``pip install sqlparse``) and runs the command again; when the re-run no longer shows the
failure, what it did in between fixed it. A question about that fix ("what was installed to fix django.setup")
names the failure, not the fix: the fix shares no word with it. :class:`Fixes` records the link as calls are
archived, so a search that asks about a fix can credit the calls that fixed a failure with the failure's match.

* A **failure** is a call whose output reports one at its edges (:func:`failure_signature`: ``Error: ...`` first,
  a traceback's exception last); its signature is that line.
* Its **re-run** is the next call of the same tool whose argument words overlap the failed call's this much
  (:data:`~ctxbudget.archive._units.RETRY_OVERLAP`), at most :data:`MAX_FIX_CALLS` calls later.
* When the re-run's result does not repeat the signature, the calls in between that did not fail themselves are
  the **fix**. When it does, the re-run is the failure waiting for a fix.

Calls are taken in the order their calls are archived (compaction archives a span oldest first). Each step costs
the failures still waiting (at most the last :data:`MAX_FIX_CALLS` + 1 calls), not the archive.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..messages.toolpairs import not_run
from ._text import failed

if TYPE_CHECKING:
    from .entry import ArchiveEntry

__all__ = ["MAX_FIX_CALLS", "Fixes", "failure_signature", "overlap"]

MAX_FIX_CALLS = 3
"""Most calls between a failure and its re-run that are read as its fix (more: what fixed it is not clear)."""
EDGE_LINES = 3
"""Lines at each edge of a call's output read for its outcome."""
EDGE_CHARS = 2_000
"""Characters at each edge of a call's output searched for those lines."""


def failure_signature(text: str) -> str | None:
    """The last of the first and last :data:`EDGE_LINES` lines of ``text`` that reports a failure, stripped.

    ``None`` when none does. A call's outcome is reported at the edges of its output (``Error: ...``, ``Exit code
    1`` first; a traceback's exception last); a failure word inside it (a file's ``return fmt.Errorf(...)``, a
    log line) is content, not the call failing.
    """
    head = _edge(text[:EDGE_CHARS].split("\n"))
    tail = _edge(reversed(text[-EDGE_CHARS:].split("\n")))[::-1]
    if len(text) <= EDGE_CHARS:  # one piece: its edges may overlap
        lines = [line.strip() for line in text.split("\n") if line.strip()]
        head, tail = lines[:EDGE_LINES], lines[max(EDGE_LINES, len(lines) - EDGE_LINES) :]
    failing = [line for line in (*head, *tail) if failed(line)]
    return failing[-1] if failing else None


def _edge(lines: Iterable[str]) -> list[str]:
    """The first :data:`EDGE_LINES` non-blank ``lines``, stripped."""
    return list(itertools.islice((line.strip() for line in lines if line.strip()), EDGE_LINES))


class Fixes:
    """Failed calls, their re-runs, and the calls in between that fixed them (units by id; see the module).

    Args:
        overlap: the share of terms two calls must share (shared over all) for one to re-run the other.
    """

    def __init__(self, overlap: float) -> None:
        self._overlap = overlap
        self._order: dict[int, int] = {}  # unit -> position of its call among the calls archived
        self._calls: list[int] = []  # units by the position of their call
        self._waiting: dict[int, tuple[str, frozenset[str], str]] = {}  # failed unit -> tool, words, signature
        self._failed: set[int] = set()
        self._settled: set[int] = set()
        self.fixed_by: dict[int, list[int]] = {}
        """A failed call's unit -> the units of the calls that fixed it."""

    def called(self, unit: int) -> None:
        """``unit``'s call is archived (the first time): it takes the next position."""
        if unit not in self._order:
            self._order[unit] = len(self._calls)
            self._calls.append(unit)

    def settle(self, unit: int, tool: str, words: frozenset[str], result: ArchiveEntry) -> None:
        """``unit`` holds its call (of ``tool``, with terms ``words``) and ``result``: link the fix it ends, if any.

        If it failed, it waits for its own re-run.
        """
        if unit in self._settled or unit not in self._order:
            return
        self._settled.add(unit)
        if result.message is not None and not_run(result.message):
            return  # it never ran: neither a failure nor a re-run
        position = self._order[unit]
        output = result.full_text
        rerun = max(
            (
                (self._order[earlier], earlier)
                for earlier, (name, said, _) in self._waiting.items()
                if tool == name
                and 0 < position - self._order[earlier] <= MAX_FIX_CALLS + 1
                and overlap(said, words) >= self._overlap
            ),
            default=None,
        )
        if rerun is not None:
            earlier = rerun[1]
            if self._waiting.pop(earlier)[2] not in output:
                between = [u for u in self._calls[rerun[0] + 1 : position] if u not in self._failed]
                if between:
                    self.fixed_by[earlier] = between
        if (signature := failure_signature(output)) is not None:
            self._failed.add(unit)
            self._waiting[unit] = (tool, words, signature)
        for earlier in [u for u in self._waiting if self._order[u] < position - MAX_FIX_CALLS - 1]:
            del self._waiting[earlier]


def overlap(one: frozenset[str], other: frozenset[str]) -> float:
    """The share of two calls' argument terms they have in common (shared over all): how one re-runs the other."""
    return len(one & other) / len(one | other) if one or other else 0.0
