"""Compaction on a third-party suite: compaction-conformance-kit's budget benchmark, ctxbudget beside its compactors.

The kit (PyPI ``compaction-conformance-kit==0.8.0``, MIT, no model calls) plants typed canaries (safety rules, hard
constraints, facts, goal state, user preferences) in scripted sessions, compacts them at a fixed character budget
(a share of the original transcript, the same in every round) for five rounds, and checks which canaries' required
tokens are still in the compacted text. Its semantic suites also plant *paraphrased* updates ("keep project spend
under five hundred dollars" after "Budget cap is $800"): an update is resolved when the latest value is in view and
the stale one is not.

ctxbudget runs behind the kit's ``compact(turns, round_num, budget_chars)`` protocol as a user would wire it:

* round 1: a :class:`~ctxbudget.ContextSession` with the system turn as its system prompt and every user and
  assistant turn added as it is; its window is the budget, counted in characters of the kit's own rendering
  (``[role] text`` per line), so "the request fits the window" and "the output fits the budget" are one statement;
  then ``compact()`` (a manual compaction with the default tiers and summarizer), and the request rendered back as
  ``[role] text`` lines.
* rounds 2-5: the kit feeds the previous round's output back as one system turn. When that is exactly the text this
  compactor returned, it is the same session compacting again (what repeated ``/compact`` in a long session does):
  ``compact()`` runs on the session, and its request is rendered. Any other input starts a fresh session.

Run: ``python -m benchmarks.bench_external`` (writes ``benchmarks/results/external.md``); ``--seeds 1-4`` and
``--budgets 0.3`` for a quicker look; ``--show SEED`` prints ctxbudget's compacted output for one seed.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compaction_kit.benchmark import run_budget_benchmark
from compaction_kit.canaries import CanaryType
from compaction_kit.cli import COMPACTORS
from compaction_kit.compacted import CompactedContext
from compaction_kit.corpus import build_random_session
from compaction_kit.runner import run_conformance
from compaction_kit.semantic_corpus import build_semantic_heldout_session, build_semantic_session
from compaction_kit.session import Turn, build_seeded_session
from compaction_kit.versioning import kit_version
from ctxbudget import CharCounter, CompactionPolicy, ContextSession, Message, Summarizer

RESULTS = Path(__file__).parent / "results" / "external.md"
BUDGETS = (0.10, 0.20, 0.30)
SEEDS = tuple(range(1, 13))
ROUNDS = 5


class KitCounter(CharCounter):
    """Counts a message as the characters of its ``[role] text`` line (plus the newline joining it to the next)."""

    def __init__(self) -> None:
        super().__init__(chars_per_token=1.0)

    @property
    def request_overhead(self) -> int:
        """No reply priming: the kit measures the rendered text only."""
        return 0

    def count_message(self, message: Message) -> int:
        """``len("[role] text\\n")``, tool calls rendered after the text."""
        return len(_render_one(message)) + 1


def _render_one(message: Message) -> str:
    calls = " ".join(f"{call.name}({call.args_json()})" for call in message.tool_calls)
    text = f"{message.text} {calls}".strip() if calls else message.text
    return f"[{message.role}] {text}"


def render(messages: Sequence[Message]) -> str:
    """A request as the kit's transcripts are written: one ``[role] text`` block per message."""
    return "\n".join(_render_one(message) for message in messages)


class CtxbudgetKitCompactor:
    """ctxbudget's default compaction behind the kit's compactor protocol (see the module docstring).

    Args:
        summarizer: ``None`` for the default (offline ledger); a factory for an LLM summarizer path.
        name: the row's name in the kit's tables.
    """

    def __init__(self, summarizer: Callable[[], Summarizer] | None = None, name: str = "ctxbudget") -> None:
        self.name = name
        self._summarizer = summarizer
        self._session: ContextSession | None = None
        self._last: str | None = None

    def _new_session(self, turns: Sequence[Turn], budget: int) -> ContextSession:
        system = "\n".join(t.text for t in turns if t.role == "system") or None
        session = ContextSession(
            max_tokens=budget,
            counter=KitCounter(),
            system_prompt=system,
            policy=CompactionPolicy(auto=False, threshold=1.0, target=1.0, hard_stop=1.0),
            summarizer=self._summarizer() if self._summarizer is not None else None,
        )
        for turn in turns:
            if turn.role == "user":
                session.add_user(turn.text)
            elif turn.role == "assistant":
                session.add_assistant(turn.text)
        return session

    def compact(self, turns: list[Turn], round_num: int = 1, budget_chars: int | None = None) -> CompactedContext:
        """Compact ``turns`` into at most ``budget_chars`` characters (the whole transcript when ``None``)."""
        again = self._session is not None and len(turns) == 1 and turns[0].text == self._last
        if not again:
            budget = budget_chars or sum(len(f"[{t.role}] {t.text}") + 1 for t in turns)
            self._session = self._new_session(turns, budget)
        assert self._session is not None
        self._session.compact()
        text = render(self._session.build_request().messages)
        self._last = text
        return CompactedContext(text=text, compactor_name=self.name, round_num=round_num)


def _fake_llm_summarizer() -> Summarizer:
    from benchmarks.quality._fake_llm import FakeSummaryLLM
    from langchain_ctxbudget import LangChainSummarizer

    return LangChainSummarizer(FakeSummaryLLM())


def factories(include_builtins: bool = True) -> dict[str, Callable[[], Any]]:
    """Every compactor of the run: ctxbudget's two paths, then the kit's eight built-ins."""
    ours: dict[str, Callable[[], Any]] = {
        "ctxbudget": CtxbudgetKitCompactor,
        "ctxbudget + LLM summary (fake)": lambda: CtxbudgetKitCompactor(_fake_llm_summarizer, "ctxbudget + LLM (fake)"),
    }
    if include_builtins:
        ours.update(dict(COMPACTORS.items()))
    return ours


def seeded_curves(names: Mapping[str, Callable[[], Any]], budget: float) -> dict[str, dict[str, list[float]]]:
    """Per-type survival curves (rounds 1-5) on the kit's hand-built seeded session, for each compactor."""
    session = build_seeded_session()
    curves: dict[str, dict[str, list[float]]] = {}
    for name, factory in names.items():
        run = run_conformance(session, factory(), rounds=ROUNDS, budget_fraction=budget)
        curves[name] = {ctype.value: run.survival_curve(ctype) for ctype in CanaryType}
    return curves


def stale_unmarked(factory: Callable[[], Any], budget: float, seeds: Sequence[int]) -> tuple[int, int]:
    """Stale values of the semantic suites still in view in the final round without a ``(was`` / ``earlier`` mark.

    Returns (unmarked stale values, conflicts). A stale token counts as marked when the line it is on says it is a
    superseded value (``was:``, ``earlier``, ``replaced``, ``superseded``).
    """
    unmarked = total = 0
    for builder in (build_semantic_session, build_semantic_heldout_session):
        for seed in seeds:
            session, canaries, meta = builder(seed)
            run = run_conformance(session, factory(), rounds=ROUNDS, canaries=canaries, budget_fraction=budget)
            lines = run.rounds[-1].context.text.lower().splitlines()
            for cid in meta["conflicts"]:
                canary = next(c for c in canaries if c.id == cid)
                total += 1
                for token in canary.superseded_tokens:
                    hits = [line for line in lines if token.lower() in line]
                    if any(not _marked(line, token.lower()) for line in hits):
                        unmarked += 1
                        break
    return unmarked, total


def _marked(line: str, token: str) -> bool:
    index = line.find(token)
    before = line[:index]
    return any(mark in before for mark in ("was:", "(was", "earlier", "replaced", "superseded"))


def _parse_range(spec: str) -> tuple[int, ...]:
    out: list[int] = []
    for part in spec.split(","):
        if "-" in part:
            low, high = part.split("-")
            out.extend(range(int(low), int(high) + 1))
        elif part:
            out.append(int(part))
    return tuple(out)


def markdown(payload: dict[str, Any], curves: dict[str, dict[str, list[float]]], stale: dict[str, Any]) -> str:
    """The results page: the kit's leaderboard per budget, stale values unmarked, and the seeded session's curves."""
    lines = [
        "# Compaction on a third-party suite: compaction-conformance-kit",
        "",
        f"Generated by `python -m benchmarks.bench_external` (kit {payload['kit_version']}, seeds "
        f"{payload['seeds'][0]}-{payload['seeds'][-1]}, {payload['rounds']} rounds, Python "
        f"{platform.python_version()}, {payload['elapsed']:.0f}s). Budgets are characters, a share of the original "
        "transcript, fixed across rounds. Survival: canaries (safety rules, hard constraints, facts, goal state, user "
        "preferences) whose required tokens are all in the final round's text, randomized suite. Semantic resolved: "
        "paraphrased updates whose latest value is in view and whose stale value is not (the kit's semantic and "
        "held-out suites). Stale present: conflicts whose stale value is anywhere in view. Stale unmarked: ours only, "
        "stale values on a line that does not mark them superseded. Distinct pairs: near-duplicate items that must "
        "both survive. The kit's `semantic-checklist` resolves updates with a taxonomy of the kit's own domains "
        "(budget, deadline, codename, timezone, ...); ctxbudget knows none of them.",
        "",
    ]
    for budget in payload["budgets"]:
        lines += [
            f"## Budget {budget:.0%}",
            "",
            "| rank | compactor | within budget | survival | semantic resolved | stale present | stale unmarked "
            "| distinct pairs | final output |",
            "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        group = sorted((e for e in payload["entries"] if e["budget_fraction"] == budget), key=lambda e: e["rank"])
        for entry in group:
            sem = entry["semantic"]["conflicts"]
            unmarked = stale.get(f"{entry['compactor']}@{budget}")
            lines.append(
                f"| {entry['rank']} | {entry['compactor']} | {'yes' if entry['budget_compliant'] else 'NO'} | "
                f"{entry['randomized']['overall_final_survival']:.1%} | {entry['semantic']['resolved_rate']:.1%} | "
                f"{sem['stale']}/{sem['n']} | {'' if unmarked is None else f'{unmarked[0]}/{unmarked[1]}'} | "
                f"{entry['semantic']['distinct_pair_rate']:.1%} | {entry['mean_final_output_ratio']:.1%} |"
            )
        lines.append("")
    for budget, by_name in curves.items():
        lines += [
            f"## Seeded session, budget {budget}: survival by type, rounds 1-5",
            "",
            "| compactor | " + " | ".join(t.value for t in CanaryType) + " |",
            "| --- |" + " ---: |" * len(CanaryType),
        ]
        for name, by_type in by_name.items():
            cells = [", ".join(f"{v:.0%}" for v in by_type[t.value]) for t in CanaryType]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def run(budgets: Sequence[float], seeds: Sequence[int], include_builtins: bool = True) -> str:
    """Run everything and return the markdown page."""
    started = time.perf_counter()
    names = factories(include_builtins)
    payload = run_budget_benchmark(names, budgets=budgets, seeds=seeds, rounds=ROUNDS)
    stale = {}
    for budget in budgets:
        for name in ("ctxbudget", "ctxbudget + LLM summary (fake)"):
            stale[f"{name}@{budget}"] = stale_unmarked(names[name], budget, seeds)
    curves = {f"{budget:.0%}": seeded_curves(names, budget) for budget in budgets if budget in (0.3, 0.2)}
    payload["elapsed"] = time.perf_counter() - started
    payload["kit_version"] = kit_version()
    return markdown(payload, curves, stale)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--budgets", default=",".join(str(b) for b in BUDGETS))
    parser.add_argument("--seeds", default="1-12")
    parser.add_argument("--ours-only", action="store_true", help="leave the kit's built-ins out")
    parser.add_argument("--show", type=int, default=None, help="print ctxbudget's output for this seed and stop")
    parser.add_argument("--suite", default="random", choices=["random", "semantic", "heldout", "seeded"])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    budgets = tuple(float(b) for b in args.budgets.split(","))
    if args.show is not None:
        builders = {
            "random": lambda s: build_random_session(s)[:2],
            "semantic": lambda s: build_semantic_session(s)[:2],
            "heldout": lambda s: build_semantic_heldout_session(s)[:2],
            "seeded": lambda s: (build_seeded_session(), None),
        }
        session, canaries = builders[args.suite](args.show)
        for budget in budgets:
            result = run_conformance(
                session, CtxbudgetKitCompactor(), rounds=ROUNDS, canaries=canaries, budget_fraction=budget
            )
            last = result.rounds[-1]
            print(
                f"--- budget {budget:.0%}: {last.output_chars}/{last.budget_chars} chars, lost:",
                json.dumps([k for k, v in last.survived.items() if not v]),
            )
            print(result.rounds[0].context.text)
        return 0
    page = run(budgets, _parse_range(args.seeds), include_builtins=not args.ours_only)
    print(page)
    if not args.no_write:
        RESULTS.write_text(page + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
