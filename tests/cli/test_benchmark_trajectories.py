"""The quality benchmark's trajectories are the core readers' output on the committed public originals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ctxbudget import Message

from benchmarks.quality.trajectories import DATA, SWE_AGENT, TAU_BENCH, convert_swe_agent, convert_tau_bench

ORIGINALS = Path(__file__).parents[1] / "data" / "transcripts"


def _converted(meta: dict[str, Any]) -> tuple[str, list[Message]]:
    data = json.loads((DATA / str(meta["file"])).read_text(encoding="utf-8"))
    return data["system_prompt"], [Message.model_validate(m) for m in data["messages"]]


@pytest.mark.parametrize("name", ["swe_agent", "tau_bench"])
def test_benchmark_data_is_what_the_core_reader_gives(name: str) -> None:
    if name == "swe_agent":
        traj = json.loads((ORIGINALS / "swe_agent_pydicom_1458.traj").read_text(encoding="utf-8"))
        system, messages = convert_swe_agent(traj)
        expected = _converted(SWE_AGENT)
    else:
        entries = json.loads((ORIGINALS / "tau_bench_gpt4o_airline.json").read_text(encoding="utf-8"))
        system, messages = convert_tau_bench(entries[1])  # the excerpt's entry 1 is the file's entry 52
        expected = _converted(TAU_BENCH)
        assert entries[1]["task_id"] == 2
    assert system == expected[0]
    assert [m.model_dump(exclude_defaults=True) for m in messages] == [
        m.model_dump(exclude_defaults=True) for m in expected[1]
    ]
