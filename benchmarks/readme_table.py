"""Rewrite the README's per-turn benchmark tables from the checked-in results, so the two cannot drift apart.

Four blocks, each between its markers in ``README.md``:

* ``<!-- benchmark-table:start -->`` ... ``<!-- benchmark-table:end -->``: the main table, the agent workload (tool
  calls, large outputs) in both windows (nothing compacted / a 100k budget), from ``benchmarks/results/agent.md``
  (written by ``python -m benchmarks.bench_agent``): every row with its 1k/5k/10k medians and 10k / 1k growth.
* ``<!-- plain-chat-table:start -->`` ... ``<!-- plain-chat-table:end -->``: plain user/assistant chat, from
  ``benchmarks/results/session.md`` (``python -m benchmarks.bench_session``): the 1k/5k/10k medians and the growth.
* ``<!-- external-kit-table:start -->`` ... ``end``: compaction-conformance-kit per budget, from
  ``benchmarks/results/external.md`` (``python -m benchmarks.bench_external``).
* ``<!-- real-transcripts-table:start -->`` ... ``end``: the real public transcripts, pooled per budget, from
  ``benchmarks/results/real.md`` (``python -m benchmarks.bench_real``).

API names are set in code style. ``tests/test_readme_table.py`` fails when a README block differs from what this
script would write.

Run: ``python -m benchmarks.bench_agent && python -m benchmarks.readme_table`` (``--check`` only compares and exits
1 on a difference).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RESULTS_DIR = Path(__file__).parent / "results"
AGENT_RESULTS = RESULTS_DIR / "agent.md"
SESSION_RESULTS = RESULTS_DIR / "session.md"
EXTERNAL_RESULTS = RESULTS_DIR / "external.md"
REAL_RESULTS = RESULTS_DIR / "real.md"
START = "<!-- benchmark-table:start -->"
END = "<!-- benchmark-table:end -->"
PLAIN_START = "<!-- plain-chat-table:start -->"
PLAIN_END = "<!-- plain-chat-table:end -->"
KIT_START = "<!-- external-kit-table:start -->"
KIT_END = "<!-- external-kit-table:end -->"
REAL_START = "<!-- real-transcripts-table:start -->"
REAL_END = "<!-- real-transcripts-table:end -->"
KEPT_COLUMNS = 5  # plain chat: name, 1k, 5k, 10k, 10k / 1k; the "vs ctxbudget" ratio stays in the results file
AGENT_COLUMNS = 9  # name, then 1k, 5k, 10k, 10k / 1k for each window


class TableError(ValueError):
    """The results file or the README is not shaped as this script expects."""


def parse_table(markdown: str) -> list[list[str]]:
    """The first Markdown table in ``markdown``: header row, then data rows (the ``|---|`` rule is dropped)."""
    rows: list[list[str]] = []
    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not all(set(cell) <= set("-:") for cell in cells):
                rows.append(cells)
        elif rows:
            break
    if len(rows) < 2:
        raise TableError(f"expected a Markdown table with a header and rows, found {len(rows)} row(s)")
    return rows


def code_name(name: str) -> str:
    """``LangChain trim_messages (tiktoken)`` -> ``LangChain `trim_messages` (tiktoken)``: the API in code style."""
    library, api, *rest = name.split(" ")
    return " ".join([library, f"`{api}`", *rest])


def _render(results: str, columns: int, *, exact: bool) -> str:
    header, *rows = parse_table(results)
    if len(header) < columns or (exact and len(header) != columns):
        raise TableError(f"expected {columns} columns in the results table, found {len(header)}")
    lines = [
        "| " + " | ".join(header[:columns]) + " |",
        "|---|" + "---:|" * (columns - 1),
    ]
    for row in rows:
        if len(row) < columns:
            raise TableError(f"expected {columns} cells in the row {row[0]!r}, found {len(row)}")
        lines.append("| " + " | ".join([code_name(row[0]), *row[1:columns]]) + " |")
    return "\n".join(lines)


def render(results: str) -> str:
    """The README's plain-chat table for the text of ``session.md``."""
    return _render(results, KEPT_COLUMNS, exact=False)


def render_agent(results: str) -> str:
    """The README's main (agent workload) table for the text of ``agent.md``: every column, both windows."""
    return _render(results, AGENT_COLUMNS, exact=True)


def _sections(results: str) -> dict[str, str]:
    """The ``## heading`` sections of a results file, by heading."""
    parts = results.split("\n## ")[1:]
    return {part.split("\n", 1)[0].strip(): part.split("\n", 1)[1] for part in parts}


def render_external(results: str) -> str:
    """The README's compaction-conformance-kit table for the text of ``external.md``: one row per budget.

    ctxbudget's survival, updates resolved and stale values in view, beside the best of the kit's own compactors
    (by survival) and the kit's ``semantic-checklist``.
    """
    lines = [
        "| budget | ctxbudget: survival | updates resolved | stale in view | best built-in: survival "
        "| semantic-checklist: survival | updates resolved |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    for heading, body in _sections(results).items():
        if not heading.startswith("Budget "):
            continue
        header, *rows = parse_table(body)
        column = {name: index for index, name in enumerate(header)}
        by_name = {row[column["compactor"]]: row for row in rows}
        ours, checklist = by_name.get("ctxbudget"), by_name.get("semantic-checklist")
        if ours is None or checklist is None:
            raise TableError(f"{heading}: expected rows for ctxbudget and semantic-checklist")
        peers = [row for name, row in by_name.items() if not name.startswith("ctxbudget")]
        best = max(peers, key=lambda row: float(row[column["survival"]].rstrip("%")))
        lines.append(
            f"| {heading.removeprefix('Budget ')} | {ours[column['survival']]} | {ours[column['semantic resolved']]} "
            f"| {ours[column['stale present']]} | {best[column['survival']]} ({best[column['compactor']]}) "
            f"| {checklist[column['survival']]} | {checklist[column['semantic resolved']]} |"
        )
    return "\n".join(lines)


REAL_SYSTEMS = (
    "ctxbudget in request",
    "ctxbudget + search (top 3)",
    "trim_messages",
    "semantic-checklist",
    "Claude Code's own summary",
)
"""The columns of the real-transcript table the README shows (the pooled row of each budget)."""


def render_real(results: str) -> str:
    """The README's real-transcript table for the text of ``real.md``: the pooled row of each budget."""
    lines = ["| budget | " + " | ".join(REAL_SYSTEMS) + " |", "|---|" + "---:|" * len(REAL_SYSTEMS)]
    for heading, body in _sections(results).items():
        if not heading.startswith("Budget: "):
            continue
        header, *rows = parse_table(body)
        pooled = next((row for row in rows if row[0].startswith("**all")), None)
        if pooled is None:
            raise TableError(f"{heading}: expected the pooled **all** row")
        cells = [pooled[header.index(name)].replace("**", "") for name in REAL_SYSTEMS]
        lines.append(f"| {heading.removeprefix('Budget: ')} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


@dataclass(frozen=True)
class Block:
    """One generated README block: its markers, the results file it comes from, and how it is rendered."""

    name: str
    start: str
    end: str
    results: Path
    render: Callable[[str], str]


def blocks() -> tuple[Block, ...]:
    """The README's generated blocks (read at call time, so tests can point the paths elsewhere)."""
    return (
        Block("agent workload", START, END, AGENT_RESULTS, render_agent),
        Block("plain chat", PLAIN_START, PLAIN_END, SESSION_RESULTS, render),
        Block("compaction-conformance-kit", KIT_START, KIT_END, EXTERNAL_RESULTS, render_external),
        Block("real transcripts", REAL_START, REAL_END, REAL_RESULTS, render_real),
    )


def _span(readme: str, start: str, end: str) -> tuple[int, int]:
    first, last = readme.find(start), readme.find(end)
    if first < 0 or last < first or readme.count(start) != 1 or readme.count(end) != 1:
        raise TableError(f"README.md must contain {start} followed by {end}, once each")
    return first, last


def replace_block(readme: str, table: str, start: str = START, end: str = END) -> str:
    """``readme`` with the text between the markers replaced by ``table``."""
    first, last = _span(readme, start, end)
    return readme[: first + len(start)] + "\n" + table + "\n" + readme[last:]


def current_block(readme: str, start: str = START, end: str = END) -> str:
    """The table currently between the markers."""
    first, last = _span(readme, start, end)
    return readme[first + len(start) : last].strip("\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the README benchmark tables from benchmarks/results/.")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when the README is stale")
    args = parser.parse_args(argv)
    readme = README.read_text(encoding="utf-8")
    updated = readme
    stale = []
    for block in blocks():
        table = block.render(block.results.read_text(encoding="utf-8"))
        if current_block(updated, block.start, block.end) != table:
            stale.append(block.name)
        updated = replace_block(updated, table, block.start, block.end)
        if not args.check:
            print(f"wrote the {block.name} table ({len(table.splitlines()) - 2} rows) into {README.name}")
    if args.check:
        print(
            f"README benchmark tables are stale: {', '.join(stale)}"
            if stale
            else "README benchmark tables are up to date"
        )
        return 1 if stale else 0
    if updated != readme:
        README.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
