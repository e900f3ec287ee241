"""``ctxbudget demo`` through its two drivers: LangChain ``create_agent`` + middleware (default) and the bare core."""

from __future__ import annotations

import sys

import pytest
from ctxbudget.cli import EXIT_FAILURE, EXIT_OK, main
from ctxbudget.cli._demo import DemoConfig, TurnReport, core_driver, default_driver, driver_named, run_demo, stages
from ctxbudget.session.events import ContextCompacted, ToolOutputBounded

from langchain_ctxbudget.demo import DRIVER_NAME, langchain_driver, run_langchain_demo

SMALL = DemoConfig(turns=8, max_tokens=12_000)  # small enough that compaction and bounding both happen


def _row(out: str, label: str) -> str:
    """The value cell of one summary-table row, as printed."""
    line = next(line for line in out.splitlines() if line.startswith(f"│ {label} "))
    return line.split("│")[-2].strip()


def test_langchain_driver_demo_exits_0_with_no_orphans_and_everything_recoverable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["demo", "--driver", "langchain", "--turns", "8", "--max-tokens", "12000", "--verbose"]
    assert main(argv) == EXIT_OK
    out = capsys.readouterr().out
    assert "(langchain driver)" in out
    assert _row(out, "driver") == DRIVER_NAME
    assert _row(out, "turns") == "8"
    assert _row(out, "orphaned tool pairs sent") == "0"
    assert _row(out, "requests rejected by the model") == "0"
    recovered = _row(out, "originals recoverable")
    assert recovered.endswith("(all)")
    done, total = recovered.split()[0].split("/")
    assert done == total
    assert int(_row(out, "compactions")) > 0
    assert int(_row(out, "tool outputs bounded on arrival")) > 0
    assert "compaction (auto)" in out
    assert "tool output bounded" in out
    assert out.count("· requests ") == 8  # one line per turn, listing every model call's request size


def test_the_default_driver_is_langchain_when_installed(capsys: pytest.CaptureFixture[str]) -> None:
    assert default_driver() is langchain_driver
    assert driver_named("langchain") is langchain_driver
    assert driver_named("core") is core_driver
    assert main(["demo", "--turns", "2", "--quiet"]) == EXIT_OK
    assert _row(capsys.readouterr().out, "driver") == DRIVER_NAME


def test_without_langchain_the_default_falls_back_to_core_and_an_explicit_request_fails(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_ctxbudget.demo", None)  # makes importing it fail, as if absent
    assert default_driver() is core_driver
    assert main(["demo", "--turns", "2", "--quiet"]) == EXIT_OK
    assert _row(capsys.readouterr().out, "driver") == "core (ContextSession + StrictProvider)"
    assert main(["demo", "--driver", "langchain", "--turns", "2"]) == EXIT_FAILURE
    assert 'pip install "ctxbudget[langchain]"' in capsys.readouterr().err


def test_core_driver_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--driver", "core", "--turns", "3", "--quiet"]) == EXIT_OK
    assert _row(capsys.readouterr().out, "driver") == "core (ContextSession + StrictProvider)"


def test_unknown_driver_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--driver", "llamaindex"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_both_drivers_replay_the_same_session_and_keep_every_original() -> None:
    reports: list[TurnReport] = []
    ours = run_demo(SMALL, on_turn=reports.append, driver=langchain_driver)
    core = run_demo(SMALL, driver=core_driver)
    for result in (ours, core):
        assert result.ok
        assert result.turns == SMALL.turns
        assert result.orphaned_pairs == 0
        assert result.originals_recovered == result.originals_total
    assert ours.model_calls == core.model_calls
    assert ours.originals_total == core.originals_total
    assert ours.max_usage_percentage <= 100.0
    # Per call: sizes of every request the strict model accepted; events arrived as LangChain custom events.
    assert sum(len(r.request_tokens) for r in reports) == ours.model_calls
    assert all(0 < tokens <= SMALL.max_tokens for r in reports for tokens in r.request_tokens)
    compactions = [e for r in reports for e in r.compactions]
    bounded = [e for r in reports for e in r.bounded]
    assert compactions
    assert all(isinstance(e, ContextCompacted) and e.after.used_tokens < e.before.used_tokens for e in compactions)
    assert bounded
    assert all(isinstance(e, ToolOutputBounded) and e.tokens_after < e.tokens_before for e in bounded)
    assert sum(ours.compactions.values()) == len(compactions)


def test_without_the_middleware_the_strict_model_rejects_the_session() -> None:
    config = DemoConfig(turns=20, max_tokens=12_000)
    result = run_langchain_demo(config, lambda _report: None, middleware=False)
    assert result.rejected_requests == 1
    assert not result.ok
    assert result.turns < config.turns  # the run stopped at the rejected turn
    assert result.compactions == {}
    assert result.originals_recovered == result.originals_total  # nothing was compacted, so nothing was lost


def _stage_rows(out: str) -> list[list[str]]:
    """The body rows of the stage table, as cells."""
    table = out[out.index("The session by stage") : out.index("ctxbudget demo summary")]
    return [[cell.strip() for cell in line.split("│")[1:-1]] for line in table.splitlines() if line.startswith("│")]


def test_the_final_tables_have_their_columns_explained_in_a_legend(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--driver", "core", "--turns", "20", "--max-tokens", "12000"]) == EXIT_OK
    captured = capsys.readouterr()
    out = captured.out
    assert "turn  1" not in out  # no per-turn lines by default
    header = next(line for line in out.splitlines() if line.startswith("┃ turns"))
    columns = [cell.strip() for cell in header.split("┃")[1:-1]]
    assert columns == ["turns", "calls", "sent", "largest", "used", "compactions", "bounded"]
    legend = out[out.index("└", out.index("The session by stage")) : out.index("ctxbudget demo summary")]
    explained = [line.split()[0] for line in legend.splitlines()[1:] if line and not line.startswith(" ")]
    assert explained == columns  # every column, in order, explained under the table
    assert "what a provider bills as input" in legend
    assert "12,000-token window" in legend
    rows = _stage_rows(out)
    assert [row[0] for row in rows] == [f"{first}-{first + 1}" for first in range(1, 21, 2)]
    assert sum(int(row[1]) for row in rows) == int(_row(out, "model calls"))
    assert sum(int(row[5]) for row in rows) == int(_row(out, "compactions"))
    assert sum(int(row[6]) for row in rows) == int(_row(out, "tool outputs bounded on arrival"))
    assert all(int(row[3].replace(",", "")) <= 12_000 for row in rows)
    summary_legend = out[out.index("└", out.index("ctxbudget demo summary")) :]
    for term in ("ending in tier", "max usage", "orphaned pairs", "rejected", "recoverable"):
        assert term in summary_legend
    # Not a terminal: a few plain progress lines on stderr, none on stdout.
    lines = captured.err.splitlines()
    assert lines[0].startswith("demo: turn 2/20: ")
    assert lines[-1].startswith("demo: turn 20/20: ")
    assert len(lines) == 10
    assert "demo: turn" not in out


def test_demo_progress_can_be_forced_onto_stderr_and_quiet_has_none(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--driver", "core", "--turns", "6", "--progress"]) == EXIT_OK
    captured = capsys.readouterr()
    assert "simulating" in captured.err
    assert "6/6\x1b[0m turns" in captured.err  # forced: drawn as on a terminal
    assert "simulating" not in captured.out
    assert main(["demo", "--driver", "core", "--turns", "6", "--quiet"]) == EXIT_OK
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "The session by stage" not in captured.out
    assert "ctxbudget demo summary" in captured.out


def test_stages_fold_the_turns_without_losing_any() -> None:
    reports: list[TurnReport] = []
    result = run_demo(DemoConfig(turns=23, max_tokens=12_000), on_turn=reports.append, driver=core_driver)
    rows = stages(reports)
    assert [(row.first_turn, row.last_turn) for row in rows] == [(t, min(t + 2, 23)) for t in range(1, 24, 3)]
    assert sum(row.model_calls for row in rows) == result.model_calls
    assert sum(row.bounded for row in rows) == result.bounded_outputs
    assert sum(row.compactions for row in rows) == sum(result.compactions.values())
    assert max(row.largest_request for row in rows) <= 12_000
    assert rows[-1].used_at_end == reports[-1].used_percentage
    assert stages([]) == []
