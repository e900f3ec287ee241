"""Replay a workload through a context-management system and measure what its final request still shows.

Every system gets the same messages in the same model-call batches. Before each model call the system builds the
request it would send; :class:`Meter` counts it with the exact o200k tiktoken counter, checks it against the
window and for orphaned tool calls/results. After the last call the final request is scored against the probes
(see :mod:`benchmarks.quality.probes`). ``run_ctxbudget`` is the API for scratch scripts::

    from benchmarks.quality.workloads import build_workload
    from benchmarks.quality.systems import run_ctxbudget

    report = run_ctxbudget(build_workload("coding", seed=0), window=32_000)
    print(report.retention("fact"), report.missing("fact")[:5])
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ctxbudget import (
    ContextOverflowError,
    ContextSession,
    Message,
    Summarizer,
    TiktokenCounter,
    count_request,
    find_tool_pair_problems,
)

from .probes import KINDS, Probe, ProbeKind, ProbeResult, fraction, request_text, score
from .workloads import Workload

__all__ = ["SYSTEMS", "Meter", "QualityReport", "run_ctxbudget", "run_system"]

COUNTER = TiktokenCounter()
"""One exact o200k counter for every measurement (its cache is shared across systems)."""


@dataclass(frozen=True)
class QualityReport:
    """What one system kept of one workload.

    Attributes:
        system, workload, window: what ran.
        results: one entry per probe (retained in the final request; recoverable, ``None`` without an archive).
        requests: model calls made (requests built).
        final_tokens: exact tokens of the final request.
        mean_tokens: mean exact tokens over all requests.
        summary_tokens: tokens of the summary message in the final request (0 when none).
        over_window: requests whose exact count exceeded the window (or that the system refused to build).
        orphans: tool-pairing problems summed over all requests.
        final_orphans: tool-pairing problems in the final request.
        compactions: compactions run (ctxbudget) or requests the system trimmed/edited (peers).
        seconds: wall time of the replay, scoring included.
        notes: anything the reader should know about this row.
    """

    system: str
    workload: str
    window: int
    results: tuple[ProbeResult, ...]
    requests: int
    final_tokens: int
    mean_tokens: float
    summary_tokens: int
    over_window: int
    orphans: int
    final_orphans: int
    compactions: int
    seconds: float
    notes: tuple[str, ...] = ()

    def retention(self, kind: ProbeKind | None = None) -> float | None:
        """Share of probes (of ``kind``, or all) whose answer is in the final request; ``None`` when none exist."""
        return fraction(self.results, kind)

    def recoverable(self, kind: ProbeKind | None = None) -> float | None:
        """Share in context or found by a top-3 archive search; ``None`` for systems without an archive."""
        return fraction(self.results, kind, recovered=True)

    def missing(self, kind: ProbeKind | None = None) -> list[Probe]:
        """Probes (of ``kind``) absent from the final request."""
        return [r.probe for r in self.results if not r.in_context and (kind is None or r.probe.kind == kind)]

    def counts(self, kind: ProbeKind) -> tuple[int, int]:
        """(retained, total) for ``kind``."""
        chosen = [r for r in self.results if r.probe.kind == kind]
        return sum(r.in_context for r in chosen), len(chosen)

    def by_kind(self) -> dict[str, float | None]:
        """Retention per probe kind."""
        return {kind: self.retention(kind) for kind in KINDS}


@dataclass
class Meter:
    """Counts and checks every request a system builds; the last one is the final request."""

    window: int
    tokens: list[int] = field(default_factory=list)
    over_window: int = 0
    orphans: int = 0
    final: Sequence[Message] = ()
    final_orphans: int = 0

    def record(self, messages: Sequence[Message]) -> None:
        counted = count_request(COUNTER, messages)
        self.tokens.append(counted)
        self.over_window += counted > self.window
        problems = len(find_tool_pair_problems(messages))
        self.orphans += problems
        self.final, self.final_orphans = tuple(messages), problems

    def refused(self) -> None:
        """The system raised instead of building a request (counted as over the window)."""
        self.over_window += 1

    def report(
        self,
        *,
        system: str,
        workload: Workload,
        recover: Callable[[Probe], bool] | None,
        compactions: int,
        started: float,
        notes: Sequence[str] = (),
    ) -> QualityReport:
        final_text = request_text(self.final)
        summary = [m for m in self.final if m.metadata.get("ctxbudget") == "summary"]
        return QualityReport(
            system=system,
            workload=workload.name,
            window=self.window,
            results=score(workload.probes, final_text, recover),
            requests=len(self.tokens),
            final_tokens=self.tokens[-1] if self.tokens else 0,
            mean_tokens=statistics.fmean(self.tokens) if self.tokens else 0.0,
            summary_tokens=sum(COUNTER.count_message(m) for m in summary),
            over_window=self.over_window,
            orphans=self.orphans,
            final_orphans=self.final_orphans,
            compactions=compactions,
            seconds=time.perf_counter() - started,
            notes=tuple(notes),
        )


def run_ctxbudget(
    workload: Workload,
    *,
    window: int | None = None,
    summarizer: Summarizer | None = None,
    name: str = "ctxbudget (offline)",
    k: int = 3,
) -> QualityReport:
    """Replay ``workload`` through a ``ContextSession(model="gpt-4o", max_tokens=window)``, default policy.

    Args:
        workload: what to replay.
        window: the prompt budget; default the workload's (32k for the synthetic shapes).
        summarizer: ``None`` keeps the session's default offline summarizer.
        name: the row label.
        k: archive search hits checked per probe for recoverability.
    """
    started = time.perf_counter()
    window = window or workload.window
    session = ContextSession(
        model="gpt-4o", max_tokens=window, system_prompt=workload.system_prompt, summarizer=summarizer
    )
    meter = Meter(window)
    compactions = 0
    for batch in workload.calls:
        session.add(*batch)
        try:
            request = session.build_request()
        except ContextOverflowError:
            meter.refused()
            continue
        compactions += request.compaction is not None
        meter.record(request.messages)
    notes = []
    search = getattr(session, "search_archive", None)
    if search is None:
        notes.append("session.search_archive is not available in this tree: recoverability not measured")

    def recover(probe: Probe) -> bool:
        return any(probe.answer in session.read_archived(hit.handle, limit=None) for hit in search(probe.query, k=k))

    return meter.report(
        system=name,
        workload=workload,
        recover=recover if search is not None else None,
        compactions=compactions,
        started=started,
        notes=notes,
    )


def _peer(name: str) -> Callable[[Workload, int | None], QualityReport]:
    def run(workload: Workload, window: int | None) -> QualityReport:
        from . import _peers

        return getattr(_peers, name)(workload, window=window or workload.window)

    return run


def _with_fake_llm(workload: Workload, window: int | None) -> QualityReport:
    from langchain_ctxbudget import LangChainSummarizer

    from ._fake_llm import FakeSummaryLLM

    return run_ctxbudget(
        workload,
        window=window,
        summarizer=LangChainSummarizer(FakeSummaryLLM()),
        name="ctxbudget + LLM summarizer (deterministic fake: prompt structure, not a quality claim)",
    )


SYSTEMS: dict[str, Callable[[Workload, int | None], QualityReport]] = {
    "ctxbudget": lambda w, window: run_ctxbudget(w, window=window),
    "ctxbudget_fake_llm": _with_fake_llm,
    "trim_messages": _peer("run_trim_messages"),
    "chat_memory_buffer": _peer("run_chat_memory_buffer"),
    "context_editing": _peer("run_context_editing"),
}
"""Row builders by short name (``--systems``), in table order."""


def run_system(name: str, workload: Workload, window: int | None = None) -> QualityReport:
    """Run the system registered as ``name`` on ``workload``."""
    if name not in SYSTEMS:
        raise ValueError(f"unknown system {name!r}; expected one of {tuple(SYSTEMS)}")
    return SYSTEMS[name](workload, window)
