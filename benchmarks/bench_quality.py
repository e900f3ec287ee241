"""Compaction quality: after compaction, what does the model still see?

Each workload (see ``benchmarks/quality/workloads.py``) is a long agent session with planted probes: user facts,
constraints, decisions, file paths in the middle of tool outputs, commands and figures. Every system replays it in
the same small window, building the request it would send before each model call; the final request is scored:
share of each probe kind still in it, share recoverable through a top-3 archive search (ctxbudget only), tokens,
requests over the window, orphaned tool calls/results and compactions.

Run: ``python -m benchmarks.bench_quality`` (writes ``benchmarks/results/quality.md`` and the README's coding table);
``--quick`` for a short run that only prints, ``--systems ctxbudget,trim_messages`` and ``--workloads coding`` to
pick, ``--readme`` to only copy the coding table from the results file into the README.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

from benchmarks.quality.probes import KINDS
from benchmarks.quality.systems import SYSTEMS, QualityReport, run_system
from benchmarks.quality.trajectories import TRAJECTORIES
from benchmarks.quality.workloads import WORKLOADS, build_workload

RESULTS = Path(__file__).parent / "results" / "quality.md"
README = Path(__file__).resolve().parents[1] / "README.md"
README_START = "<!-- quality-table:start -->"
README_END = "<!-- quality-table:end -->"
WINDOW = 32_000
ALL_WORKLOADS = (*WORKLOADS, *TRAJECTORIES)
DESCRIPTIONS = {
    "coding": "Synthetic: a user and a coding agent, 300 turns, 1-2 parallel tool calls per turn, outputs of 100-6,000 "
    "words (one in seven large); 60 user facts (a few superseded later), 20 constraints, 25 decisions, 65 file "
    "paths in the middle of tool outputs, 30 commands, 30 figures",
    "long_run": "Synthetic: one user goal (12 facts, 6 rules), then one agent run of 320 tool steps with no user "
    "message, parallel calls, an interrupted reply in the middle and an unanswered tool call at the end",
    "support": "Synthetic, tau-bench-like: 200 support turns; user facts (addresses, phones, budgets, a few updated), "
    "rules, JSON lookups with tracking ids and amounts inside, actions with confirmation codes",
    "swe_agent": "Real: SWE-agent (GPT-4) solving SWE-bench pydicom-1458, 12 steps, probes written from the "
    "trajectory (see `benchmarks/quality/data/README.md`)",
    "tau_bench": "Real: tau-bench airline task 2, GPT-4o agent and simulated user, 61 messages, probes written from "
    "the trajectory",
}
CAVEATS = """## How to read this

- A probe is an exact string: a summary that paraphrases a fact loses it here. That favours verbatim extraction
  (the offline summarizer) over a real LLM's wording.
- The synthetic sessions mark what they plant (`FACT-n:`, `Decision:`, `Constraint:`, `Preference:`) and every
  answer is unique; a summarizer tuned to those markers would score better here than on real sessions. The two real
  trajectories, with probes written by hand, are the check on that.
- Recoverable is measured for ctxbudget only: its archive is searchable (`search_archive`, top-3 hits, answer in
  the full original). The peers keep the full history in their own state, but the model has no tool to search it
  in these setups, so their cell is n/a. Archived originals are read back as message text: a command that lives
  only in a tool call's arguments is not recoverable that way (the synthetic commands also echo in their output).
- `trim_messages(start_on="human")` and `ChatMemoryBuffer` keep a suffix that starts at a user message: in one long
  agent run (long_run, the trajectories) the tail since the last user message no longer fits, and they send little
  more than the system prompt.
- `ChatMemoryBuffer` counts message text only, with its own tokenizer call (no per-message overhead, no tool-call
  arguments; the system prompt is passed as `initial_token_count`); by the exact count its requests can exceed the
  window.
- `ContextEditingMiddleware` only clears old tool outputs (on a copy, each call; trigger at 80% of the window, the
  3 newest kept); user and assistant text still grows until requests exceed the window.
- The fake-LLM row answers ctxbudget's summary prompt by copying one bullet per message into the prompt's sections;
  the session then checks a model's summary against its offline ledger and re-adds what it dropped. It shows what
  the prompt and that check carry, not how a real model would do.
- Tokens are exact o200k counts of the request as built (no tool schemas are sent, for every system alike).
- Summary tokens: the whole summary message ctxbudget sends (its header, the pinned goal once the goal message has
  left the history, and the summary itself).
"""


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def table(reports: Sequence[QualityReport]) -> str:
    """One Markdown table: rows = systems, columns = retention per kind, recoverable, tokens, failures."""
    first = reports[0]
    kinds = [k for k in KINDS if first.counts(k)[1]]
    header = [
        "system",
        *(f"{k} ({first.counts(k)[1]})" for k in kinds),
        "all in context",
        "recoverable (top-3)",
        "final prompt tokens",
        "mean prompt tokens",
        "summary tokens",
        "requests over window",
        "orphans (final / all)",
        "compactions (peers: requests trimmed)",
    ]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for r in reports:
        cells = [
            r.system,
            *(_pct(r.retention(k)) for k in kinds),
            _pct(r.retention()),
            _pct(r.recoverable()),
            f"{r.final_tokens:,}",
            f"{r.mean_tokens:,.0f}",
            f"{r.summary_tokens:,}",
            f"{r.over_window} / {r.requests}",
            f"{r.final_orphans} / {r.orphans}",
            str(r.compactions),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section(name: str, reports: Sequence[QualityReport], *, about: str) -> str:
    notes = sorted({f"{r.system}: {note}" for r in reports for note in r.notes})
    timing = ", ".join(f"{r.system} {r.seconds:.1f}s" for r in reports)
    parts = [f"## {name}", "", f"{about}; window {reports[0].window:,} tokens.", "", table(reports), ""]
    parts += [f"- {note}" for note in notes]
    parts += [f"- replay time: {timing}", ""]
    return "\n".join(parts)


def run(
    workloads: Sequence[str], systems: Sequence[str], *, quick: bool, seed: int, turns: int | None = None
) -> list[str]:
    sections = []
    for name in workloads:
        workload = build_workload(name, seed=seed, quick=quick, turns=turns)
        messages = sum(len(batch) for batch in workload.calls)
        reports = []
        for system in systems:
            report = run_system(system, workload, None if name not in WORKLOADS else WINDOW)
            print(f"{name:>10} | {report.system[:40]:<40} {report.retention():.0%} in context, {report.seconds:.1f}s")
            reports.append(report)
        about = f"{len(workload.calls)} model calls, {messages} messages, {len(workload.probes)} probes"
        if name in DESCRIPTIONS and not quick:
            about = f"{DESCRIPTIONS[name]}. {about}"
        sections.append(section(name, reports, about=about))
    return sections


README_DROPS = ("all in context", "mean prompt tokens", "compactions (peers: requests trimmed)")
"""Columns of the results table the README leaves out (it links to the full table)."""


def readme_table(results: str, workload: str = "coding") -> str:
    """The ``workload`` table of a results file, without :data:`README_DROPS` (what the README shows)."""
    rows: list[list[str]] = []
    for line in results.split(f"## {workload}\n", 1)[1].splitlines():
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    keep = [i for i, name in enumerate(rows[0]) if name not in README_DROPS]
    return "\n".join("| " + " | ".join(row[i] for i in keep) + " |" for row in rows)


def update_readme(results: str) -> bool:
    """Copy the coding table into the README between the quality-table markers; ``True`` when it changed."""
    readme = README.read_text(encoding="utf-8")
    start, end = readme.find(README_START), readme.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"README.md must contain {README_START} followed by {README_END}")
    updated = readme[: start + len(README_START)] + "\n" + readme_table(results) + "\n" + readme[end:]
    if updated != readme:
        README.write_text(updated, encoding="utf-8")
    return updated != readme


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short sessions; print only, write nothing")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated, from {','.join(SYSTEMS)}")
    parser.add_argument("--workloads", default=",".join(ALL_WORKLOADS), help="comma-separated workload names")
    parser.add_argument("--readme", action="store_true", help="only copy the coding table from the results file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--turns", type=int, default=None, help="turns of the synthetic workloads (tests use a few)")
    parser.add_argument("--output", type=Path, default=None, help=f"write the tables here (default {RESULTS})")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.readme:
        changed = update_readme(RESULTS.read_text(encoding="utf-8"))
        print("README quality table " + ("updated" if changed else "already up to date"))
        return 0
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    started = time.perf_counter()
    sections = run(workloads, systems, quick=args.quick, seed=args.seed, turns=args.turns)
    elapsed = time.perf_counter() - started
    body = "\n".join(sections)
    print()
    print(body)
    output = args.output or (None if args.quick else RESULTS)
    if output is not None:
        header = (
            "# Compaction quality: what the model still sees\n\n"
            "Generated by `python -m benchmarks.bench_quality` "
            f"(seed {args.seed}, {elapsed:.0f}s, Python {platform.python_version()}). Columns per probe kind: share of "
            "planted answers still present (exact substring) in the final request. Recoverable: in context, or in "
            "the full original of a top-3 `search_archive` hit. Tokens are exact o200k counts of the request as "
            "sent; orphans are tool calls/results without their pair (in the final request / summed over all "
            "requests). Compactions: compactions ctxbudget ran; for a peer, requests it trimmed or edited.\n\n"
        )
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(header + CAVEATS + "\n" + body, encoding="utf-8")
        print(f"written to {output}")
        if output == RESULTS and "coding" in workloads and not args.quick:
            update_readme(output.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
