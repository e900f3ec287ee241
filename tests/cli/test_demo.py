"""``ctxbudget demo`` through its two drivers: LangChain ``create_agent`` + middleware (default) and the bare core."""

from __future__ import annotations

import sys

import pytest
from ctxbudget._demo import DemoConfig, TurnReport, core_driver, default_driver, driver_named, run_demo
from ctxbudget.cli import EXIT_FAILURE, EXIT_OK, main
from ctxbudget.events import ContextCompacted, ToolOutputBounded

from langchain_ctxbudget.demo import DRIVER_NAME, langchain_driver, run_langchain_demo

SMALL = DemoConfig(turns=8, max_tokens=12_000)  # small enough that compaction and bounding both happen


def _row(out: str, label: str) -> str:
    """The value cell of one summary-table row, as printed."""
    line = next(line for line in out.splitlines() if line.startswith(f"│ {label} "))
    return line.split("│")[-2].strip()


def test_langchain_driver_demo_exits_0_with_no_orphans_and_everything_recoverable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["demo", "--driver", "langchain", "--turns", "8", "--max-tokens", "12000"]
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
    assert out.count("· calls ") == 8  # one line per turn, listing every model call's request size


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
