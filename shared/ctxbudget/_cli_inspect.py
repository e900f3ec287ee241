"""What ``ctxbudget inspect`` prints, rendered with rich.

The window usage, tables by role, by tool and of the largest items, orphaned tool pairs, and what a compaction
would do now (worded as ``compact`` words its result).

This module imports rich at the top: the CLI imports it only to render (``inspect --json`` needs no rich).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress_bar import ProgressBar
from rich.table import Table

from .transcripts import Transcript

__all__ = ["archived_phrase", "print_report"]


def print_report(console: Console, transcript: Transcript, report: dict[str, Any], model: str | None) -> None:
    """Print ``report`` (from :func:`~ctxbudget._analysis.inspect_transcript`) for ``transcript``."""
    window = report["window"]
    console.print(
        f"[bold]{transcript.source}[/] ({report['transcript']['format']}, {len(transcript.messages):,} messages) "
        f"for [bold]{model}[/] ({report['counter']})"
    )
    console.print(_usage_line(window["used_tokens"], window["max_tokens"]))
    console.print(_table("By role", ("role", "messages", "tokens"), _rows(report["by_role"], "messages", "tokens")))
    if report["by_tool"]:
        rows = _rows(report["by_tool"], "calls", "results", "result_tokens")
        console.print(_table("By tool", ("tool", "calls", "results", "result tokens"), rows))
    largest = [
        (str(i["index"]), i["role"], i["tool"] or "", f"{i['tokens']:,}", i["preview"]) for i in report["largest"]
    ]
    console.print(_table("Largest items", ("#", "role", "tool", "tokens", "preview"), largest))
    pairs = report["tool_pairs"]
    style = "green" if pairs["problems"] == 0 else "red"
    console.print(f"[{style}]Orphaned tool pairs: {pairs['problems']}[/]")
    for detail in pairs["details"][:10]:
        console.print(f"  [red]- {detail}[/]")
    _print_trial(console, report["compaction"], window)


def archived_phrase(archived: int, bounded: int) -> str:
    """The one archived count, worded the same by ``inspect`` and ``compact``."""
    return f"{archived:,} archived originals (of them {bounded:,} oversized tool outputs bounded on arrival)"


def _rows(section: dict[str, dict[str, int]], *columns: str) -> list[tuple[str, ...]]:
    return [(name, *(f"{values[c]:,}" for c in columns)) for name, values in section.items()]


def _table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    table = Table(title=title, title_justify="left")
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index == 0 or header in ("preview", "role", "tool") else "right")
    for row in rows:
        table.add_row(*row)
    return table


def _print_trial(console: Console, trial: dict[str, Any], window: dict[str, Any]) -> None:
    trigger = "would" if trial["would_auto_trigger"] else "would not"
    pct = 100.0 * window["used_tokens"] / window["max_tokens"]
    console.print(f"At {pct:.1f}% auto-compaction {trigger} trigger (threshold {window['threshold_tokens']:,} tokens).")
    if trial["error"]:
        console.print(f"[red]A compaction now would fail: {trial['error']}[/]")
        return
    console.print(
        f"A compaction now (what `ctxbudget compact` would do): tiers {' -> '.join(trial['tiers'])}, "
        f"{trial['before']['used_tokens']:,} -> {trial['after']['used_tokens']:,} tokens, "
        f"{archived_phrase(trial['archived'], trial['bounded_on_arrival'])}."
    )


def _usage_line(used: int, window: int) -> Table:
    grid = Table.grid(padding=(0, 1))
    pct = 100.0 * used / window
    style = "green" if pct < 60 else "yellow" if pct < 80 else "red"
    grid.add_row(
        ProgressBar(total=window, completed=min(used, window), width=32, complete_style=style),
        f"[{style}]{pct:5.1f}%[/]",
        f"{used:,} / {window:,} tokens",
    )
    return grid
