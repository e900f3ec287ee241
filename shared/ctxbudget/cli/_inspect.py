"""What ``ctxbudget inspect`` prints, rendered with rich.

The model and where it came from, the window usage (uncapped past 100%), the transcript's own usage figures beside
ours, tables by role, by tool and of the largest items, orphaned tool pairs, what the reader skipped, and what a
compaction would do now (worded as ``compact`` words its result), or why ``compact`` would do nothing.

This module imports rich at the top: the CLI imports it only to render (``inspect --json`` needs no rich).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress_bar import ProgressBar
from rich.table import Table

__all__ = ["archived_phrase", "print_report"]


def print_report(console: Console, report: dict[str, Any]) -> None:
    """Print ``report`` (from :func:`~ctxbudget.cli._analysis.report`)."""
    transcript, window = report["transcript"], report["window"]
    console.print(
        f"[bold]{escape(transcript['source'])}[/] ({transcript['format']}, {transcript['messages']:,} messages) "
        f"for [bold]{escape(str(report['model']))}[/] ({report['counter']}; model from {escape(report['model_from'])})"
    )
    for note in transcript["notes"]:
        console.print(f"[dim]- {escape(note)}[/]")
    if transcript["replaced_messages"]:
        console.print(
            f"Not sent any more: {transcript['replaced_messages']:,} messages ({transcript['replaced_tokens']:,} "
            "tokens) before the transcript's own compaction, of earlier conversations in the file or of branches it "
            "left; kept (compact archives them)."
        )
    console.print(_usage_line(window["used_tokens"], window["max_tokens"]))
    if window["harness_tokens"]:
        console.print(
            f"[dim]Of them {window['harness_tokens']:,} tokens the agent adds to every request (a system prompt and "
            "tools the file does not hold, as Claude Code's), measured from the file's first usage figure.[/]"
        )
    if window["stripped_thinking_tokens"]:
        console.print(
            f"[dim]Not counted: {window['stripped_thinking_tokens']:,} tokens of thinking from earlier turns, which "
            f"{escape(str(report['model']))} has stripped from its requests.[/]"
        )
    _print_usage(console, report.get("reported_usage"))
    console.print(_table("By role", ("role", "messages", "tokens"), _rows(report["by_role"], "messages", "tokens")))
    if report["by_tool"]:
        rows = _rows(report["by_tool"], "calls", "results", "result_tokens")
        console.print(_table("By tool", ("tool", "calls", "results", "result tokens"), rows))
    largest = [
        (str(i["index"]), i["role"], escape(i["tool"] or ""), f"{i['tokens']:,}", escape(i["preview"]))
        for i in report["largest"]
    ]
    console.print(_table("Largest items", ("#", "role", "tool", "tokens", "preview"), largest))
    pairs = report["tool_pairs"]
    style = "green" if pairs["problems"] == 0 else "red"
    console.print(f"[{style}]Orphaned tool pairs: {pairs['problems']:,}[/]")
    for detail in pairs["details"][:10]:
        console.print(f"  [red]- {escape(detail)}[/]")
    _print_trial(console, report["compaction"], window)


def _print_usage(console: Console, usage: dict[str, Any] | None) -> None:
    if usage is None:
        return
    last = usage["last"]
    console.print(
        f"The transcript's own usage for its last request ({last['where']}): {last['reported_tokens']:,} prompt "
        f"tokens; ours for the same {last['messages']:,} messages: {last['our_tokens']:,} "
        f"({last['difference_percentage']:+.1f}%)."
    )


def archived_phrase(archived: int, bounded: int) -> str:
    """The one archived count, worded the same by ``inspect`` and ``compact``."""
    return f"{archived:,} archived originals (of them {bounded:,} oversized tool outputs bounded on arrival)"


def _rows(section: dict[str, dict[str, int]], *columns: str) -> list[tuple[str, ...]]:
    return [(escape(name), *(f"{values[c]:,}" for c in columns)) for name, values in section.items()]


def _table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    table = Table(title=title, title_justify="left")
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index == 0 or header in ("preview", "role", "tool") else "right")
    for row in rows:
        table.add_row(*row)
    return table


def _print_trial(console: Console, trial: dict[str, Any], window: dict[str, Any]) -> None:
    trigger = "would" if trial["would_auto_trigger"] else "would not"
    console.print(
        f"At {window['used_percentage']:.1f}% auto-compaction {trigger} trigger "
        f"(threshold {window['threshold_tokens']:,} tokens)."
    )
    if trial["error"]:
        console.print(f"[red]A compaction now would fail: {escape(trial['error'])}[/]")
        return
    if trial["nothing_to_do"]:
        console.print(f"[yellow]`ctxbudget compact` would do nothing[/]: {escape(trial['nothing_to_do'])}.")
        return
    console.print(
        f"A compaction now (what `ctxbudget compact` would do): {trial['compactions']:,} compaction"
        f"{'s' if trial['compactions'] != 1 else ''}, tiers {' -> '.join(trial['tiers']) or '-'}, "
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
