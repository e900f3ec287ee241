"""Rewrite the README's benchmark table from the checked-in results, so the two cannot drift apart.

The table lives in ``README.md`` between ``<!-- benchmark-table:start -->`` and ``<!-- benchmark-table:end -->``.
It is generated from ``benchmarks/results/session.md`` (written by ``python -m benchmarks.bench_session``): the
per-turn rows with their 1k/5k/10k medians and the 10k / 1k growth, API names in code style.
``tests/test_readme_table.py`` fails when the README block differs from what this script would write.

Run: ``python -m benchmarks.bench_session && python -m benchmarks.readme_table`` (``--check`` only compares and
exits 1 on a difference).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SESSION_RESULTS = Path(__file__).parent / "results" / "session.md"
START = "<!-- benchmark-table:start -->"
END = "<!-- benchmark-table:end -->"
KEPT_COLUMNS = 5  # name, 1k, 5k, 10k, 10k / 1k; the "vs ctxbudget" ratio stays in the results file


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


def render(results: str) -> str:
    """The README table for the text of ``session.md``."""
    header, *rows = parse_table(results)
    if len(header) < KEPT_COLUMNS:
        raise TableError(f"expected at least {KEPT_COLUMNS} columns in the results table, found {len(header)}")
    lines = [
        "| " + " | ".join(header[:KEPT_COLUMNS]) + " |",
        "|---|" + "---:|" * (KEPT_COLUMNS - 1),
    ]
    for row in rows:
        lines.append("| " + " | ".join([code_name(row[0]), *row[1:KEPT_COLUMNS]]) + " |")
    return "\n".join(lines)


def replace_block(readme: str, table: str) -> str:
    """``readme`` with the text between the markers replaced by ``table``."""
    start, end = readme.find(START), readme.find(END)
    if start < 0 or end < start:
        raise TableError(f"README.md must contain {START} followed by {END}")
    return readme[: start + len(START)] + "\n" + table + "\n" + readme[end:]


def current_block(readme: str) -> str:
    """The table currently between the markers."""
    start, end = readme.find(START), readme.find(END)
    if start < 0 or end < start:
        raise TableError(f"README.md must contain {START} followed by {END}")
    return readme[start + len(START) : end].strip("\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the README benchmark table from benchmarks/results/.")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when the README is stale")
    args = parser.parse_args(argv)
    readme = README.read_text(encoding="utf-8")
    table = render(SESSION_RESULTS.read_text(encoding="utf-8"))
    if args.check:
        stale = current_block(readme) != table
        print("README benchmark table is stale" if stale else "README benchmark table is up to date")
        return 1 if stale else 0
    updated = replace_block(readme, table)
    if updated != readme:
        README.write_text(updated, encoding="utf-8")
    print(f"wrote the benchmark table ({len(table.splitlines()) - 2} rows) into {README.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
