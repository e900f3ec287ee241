"""What ``ctxbudget demo`` prints: a short progress bar, then two tables, each with a legend saying what it shows.

While the session runs, a rich bar on stderr counts the turns (when stderr is a terminal, or ``--progress``); when
stderr is not a terminal, a few plain lines say how far it is instead. Then, on stdout, the session by stage (its
turns cut into ten runs: model calls, tokens sent, the largest request, the window used, compactions, bounded tool
outputs) and the summary (totals and the invariants: no orphaned pair sent, no request rejected, every original
recoverable). ``--verbose`` adds one line per turn, explained by a header.

This module imports rich at the top: the CLI imports it only for the demo.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console, Group
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.progress_bar import ProgressBar
from rich.table import Column, Table

from ..compaction.policy import CompactionPolicy
from ._bars import wanted
from ._demo import DemoConfig, DemoResult, Stage, TurnReport

__all__ = ["TURN_HEADER", "print_turn", "stage_table", "summary_table", "turn_line", "turn_progress"]

_CHECKPOINTS = 10
"""Plain progress lines printed when stderr is not a terminal."""
_TIERS = {
    "bound": "oversized tool outputs cut to head + tail",
    "clear": "old tool results replaced by a marker keeping their key lines",
    "summarize": "older turns folded into the ledger summary",
    "summarize-skipped": "clearing sufficed; a summary would have cost more than it saved",
    "extractive": "the offline ledger, after the summarizer failed",
    "truncate": "the oldest kept turns folded into the summary too (offline ledger), when summarizing left it over",
}
_STAGE_COLUMNS = ("turns", "calls", "sent", "largest", "used", "compactions", "bounded")
"""The stage table's columns; the legend under it explains each, in this order."""
TURN_HEADER = (
    "Each turn line: the window used after the turn (bar, share, tokens / window), then the size of every request "
    "sent to the model during the turn, in thousands of tokens (one per round of tool calls, one for the answer)."
)


class _Tally:
    """Running totals for the progress note."""

    def __init__(self) -> None:
        self.compactions = 0
        self.bounded = 0

    def add(self, report: TurnReport) -> str:
        self.compactions += len(report.compactions)
        self.bounded += len(report.bounded)
        return (
            f"{report.used_percentage:.0f}% used · {_plural(self.compactions, 'compaction')} · {self.bounded:,} bounded"
        )

    def line(self, report: TurnReport, turns: int) -> str:
        """A plain progress line, for a stderr that is not a terminal."""
        return (
            f"demo: turn {report.turn:,}/{turns:,}: {report.model_calls:,} model calls, window "
            f"{report.used_percentage:.0f}% used, {_plural(self.compactions, 'compaction')}, "
            f"{_plural(self.bounded, 'tool output')} bounded so far"
        )


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


@contextmanager
def turn_progress(config: DemoConfig, forced: bool | None, *, quiet: bool) -> Iterator[Callable[[TurnReport], None]]:
    """A per-turn callback showing how far the session is: a rich bar, plain lines, or nothing (``quiet``)."""
    if quiet and forced is None:
        yield lambda _report: None
        return
    tally = _Tally()
    if not wanted(forced):
        every = max(1, math.ceil(config.turns / _CHECKPOINTS))
        err = Console(stderr=True, highlight=False, soft_wrap=True)

        def line(report: TurnReport) -> None:
            tally.add(report)
            if report.turn % every == 0 or report.turn == config.turns:
                err.print(tally.line(report, config.turns))

        yield line
        return
    console = Console(stderr=True, highlight=False, force_terminal=True if forced else None)
    note = Column(no_wrap=True, overflow="ellipsis", max_width=max(8, console.width - 52))  # the rest: 52 columns
    columns = (
        TextColumn("simulating"),
        BarColumn(bar_width=20),
        MofNCompleteColumn(),
        TextColumn("turns"),
        TimeElapsedColumn(),
        TextColumn("[dim]{task.fields[note]}[/]", table_column=note),
    )
    with Progress(*columns, console=console, transient=not forced) as progress:
        task = progress.add_task("turns", total=config.turns, note="")
        yield lambda report: progress.update(task, advance=1, note=tally.add(report))


def print_turn(console: Any, report: TurnReport) -> None:
    """One turn for ``--verbose``: the outputs bounded and the compactions during it, then its :func:`turn_line`."""
    for bounded in report.bounded:
        console.print(
            f"  [cyan]tool output bounded[/]: {bounded.tokens_before:,} -> {bounded.tokens_after:,} tokens, "
            "original archived"
        )
    for event in report.compactions:
        console.print(
            f"  [magenta]compaction ({event.trigger})[/]: {' -> '.join(event.tiers)}, "
            f"{event.before.used_tokens:,} -> {event.after.used_tokens:,} tokens"
        )
    console.print(turn_line(report))


def turn_line(report: TurnReport) -> Any:
    """``turn  12 ━━━━╸  58.8% 11,752 / 20,000 · requests 15.2k 11.8k`` (see :data:`TURN_HEADER`)."""
    used, window = report.used_tokens, report.max_tokens
    pct = 100.0 * used / window
    style = "green" if pct < 60 else "yellow" if pct < 80 else "red"
    sizes = " ".join(f"{tokens / 1000:.1f}k" for tokens in report.request_tokens)
    grid = Table.grid(padding=(0, 1))
    grid.add_row(
        f"turn {report.turn:>3}",
        ProgressBar(total=window, completed=min(used, window), width=20, complete_style=style),
        f"[{style}]{pct:5.1f}%[/]",
        f"{used:,} / {window:,}",
        f"[dim]· requests {sizes}[/]",
    )
    return grid


def _legend(rows: Sequence[tuple[str, str]]) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(style="dim")
    for name, meaning in rows:
        grid.add_row(name, meaning)
    return grid


def stage_table(rows: Sequence[Stage], window: int) -> Any:
    """The session by stage, with a legend of its columns under it."""
    policy = CompactionPolicy()  # the demo's sessions use the defaults
    table = Table(title="The session by stage", title_justify="left")
    for header in _STAGE_COLUMNS:
        table.add_column(header, justify="left" if header == "turns" else "right", no_wrap=True)
    for row in rows:
        table.add_row(
            f"{row.first_turn}-{row.last_turn}",
            f"{row.model_calls:,}",
            f"{row.tokens_sent:,}",
            f"{row.largest_request:,}",
            f"{row.used_at_end:.1f}%",
            f"{row.compactions:,}",
            f"{row.bounded:,}",
        )
    legend = _legend(
        [
            ("turns", "the user turns of the stage: each is a request, one or two rounds of tool calls, an answer"),
            ("calls", "requests sent to the model in those turns: one per round of tool calls, one per answer"),
            ("sent", "those requests' tokens added up: what a provider bills as input"),
            ("largest", f"the stage's biggest request, in tokens; it must fit the {window:,}-token window"),
            ("used", "the share of the window the history fills after the stage's last turn"),
            (
                "compactions",
                f"times the history was compacted: when a request would pass {policy.threshold:.0%} of the window, "
                f"it is brought down to {policy.target:.0%}",
            ),
            (
                "bounded",
                f"tool outputs over {policy.tool_output_limit(window):,} tokens cut to head + tail as they arrived, "
                "their full text archived",
            ),
        ]
    )
    return Group(table, legend)


def summary_table(result: DemoResult) -> Any:
    """The totals and invariants of the run, with a legend of the rows that need one."""
    table = Table(title="ctxbudget demo summary", title_justify="left")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("driver", result.driver)
    table.add_row("turns", f"{result.turns:,}")
    table.add_row("model calls", f"{result.model_calls:,}")
    table.add_row("window", f"{result.max_tokens:,} tokens")
    table.add_row("compactions", f"{sum(result.compactions.values()):,}")
    for tier, count in sorted(result.compactions.items()):
        table.add_row(f"  ending in tier '{tier}'", f"{count:,}")
    table.add_row("tool outputs bounded on arrival", f"{result.bounded_outputs:,}")
    table.add_row("max usage", f"{result.max_usage_percentage:.2f}%")
    table.add_row("orphaned tool pairs sent", _flag(result.orphaned_pairs, result.orphaned_pairs == 0))
    table.add_row("requests rejected by the model", _flag(result.rejected_requests, result.rejected_requests == 0))
    everything = result.originals_recovered == result.originals_total
    recovered = f"{result.originals_recovered:,}/{result.originals_total:,} ({'all' if everything else 'NOT all'})"
    table.add_row("originals recoverable", _flag(recovered, everything))
    tiers = [(f"tier '{tier}'", _TIERS[tier]) for tier in sorted(result.compactions) if tier in _TIERS]
    legend = _legend(
        [
            ("ending in tier", "how far each compaction had to go, in order: bound, clear, summarize, truncate"),
            *tiers,
            ("max usage", "the largest request sent, as a share of the window"),
            ("orphaned pairs", "requests with a tool call lacking its result, or a result lacking its call: must be 0"),
            ("rejected", "requests the strict fake provider refused (over the window, or orphaned): must be 0"),
            ("recoverable", "messages of the session that can still be read back exactly, live or from the archive"),
        ]
    )
    return Group(table, legend)


def _flag(value: object, good: bool) -> str:
    return f"[{'green' if good else 'red'}]{value}[/]"
