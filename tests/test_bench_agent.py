"""The agent-workload benchmark measures what it says: its workload's mix, each system at tiny sizes, the report."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from benchmarks import bench_agent
from benchmarks.bench_agent import (
    Cell,
    Floor,
    Ours,
    Row,
    Stopped,
    System,
    Turn,
    make_turns,
    prefix_turns,
    report,
    run_system,
)
from benchmarks.readme_table import render_agent

pytest.importorskip("langchain")
pytest.importorskip("llama_index.core")

TURNS = make_turns(40, scale=0.1)  # outputs of 10-600 words: the same shapes, seconds instead of minutes


def test_the_workload_is_seeded_and_has_the_promised_mix() -> None:
    turns = make_turns(300)
    assert [t.texts for t in turns[:5]] == [t.texts for t in make_turns(5)]
    assert any(a.texts != b.texts for a, b in zip(turns[:5], make_turns(5, seed=1), strict=True))
    outputs = []
    for turn in turns:
        roles = [m.role for m in turn.messages]
        assert roles[:2] == ["user", "assistant"]
        assert roles[-1] == "assistant"
        calls = turn.messages[1].tool_calls
        assert 1 <= len(calls) <= 2
        results = [m for m in turn.messages if m.role == "tool"]
        assert len(results) == len(calls) - turn.unanswered
        assert turn.messages[-1].state == ("interrupted" if turn.interrupted else "complete")
        outputs += [len(m.text.split()) for m in results]
    assert min(outputs) >= 100
    assert max(outputs) <= 6_100
    large = sum(words >= 2_000 for words in outputs) / len(outputs)
    assert 0.08 < large < 0.22  # one in seven
    assert 3 <= sum(t.unanswered for t in turns) <= 12
    assert 25 <= sum(t.interrupted for t in turns) <= 75
    assert "src/" in turns[0].messages[2].text
    assert any(ch.isdigit() for ch in turns[0].messages[2].text)


def test_prefix_turns_reaches_the_size() -> None:
    count = prefix_turns(TURNS, 50)
    assert sum(len(t.messages) for t in TURNS[:count]) >= 50
    assert sum(len(t.messages) for t in TURNS[: count - 1]) < 50
    with pytest.raises(ValueError, match="fewer than"):
        prefix_turns(TURNS, 10**6)


def _systems(window: int) -> list[System]:
    return [
        Floor(),
        Ours(window),
        bench_agent.Runnable(TURNS, window),
        bench_agent.TrimMessages(TURNS, window, approximate=False),
        bench_agent.TrimMessages(TURNS, window, approximate=True),
        bench_agent.Summarization(TURNS, window),
        bench_agent.ContextEditing(TURNS, window),
        bench_agent.ChatMemoryBufferSystem(TURNS, window),
        bench_agent.MemorySystem(TURNS, window),
    ]


def test_every_system_runs_both_windows_and_the_report_feeds_the_readme_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench_agent, "DEADLINE_S", math.inf)  # no turn is stopped, however busy the machine
    sizes = (10, 20, 30)
    rows = []
    for large, budget in zip(_systems(bench_agent.LARGE_WINDOW), _systems(3_000), strict=True):
        cells = [run_system(s, TURNS, sizes, repeats=1, cap_s=5.0, collect=False) for s in (large, budget)]
        for cell in [*cells[0], *cells[1]]:
            assert cell.median is not None
            assert cell.median > 0
            assert len(cell.floor_samples) == len(cell.samples)  # the floor is timed with each measured turn
        rows.append(Row(large.name, *cells))
    text = report(rows, sizes, {s: 1_000 * s for s in sizes}, adds=[], memory=None, notes={"x": "y"})
    table = render_agent(text)
    assert len(table.splitlines()) == 2 + len(rows)
    assert "| 30 / 10 |" in table
    assert "## Each system / the tiktoken floor" in text
    assert "ContextBudgetRunnable vs trim_messages" in text
    assert "| approximate, paired / runnable |" in text  # approximate trim timed with the runnable's own turns
    runnable = next(row for row in rows if row.name == bench_agent.RUNNABLE_NAME)
    assert all(len(c.peer_samples) == len(c.samples) for c in (*runnable.large, *runnable.budget))


def test_a_systems_ratio_is_over_the_floor_timed_with_its_own_turns() -> None:
    floor_run = Cell(samples=[0.5, 0.5])
    assert bench_agent._ratio(Cell(samples=[2.0, 2.0], floor_samples=[1.0, 1.0]), floor_run) == "2.0x"
    assert bench_agent._ratio(Cell(samples=[2.0]), floor_run) == "4.0x"  # no paired floor: the floor's own run


def test_a_summarizing_peer_really_summarizes_in_the_small_window() -> None:
    system = bench_agent.Summarization(TURNS, 3_000)
    system.extend(TURNS[:20])
    assert str(system.history[0].content).startswith("Here is a summary")
    assert len(system.history) < sum(len(t.messages) for t in TURNS[:20])


def test_ours_compacts_in_the_small_window_and_not_in_the_large_one() -> None:
    small, large = Ours(3_000), Ours(bench_agent.LARGE_WINDOW)
    for system in (small, large):
        system.extend(TURNS[:20])
    assert large.session.build_request().tokens > small.session.max_tokens
    assert small.session.build_request().tokens <= small.session.max_tokens


class _Slow(System):
    name = "slow"

    def extend(self, turns: Sequence[Turn]) -> None:
        pass

    def turn(self, turn: Turn) -> None:
        raise Stopped


def test_a_stopped_turn_is_a_lower_bound_and_larger_sizes_are_not_run() -> None:
    cells = run_system(_Slow(), TURNS, (20, 40), repeats=3, cap_s=1.0, collect=False)
    assert cells[0].stopped_ms is not None
    assert cells[0].text().endswith("(stopped)")
    assert cells[1].skipped
    assert cells[0].median is None
    assert Cell(samples=[1.0, 3.0, 2.0]).text() == "2.000"
