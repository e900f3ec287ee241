"""The README's benchmark tables are exactly what benchmarks/readme_table.py generates from the checked-in results."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import readme_table
from benchmarks.bench_agent import FLOOR_NAME, OURS_NAME, RUNNABLE_NAME
from benchmarks.readme_table import (
    END,
    PLAIN_END,
    PLAIN_START,
    START,
    TableError,
    current_block,
    render,
    render_agent,
    replace_block,
)

README = readme_table.README.read_text(encoding="utf-8")
RESULTS = readme_table.SESSION_RESULTS.read_text(encoding="utf-8")
AGENT = readme_table.AGENT_RESULTS.read_text(encoding="utf-8")
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
        f"intro\n{START}\n| old | table |\n{END}\nplain chat:\n{PLAIN_START}\n| old |\n{PLAIN_END}\noutro\n",
        encoding="utf-8",
    )
    (tmp_path / "session.md").write_text(RESULTS, encoding="utf-8")
    (tmp_path / "agent.md").write_text(AGENT, encoding="utf-8")
    monkeypatch.setattr(readme_table, "ROOT", tmp_path)
    monkeypatch.setattr(readme_table, "README", readme)
    monkeypatch.setattr(readme_table, "SESSION_RESULTS", tmp_path / "session.md")
    monkeypatch.setattr(readme_table, "AGENT_RESULTS", tmp_path / "agent.md")
    assert readme_table.main(["--check"]) == 1
    assert "agent workload, plain chat" in capsys.readouterr().out
    assert readme_table.main([]) == 0
    text = readme.read_text(encoding="utf-8")
    assert text.startswith(f"intro\n{START}\n| per-turn cost (median ms) | no compaction:")
    assert f"\n{END}\nplain chat:\n{PLAIN_START}\n| per-turn cost (median ms) | 1k msgs |" in text
    assert text.endswith(f"\n{PLAIN_END}\noutro\n")
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
