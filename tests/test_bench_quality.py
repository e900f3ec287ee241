"""The compaction-quality benchmark scores what it claims: tiny workloads, seconds, no network."""

from __future__ import annotations

import dataclasses

import pytest

from benchmarks import bench_quality
from benchmarks.quality.probes import Probe, request_text, score
from benchmarks.quality.systems import run_ctxbudget, run_system
from benchmarks.quality.trajectories import TRAJECTORIES, load_trajectory
from benchmarks.quality.workloads import WORKLOADS, build_workload, check_planted

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")


def test_quick_path_prints_a_scored_table(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--quick", "--turns", "4", "--systems", "ctxbudget", "--workloads", "coding,support,tau_bench"]
    assert bench_quality.main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("| ctxbudget (offline) |") == 3
    row = next(line for line in out.splitlines() if line.startswith("| ctxbudget (offline) |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1] == "100%"  # four turns fit the window: every planted fact is still live
    assert "0 / " in row  # no request over the window


def test_a_live_fact_is_found_and_an_absent_answer_is_not() -> None:
    workload = build_workload("coding", turns=4)
    absent = Probe(kind="fact", answer="NOT-IN-THIS-SESSION-4242", query="deploy region", where="user")
    report = run_ctxbudget(dataclasses.replace(workload, probes=(*workload.probes, absent)))
    by_answer = {r.probe.answer: r for r in report.results}
    assert by_answer[absent.answer].in_context is False
    assert by_answer[absent.answer].recoverable is False
    live = [r for r in report.results if r.probe.kind == "fact" and r.probe != absent]
    assert live
    assert all(r.in_context for r in live)


def test_score_reads_tool_call_arguments_and_recovery() -> None:
    probe = Probe(kind="command", answer="make build-x-1", query="make build", where="assistant")
    assert score([probe], 'run_command {"command":"make build-x-1"}')[0].in_context
    missed = score([probe], "nothing here", recover=lambda p: True)[0]
    assert (missed.in_context, missed.recoverable) == (False, True)


def test_a_small_window_loses_old_facts_for_trim_messages_but_stays_inside_it() -> None:
    workload = build_workload("coding", turns=16)
    report = run_system("trim_messages", workload, 3_000)
    assert report.over_window == 0
    assert report.retention("fact") < 1.0
    assert report.recoverable() is None  # no archive: n/a


@pytest.mark.parametrize("name", WORKLOADS)
def test_synthetic_workloads_are_deterministic_and_planted_once(name: str) -> None:
    first, second = build_workload(name, turns=6), build_workload(name, turns=6)
    assert [m.model_dump() for m in first.messages()] == [m.model_dump() for m in second.messages()]
    assert first.probes
    check_planted(first)


@pytest.mark.parametrize("name", sorted(TRAJECTORIES))
def test_real_trajectories_load_with_their_probes(name: str) -> None:
    workload = load_trajectory(name)
    assert workload.window == 8_000
    assert len(workload.probes) >= 10
    text = request_text(workload.messages())
    assert all(p.answer in text for p in workload.probes)


def test_chat_memory_buffer_pruning_does_not_change_the_request() -> None:
    from llama_index.core.memory import ChatMemoryBuffer

    from benchmarks.quality._peers import ENCODING, _Tail
    from llamaindex_ctxbudget.convert import to_chat_message

    workload = build_workload("support", turns=10)
    initial = len(ENCODING.encode_ordinary(workload.system_prompt))
    full, pruned = (
        ChatMemoryBuffer.from_defaults(token_limit=3_000, tokenizer_fn=ENCODING.encode_ordinary) for _ in "ab"
    )
    tail = _Tail(3_000 - initial)
    for batch in workload.calls:
        for message in batch:
            chat = to_chat_message(message, include_id=True)
            full.put(chat)
            pruned.put(chat)
            tail.add(chat)
        tail.prune(pruned)
        ids = [
            [c.additional_kwargs["ctxbudget_id"] for c in m.get(initial_token_count=initial)] for m in (full, pruned)
        ]
        assert ids[0] == ids[1]
    assert len(pruned.get_all()) < len(full.get_all())


def test_the_readme_shows_the_coding_table_of_the_results_file() -> None:
    results = bench_quality.RESULTS.read_text(encoding="utf-8")
    readme = bench_quality.README.read_text(encoding="utf-8")
    block = readme.split(bench_quality.README_START, 1)[1].split(bench_quality.README_END, 1)[0].strip("\n")
    assert block == bench_quality.readme_table(results)
