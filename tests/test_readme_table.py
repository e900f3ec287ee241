"""The README's benchmark tables are exactly what benchmarks/readme_table.py generates from the checked-in results."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import readme_table
from benchmarks.bench_agent import FLOOR_NAME, OURS_NAME, RUNNABLE_NAME
from benchmarks.readme_table import (
    END,
    KIT_END,
    KIT_START,
    PLAIN_END,
    PLAIN_START,
    REAL_END,
    REAL_START,
    START,
    TableError,
    current_block,
    render,
    render_agent,
    render_external,
    render_real,
    replace_block,
)

README = readme_table.README.read_text(encoding="utf-8")
RESULTS = readme_table.SESSION_RESULTS.read_text(encoding="utf-8")
AGENT = readme_table.AGENT_RESULTS.read_text(encoding="utf-8")
EXTERNAL = readme_table.EXTERNAL_RESULTS.read_text(encoding="utf-8")
REAL = readme_table.REAL_RESULTS.read_text(encoding="utf-8")
PEERS = (
    "trim_messages (tiktoken)",
    "trim_messages (approximate)",
    "SummarizationMiddleware",
    "ContextEditingMiddleware",
    "ChatMemoryBuffer (tiktoken)",
    "Memory (tiktoken)",
)


def _rows(results: str) -> list[list[str]]:
    """The data rows of the first table in a results file, as cells."""
    first = results[results.index("\n|") + 1 :].split("\n\n", maxsplit=1)[0]
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in first.splitlines()
        if line.startswith("| ") and "median ms" not in line
    ]


def test_readme_blocks_equal_the_generated_tables() -> None:
    for start, end in ((START, END), (PLAIN_START, PLAIN_END)):
        assert README.count(start) == 1
        assert README.count(end) == 1
    assert current_block(README) == render_agent(AGENT)
    assert current_block(README, PLAIN_START, PLAIN_END) == render(RESULTS)
    assert README.index(END) < README.index(PLAIN_START)  # the agent table is the main one, plain chat after it


def test_the_agent_table_carries_every_row_both_windows_and_every_peer() -> None:
    table = render_agent(AGENT).splitlines()
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert len(header) == 9
    assert header[1].startswith("no compaction:")
    assert header[5].startswith("100k budget:")
    rows = _rows(AGENT)
    assert len(table) == 2 + len(rows)
    for line, (name, *numbers) in zip(table[2:], rows, strict=True):
        assert line.count("`") == 2
        assert line.replace("`", "").startswith(f"| {name} |")
        assert line.endswith(" | ".join(numbers) + " |")
        assert len(numbers) == 8
    names = [name for name, *_ in rows]
    for expected in (OURS_NAME, RUNNABLE_NAME, FLOOR_NAME):
        assert expected in names
    for peer in PEERS:
        assert any(peer in name for name in names), peer


def test_the_plain_chat_table_carries_every_result_row_and_its_numbers() -> None:
    table = render(RESULTS).splitlines()
    results_rows = [line for line in RESULTS.splitlines() if line.startswith("| ") and "median ms" not in line]
    assert len(table) == 2 + len(results_rows)
    for line, source in zip(table[2:], results_rows, strict=True):
        name, *numbers = [cell.strip() for cell in source.strip("|").split("|")]
        assert line.count("`") == 2
        assert line.replace("`", "").startswith(f"| {name} |")
        assert line.endswith(" | ".join(numbers[:4]) + " |")


def test_the_readme_labels_the_plain_chat_table_as_plain_chat() -> None:
    between = README[README.index(END) : README.index(PLAIN_START)]
    assert "plain" in between.lower()
    assert "chat" in between.lower()


@pytest.mark.parametrize(("start", "end", "text"), [(START, END, AGENT), (PLAIN_START, PLAIN_END, RESULTS)])
def test_a_changed_result_makes_the_readme_stale_until_regenerated(start: str, end: str, text: str) -> None:
    renderer = render_agent if start == START else render
    row = next(line for line in text.splitlines() if line.startswith("| ctxbudget"))
    first = row.split("|")[2]
    changed = text.replace(row, row.replace(first, " 999.999 ", 1))
    assert current_block(README, start, end) != renderer(changed)
    updated = replace_block(README, renderer(changed), start, end)
    assert current_block(updated, start, end) == renderer(changed)
    before, after = README.split(start)[0], README.split(end)[1]
    assert updated.startswith(before + start)  # nothing outside the markers moved
    assert updated.endswith(end + after)


def test_main_rewrites_both_blocks_and_check_reports_staleness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        f"intro\n{START}\n| old | table |\n{END}\nplain chat:\n{PLAIN_START}\n| old |\n{PLAIN_END}\n"
        f"{KIT_START}\n{KIT_END}\n{REAL_START}\n| old |\n{REAL_END}\noutro\n",
        encoding="utf-8",
    )
    for name, text in (("session", RESULTS), ("agent", AGENT), ("external", EXTERNAL), ("real", REAL)):
        (tmp_path / f"{name}.md").write_text(text, encoding="utf-8")
        monkeypatch.setattr(readme_table, f"{name.upper()}_RESULTS", tmp_path / f"{name}.md")
    monkeypatch.setattr(readme_table, "ROOT", tmp_path)
    monkeypatch.setattr(readme_table, "README", readme)
    assert readme_table.main(["--check"]) == 1
    assert "agent workload, plain chat, compaction-conformance-kit, real transcripts" in capsys.readouterr().out
    assert readme_table.main([]) == 0
    text = readme.read_text(encoding="utf-8")
    assert text.startswith(f"intro\n{START}\n| per-turn cost (median ms) | no compaction:")
    assert f"\n{END}\nplain chat:\n{PLAIN_START}\n| per-turn cost (median ms) | 1k msgs |" in text
    assert f"\n{PLAIN_END}\n{KIT_START}\n| budget | ctxbudget: survival |" in text
    assert text.endswith(f"\n{REAL_END}\noutro\n")
    assert readme_table.main(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("readme", "results"),
    [
        ("no markers here", RESULTS),
        (f"{END}\n{START}", RESULTS),
        (f"{START}\n{END}\n{START}\n{END}", RESULTS),
        (f"{START}\n{END}", "no table at all"),
        (f"{START}\n{END}", "| a | b |\n|---|---|\n| x | y |\n"),
    ],
)
def test_malformed_inputs_are_refused(readme: str, results: str) -> None:
    with pytest.raises(TableError):
        replace_block(readme, render(results))


def test_an_agent_table_without_both_windows_is_refused() -> None:
    with pytest.raises(TableError):
        render_agent(RESULTS)  # the plain-chat table: one window, six columns


def test_the_readme_shows_the_kit_and_real_transcript_tables_of_their_results_files() -> None:
    assert current_block(README, KIT_START, KIT_END) == render_external(EXTERNAL)
    assert current_block(README, REAL_START, REAL_END) == render_real(REAL)


def test_the_kit_table_has_one_row_per_budget_with_the_results_file_figures() -> None:
    rows = render_external(EXTERNAL).splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == ["| 10%", "| 20%", "| 30%"]
    thirty = EXTERNAL.split("## Budget 30%", 1)[1].split("\n## ", 1)[0]
    ours = next(line for line in thirty.splitlines() if line.startswith("| ") and "| ctxbudget |" in line)
    survival = ours.split("|")[4].strip()
    assert rows[2].split(" | ")[1] == survival  # ctxbudget's survival at 30%, as the results file has it


def test_the_real_table_carries_the_pooled_row_of_each_budget() -> None:
    rows = render_real(REAL).splitlines()[2:]
    assert len(rows) == 2
    the_set = REAL.split("\n## Held-out transcripts", 1)[0]  # the held-out transcripts are reported apart
    pooled = [line for line in the_set.splitlines() if line.startswith("| **all")]
    for row, source in zip(rows, pooled, strict=True):
        cells = [cell.strip().replace("**", "") for cell in source.strip().strip("|").split("|")]
        assert row.split(" | ")[1] in cells  # ctxbudget in request


def test_kit_and_real_results_without_their_rows_are_refused() -> None:
    with pytest.raises(TableError):
        render_external(EXTERNAL.replace("| ctxbudget |", "| other |"))
    with pytest.raises(TableError):
        render_real(REAL.replace("| **all", "| **some"))
