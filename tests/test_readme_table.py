"""The README's benchmark table is exactly what benchmarks/readme_table.py generates from the checked-in results."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import readme_table
from benchmarks.readme_table import END, START, TableError, current_block, render, replace_block

README = readme_table.README.read_text(encoding="utf-8")
RESULTS = readme_table.SESSION_RESULTS.read_text(encoding="utf-8")


def test_readme_block_equals_the_generated_table() -> None:
    assert README.count(START) == 1
    assert README.count(END) == 1
    assert current_block(README) == render(RESULTS)


def test_the_generated_table_carries_every_result_row_and_its_numbers() -> None:
    table = render(RESULTS).splitlines()
    results_rows = [line for line in RESULTS.splitlines() if line.startswith("| ") and "median ms" not in line]
    assert len(table) == 2 + len(results_rows)
    for line, source in zip(table[2:], results_rows, strict=True):
        name, *numbers = [cell.strip() for cell in source.strip("|").split("|")]
        assert line.count("`") == 2
        assert line.replace("`", "").startswith(f"| {name} |")
        assert line.endswith(" | ".join(numbers[:4]) + " |")


def test_a_changed_result_makes_the_readme_stale_until_regenerated() -> None:
    row = next(line for line in RESULTS.splitlines() if line.startswith("| ctxbudget"))
    first = row.split("|")[2]
    changed = RESULTS.replace(row, row.replace(first, " 999.999 ", 1))
    assert current_block(README) != render(changed)
    updated = replace_block(README, render(changed))
    assert current_block(updated) == render(changed)
    before, after = README.split(START)[0], README.split(END)[1]
    assert updated.startswith(before + START)  # nothing outside the markers moved
    assert updated.endswith(END + after)


def test_main_rewrites_the_block_and_check_reports_staleness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{START}\n| old | table |\n{END}\noutro\n", encoding="utf-8")
    results = tmp_path / "session.md"
    results.write_text(RESULTS, encoding="utf-8")
    monkeypatch.setattr(readme_table, "ROOT", tmp_path)
    monkeypatch.setattr(readme_table, "README", readme)
    monkeypatch.setattr(readme_table, "SESSION_RESULTS", results)
    assert readme_table.main(["--check"]) == 1
    assert readme_table.main([]) == 0
    text = readme.read_text(encoding="utf-8")
    assert text.startswith(f"intro\n{START}\n| per-turn cost (median ms) |")
    assert text.endswith(f"\n{END}\noutro\n")
    assert readme_table.main(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("readme", "results"),
    [
        ("no markers here", RESULTS),
        (f"{END}\n{START}", RESULTS),
        (f"{START}\n{END}", "no table at all"),
        (f"{START}\n{END}", "| a | b |\n|---|---|\n| x | y |\n"),
    ],
)
def test_malformed_inputs_are_refused(readme: str, results: str) -> None:
    with pytest.raises(TableError):
        replace_block(readme, render(results))
