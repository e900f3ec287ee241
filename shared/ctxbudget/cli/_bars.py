"""The progress bars of ``ctxbudget inspect`` and ``ctxbudget compact``: one rich bar per step, on stderr.

Bars are drawn when stderr is a terminal, or when ``--progress`` forces them (then even into a pipe or a file, as a
terminal would see them); ``--no-progress`` turns them off. They never go to stdout, so ``inspect --json`` output
stays clean. Each step (see :mod:`ctxbudget.cli._progress`) shows its counts: ``reading 72.9/72.9 MB``, ``counting
51,001 messages`` (messages streamed into the session, with the compactions so far), then the final compaction's
``clearing 312/1,275 tool outputs`` and ``summarizing 4,021/5,100 messages``, with the time spent and a live note.

This module imports rich at the top: the CLI imports it only when it draws bars.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Column
from rich.text import Text

from ._progress import Progress as ProgressSink
from ._progress import no_progress

__all__ = ["StepBars", "step_bars", "wanted"]

_UNITS = {"reading": "MB", "clearing": "tool outputs"}
"""The unit each step counts in; the others count messages."""


def wanted(forced: bool | None) -> bool:
    """Whether to draw bars: ``--progress`` (True) or ``--no-progress`` (False), else when stderr is a terminal."""
    if forced is not None:
        return forced
    return sys.stderr.isatty()


class _CountColumn(ProgressColumn):
    """``12,000/51,000 messages`` (``51,001 messages`` while the total is unknown; megabytes for ``reading``)."""

    def render(self, task: Task) -> Text:
        unit = task.fields.get("unit", "messages")
        done = _amount(task.completed, unit)
        if task.total is None:
            return Text(f"{done} {unit}")
        return Text(f"{done}/{_amount(task.total, unit)} {unit}")


def _amount(value: float, unit: str) -> str:
    if unit == "MB":
        return f"{value / 1_000_000:,.1f}"
    return f"{int(value):,}"


class StepBars:
    """A :class:`~ctxbudget.cli._analysis.Progress` drawing one bar per step on a rich ``Progress``."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._tasks: dict[str, TaskID] = {}

    def __call__(self, step: str, completed: int, total: int | None, detail: str = "") -> None:
        """Add the step's bar on first sight, then move it to ``completed`` of ``total``."""
        task = self._tasks.get(step)
        if task is None:
            unit = _UNITS.get(step, "messages")
            self._tasks[step] = self._progress.add_task(
                step, total=total, completed=completed, detail=detail, unit=unit
            )
            return
        self._progress.update(task, total=total, completed=completed, detail=detail)


@contextmanager
def step_bars(forced: bool | None) -> Iterator[ProgressSink]:
    """Bars on stderr while the block runs (see :func:`wanted`), else a progress that reports nowhere."""
    if not wanted(forced):
        yield no_progress
        return
    console = Console(stderr=True, highlight=False, force_terminal=True if forced else None)
    detail = Column(no_wrap=True, overflow="ellipsis", max_width=max(8, console.width - 68))  # the rest: 68 columns
    columns = (
        TextColumn("{task.description:<11}"),
        BarColumn(bar_width=16),
        _CountColumn(table_column=Column(no_wrap=True, min_width=26)),
        TimeElapsedColumn(),
        TextColumn("[dim]{task.fields[detail]}[/]", table_column=detail),
    )
    with Progress(*columns, console=console) as progress:
        yield StepBars(progress)
