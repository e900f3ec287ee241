"""Real public agent trajectories, converted to ctxbudget messages, with probe questions written from them.

Two excerpts ship in ``benchmarks/quality/data/`` (sources, commits and licenses in its README):

* ``swe_agent``: SWE-agent (GPT-4) solving SWE-bench ``pydicom__pydicom-1458``. SWE-agent's classic format sends
  each observation as a user message; here each action becomes a ``bash`` tool call and its observation the tool
  result, as SWE-agent's function-calling mode sends them. The in-context demonstration (another task's
  trajectory) is left out.
* ``tau_bench``: tau-bench airline, GPT-4o tool-calling agent with the simulated user, task 2 (the longest).
  Repeated tool-call ids in the original are made unique (``<id>~2``).

A model call is made before every assistant message and once after the last message (the final request). Both are
replayed in an 8k window: they are 9-13k tokens long. The conversion is the core's SWE-agent and tau-bench readers
(:mod:`ctxbudget.transcripts.formats`); the originals are in ``tests/data/transcripts/`` (the tau-bench file holds
entry 52 as its entry 1). Regenerate the data files with
``python -m benchmarks.quality.trajectories SWE_AGENT_TRAJ TAU_BENCH_JSON``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ctxbudget import Message
from ctxbudget.transcripts import Transcript, parse_transcript

from ._builder import Workload
from .probes import Probe, ProbeKind, Where, message_text

DATA = Path(__file__).parent / "data"
WINDOW = 8_000

SWE_AGENT = {
    "file": "swe_agent_pydicom_1458.json",
    "source": "https://github.com/SWE-agent/SWE-agent",
    "commit": "3ea751c087f32b16e039a2233dd6eefecef325d5",
    "path": "tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__"
    "install-1/pydicom__pydicom-1458.traj",
}
TAU_BENCH = {
    "file": "tau_bench_airline_task2.json",
    "source": "https://github.com/sierra-research/tau-bench",
    "commit": "59a200c6d575d595120f1cb70fea53cef0632f6b",
    "path": "historical_trajectories/gpt-4o-airline.json",
    "entry": 52,
}

# (kind, answer, query, where): written from the trajectories by reading them.
SWE_AGENT_PROBES: tuple[tuple[ProbeKind, str, str, Where], ...] = (
    ("fact", "8da0b9b215ebfad5756051c891def88e426787e7", "commit of the numpy handler link in the issue", "user"),
    ("fact", "Floating Point Image Pixel Module", "DICOM module the issue compares", "user"),
    ("fact", "TransferSyntaxUID = '1.2.840.10008.1.2.1'", "transfer syntax UID", "user"),
    ("fact", "ds.BitsAllocated = 32", "BitsAllocated", "user"),
    ("constraint", "YOU CAN ONLY ENTER ONE COMMAND AT A TIME", "one command at a time", "user"),
    ("constraint", "you cannot use any interactive session commands", "interactive session commands", "user"),
    ("artifact", "/pydicom__pydicom/pydicom/overlays/numpy_handler.py", "numpy_handler.py matches", "tool"),
    ("artifact", "/pydicom__pydicom/pydicom/waveforms/numpy_handler.py", "numpy_handler.py matches", "tool"),
    ("artifact", "[File: /pydicom__pydicom/reproduce_bug.py (18 lines total)]", "reproduce_bug.py", "tool"),
    ("command", 'find_file \\"numpy_handler.py\\"', "find_file numpy_handler.py", "assistant"),
    ("command", "open pydicom/pixel_data_handlers/numpy_handler.py 293", "open numpy_handler.py", "assistant"),
    ("command", "edit 287:296", "edit numpy_handler.py", "assistant"),
    ("command", "unmatched ']'", "syntax error edit", "tool"),
    ("figure", "(372 lines total)", "numpy_handler.py lines total", "tool"),
    ("figure", "line 1563, in _do_pixel_data_conversion", "traceback _do_pixel_data_conversion", "tool"),
    (
        "decision",
        "when 'FloatPixelData' or 'DoubleFloatPixelData' is present",
        "exclude PixelRepresentation",
        "assistant",
    ),
    (
        "decision",
        "only if 'PixelData' is present in the dataset",
        "conditionally include PixelRepresentation",
        "assistant",
    ),
)
TAU_BENCH_PROBES: tuple[tuple[ProbeKind, str, str, Where], ...] = (
    ("fact", "It's been a tough time financially", "financial situation", "user"),
    ("fact", "I\u2019m not sure about my reservation ID", "reservation ID unknown", "user"),
    ("fact", "how much money will this save me in total", "total savings question", "user"),
    ("constraint", "without changing the flights or passengers", "do not change flights passengers", "user"),
    ("constraint", "refund to the original payment method", "refund original payment", "user"),
    ("artifact", "281 Spruce Street", "user address", "tool"),
    ("artifact", "omar.davis7857@example.com", "user email", "tool"),
    ("artifact", "7803", "credit card last four", "tool"),  # the value, however a summary writes its field
    ("artifact", "LQ940Q", "reservation LQ940Q", "tool"),
    ("command", '"expression":"(1859 - 140) * 2', "calculate savings", "assistant"),
    (
        "command",
        'search_direct_flight {"origin":"MIA","destination":"LAX","date":"2024-05-24"}',
        "MIA LAX",
        "assistant",
    ),
    ("figure", "23553.0", "total savings", "tool"),
    ("figure", "1859", "business price", "tool"),
    ("decision", "I will proceed with downgrading all your reservations", "downgrade all reservations", "assistant"),
    ("decision", "processing the refunds to the original payment methods", "refunds plan", "assistant"),
)
TRAJECTORIES = {"swe_agent": (SWE_AGENT, SWE_AGENT_PROBES), "tau_bench": (TAU_BENCH, TAU_BENCH_PROBES)}


def convert_swe_agent(traj: dict[str, Any]) -> tuple[str, list[Message]]:
    """A SWE-agent ``.traj`` as (system prompt, messages), read by the core's SWE-agent reader.

    The issue, then (thought + ``bash`` call, observation) pairs; ids ``swe-000``, ``swe-<n>a`` / ``swe-<n>t``.
    """
    return _split(parse_transcript(json.dumps(traj), format="swe-agent", source="swe-agent"))


def convert_tau_bench(entry: dict[str, Any]) -> tuple[str, list[Message]]:
    """A tau-bench historical trajectory as (system prompt, messages), read by the core's tau-bench reader.

    The messages are read exactly (provider extras in metadata); the converted data keeps only what the replay
    uses, so the extras are dropped. Ids ``tau-<n>``; reused tool-call ids get ``~2``, ``~3``.
    """
    transcript = parse_transcript(json.dumps(entry), format="tau-bench", source="tau-bench")
    system, messages = _split(transcript)
    return system, [m.model_copy(update={"metadata": {}}) for m in messages]


def _split(transcript: Transcript) -> tuple[str, list[Message]]:
    first, *rest = transcript.messages
    if first.role != "system":
        raise ValueError(f"{transcript.source}: expected the system prompt first, got a {first.role} message")
    return first.text, rest


def model_calls(messages: Sequence[Message]) -> tuple[tuple[Message, ...], ...]:
    """Batches ending right before each assistant message (a model call produced it), then the final batch."""
    calls: list[tuple[Message, ...]] = []
    batch: list[Message] = []
    for message in messages:
        if message.role == "assistant" and batch:
            calls.append(tuple(batch))
            batch = []
        batch.append(message)
    calls.append(tuple(batch))
    return tuple(calls)


def _probes(specs: Iterable[tuple[ProbeKind, str, str, Where]], messages: Sequence[Message]) -> tuple[Probe, ...]:
    texts = {m.id: message_text(m) for m in messages}
    probes = []
    for kind, answer, query, where in specs:
        holders = tuple(mid for mid, text in texts.items() if answer in text)
        if not holders:
            raise AssertionError(f"probe {kind} {answer!r} does not occur in the trajectory")
        probes.append(Probe(kind=kind, answer=answer, query=query, where=where, planted_in=holders))
    return tuple(probes)


def load_trajectory(name: str) -> Workload:
    """The stored excerpt ``name`` (``swe_agent``, ``tau_bench``) as a workload with its probes."""
    meta, specs = TRAJECTORIES[name]
    data = json.loads((DATA / str(meta["file"])).read_text(encoding="utf-8"))
    messages = [Message.model_validate(m) for m in data["messages"]]
    return Workload(
        name=name,
        system_prompt=data["system_prompt"],
        calls=model_calls(messages),
        probes=_probes(specs, messages),
        window=WINDOW,
        source=f"{meta['source']} @ {str(meta['commit'])[:12]}: {meta['path']}",
    )


def _write(meta: dict[str, Any], system: str, messages: list[Message]) -> None:
    payload = {
        "source": meta["source"],
        "commit": meta["commit"],
        "path": meta["path"],
        "license": "MIT",
        "system_prompt": system,
        "messages": [m.model_dump(mode="json", exclude_defaults=True) for m in messages],
    }
    (DATA / meta["file"]).write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Regenerate the converted trajectory excerpts.")
    parser.add_argument("swe_agent_traj", type=Path, help=f"SWE-agent {SWE_AGENT['path']}")
    parser.add_argument("tau_bench_json", type=Path, help=f"tau-bench {TAU_BENCH['path']}")
    args = parser.parse_args(argv)
    _write(SWE_AGENT, *convert_swe_agent(json.loads(args.swe_agent_traj.read_text(encoding="utf-8"))))
    entries = json.loads(args.tau_bench_json.read_text(encoding="utf-8"))
    _write(TAU_BENCH, *convert_tau_bench(entries[int(TAU_BENCH["entry"])]))  # type: ignore[call-overload]


if __name__ == "__main__":
    main()
