"""Compaction on real transcripts: is what a model needs to continue still in the request at 30% and 10%?

For each transcript of the set in ``benchmarks/quality/real/`` (public sessions nobody here wrote: Claude Code,
mini-swe-agent, tau-bench, an Anthropic SDK request body; see :mod:`benchmarks.quality.real`) and each budget, every
system gets the whole transcript once and produces the request it would send next. The budget at 30% (10%) is the
header, which every system sends whole and none compacts (the leading system messages, the tool schemas and the
request overhead), plus 30% (10%) of the rest of the transcript's exact o200k token count. ``--of-whole`` takes 30%
(10%) of the whole count instead, as literally asked; there a tau-bench policy prompt (17% of its transcript) or the
customer-support tool schemas (9%) leave no system any room at 10%, so that mode measures the header, not compaction.

* **ctxbudget**: a :class:`~ctxbudget.ContextSession` with the default policy, whose compaction target (60% of the
  window) is the budget: the window is the budget / 0.6 (the transcript's leading system messages as its system
  prompt, its tools as its tools), every message added, ``compact()``, then ``build_request()``, which lands at or
  under the budget as trim_messages does. A
  probe missing from the request is *recovered* when ``search_archive(question, k=3)`` returns a hit that shows
  the answer (its call, ``hit.call``) or whose handles read it back: the full original under ``hit.handle``
  (tool-call arguments included) or the whole call under ``hit.call_handle`` (named when the call shown was cut).
* **trim_messages**: ``langchain_core.messages.trim_messages`` keeping the newest messages that fit the budget less
  the tool schemas (strategy ``last``, ``start_on="human"``, ``include_system=True``, the same exact counter).
* **semantic-checklist**: compaction-conformance-kit 0.8.0's compactor, given the messages as ``[role] text`` turns
  (tool calls rendered with their arguments) and the budget converted to characters of that rendering (budget
  tokens times the rendering's characters per token).
* **Claude Code** (the one transcript that holds Claude Code's own compaction): its continuation summary plus what
  it sent with it before the next reply; the same for both budgets, its size shown as a share of the span.

A probe is *in the request* when its answer appears verbatim in the request's text (message text and tool-call
arguments). The table pools probes over transcripts. "Tail floor" is the share of probes whose answer also appears
in the last 30% of the transcript (which a system that keeps the newest messages sees anyway).

Run: ``python -m benchmarks.bench_real`` (writes ``benchmarks/results/real.md`` and one file per ctxbudget summary in
``benchmarks/results/real_summaries/``); ``--only NAME[,NAME]`` for some transcripts (prints only);
``--show NAME`` prints a transcript's messages with their indices (what probe ``message`` fields refer to).
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbudget import CompactionPolicy, ContextSession, CtxBudgetError, Message, count_request

from benchmarks.quality.probes import message_text, request_text
from benchmarks.quality.real import HELDOUT, RealTranscript, cut, load_set
from benchmarks.quality.systems import COUNTER

RESULTS = Path(__file__).parent / "results" / "real.md"
SUMMARIES = Path(__file__).parent / "results" / "real_summaries"
FRACTIONS = (0.3, 0.1)
SEARCH_K = 3
OURS, TRIM, KIT, CLAUDE = "ctxbudget", "trim_messages", "semantic-checklist", "Claude Code"


@dataclass(frozen=True)
class Outcome:
    """What one system's request shows of one transcript at one budget.

    Attributes:
        system, name: what ran on what.
        budget: the token budget (``None`` for Claude Code's own summary, which has none).
        tokens: exact o200k tokens of the request (``None`` when no request could be built).
        found: per probe, whether its answer is in the request.
        recovered: per probe, in the request or in a top-3 search hit's original (``None``: no archive).
        error: why no request was built, if none was.
        seconds: wall time to build the request (search excluded).
        summary: ctxbudget's summary message as the request carried it (the pinned goal and the summary), if any.
    """

    system: str
    name: str
    budget: int | None
    tokens: int | None
    found: tuple[bool, ...]
    recovered: tuple[bool, ...] | None
    error: str | None = None
    seconds: float = 0.0
    summary: str | None = None


def transcript_tokens(transcript: RealTranscript) -> int:
    """The transcript's own size: every message, its tool schemas and the request overhead, exact o200k."""
    return count_request(COUNTER, transcript.messages, transcript.tools)


def header_tokens(transcript: RealTranscript) -> int:
    """What every request carries whole and no system compacts: the system prompt, the tool schemas, the overhead."""
    return count_request(COUNTER, transcript.messages[: transcript.lead], transcript.tools)


def budget_for(transcript: RealTranscript, fraction: float, *, of_whole: bool = False) -> int:
    """The token budget at ``fraction``: of the compactable part, on top of the header (``of_whole``: of it all)."""
    tokens = transcript_tokens(transcript)
    if of_whole:
        return math.floor(tokens * fraction)
    header = header_tokens(transcript)
    return header + math.floor((tokens - header) * fraction)


def _found(transcript: RealTranscript, text: str) -> tuple[bool, ...]:
    return tuple(probe.answer in text for probe in transcript.probes)


def _failed(system: str, transcript: RealTranscript, budget: int, exc: Exception, started: float) -> Outcome:
    missing = tuple(False for _ in transcript.probes)
    return Outcome(
        system=system,
        name=transcript.name,
        budget=budget,
        tokens=None,
        found=missing,
        recovered=missing if system == OURS else None,
        error=f"{type(exc).__name__}: {exc}",
        seconds=time.perf_counter() - started,
    )


def run_ours(transcript: RealTranscript, budget: int) -> Outcome:
    """ctxbudget's default compaction in a window of ``budget`` tokens, then the archive search for what is missing."""
    started = time.perf_counter()
    try:
        window = math.floor(budget / CompactionPolicy().target)  # the default policy compacts to the budget
        session = ContextSession(
            max_tokens=window, counter=COUNTER, system_prompt=transcript.system_prompt, tools=transcript.tools
        )
        session.add(*transcript.history)
        session.compact()
        request = session.build_request()
    except CtxBudgetError as exc:
        return _failed(OURS, transcript, budget, exc, started)
    seconds = time.perf_counter() - started
    found = _found(transcript, request_text(request.messages))
    recovered = tuple(
        seen or _search_finds(session, probe.question, probe.answer)
        for seen, probe in zip(found, transcript.probes, strict=True)
    )
    return Outcome(
        system=OURS,
        name=transcript.name,
        budget=budget,
        tokens=count_request(COUNTER, request.messages, request.tools),
        found=found,
        recovered=recovered,
        seconds=seconds,
        summary=next((m.text for m in request.messages if m.metadata.get("ctxbudget") == "summary"), None),
    )


def _search_finds(session: ContextSession, question: str, answer: str) -> bool:
    """Whether a top-3 hit for ``question`` shows ``answer`` or holds it in an original its handles read back.

    A hit shows its call (``hit.call``); reading back its handle gives the original, and ``hit.call_handle`` (named
    when the call shown had to be cut) the whole call: what a model sees from the hit, or one read away.
    """
    for hit in session.search_archive(question, k=SEARCH_K):
        entry = session.archive.get(hit.handle)
        original = session.read_archived(hit.handle, limit=None)
        if entry.message is not None:
            original = f"{original}\n{message_text(entry.message)}"
        if hit.call_handle is not None:
            original = f"{original}\n{session.read_archived(hit.call_handle, limit=None)}"
        if answer in original or answer in (hit.call or ""):
            return True
    return False


def run_trim(transcript: RealTranscript, budget: int) -> Outcome:
    """``trim_messages`` keeping the newest messages that fit the budget (less the tool schemas the request carries)."""
    from langchain_core.messages.utils import trim_messages

    started = time.perf_counter()
    side = _ById()
    system = (
        [Message(role="system", content=transcript.system_prompt, id=f"{transcript.name}-system")]
        if transcript.system_prompt
        else []
    )
    history = [side.to_langchain(m) for m in (*system, *transcript.history)]
    limit = budget - COUNTER.count_tools(transcript.tools)
    kept = trim_messages(
        history,
        max_tokens=max(limit, 0),
        token_counter=side.count,
        strategy="last",
        start_on="human",
        include_system=True,
    )
    messages = side.to_core(kept)
    return Outcome(
        system=TRIM,
        name=transcript.name,
        budget=budget,
        tokens=count_request(COUNTER, messages, transcript.tools),
        found=_found(transcript, request_text(messages)),
        recovered=None,
        seconds=time.perf_counter() - started,
    )


class _ById:
    """LangChain copies of messages, each mapped back to its original and its exact count by message id."""

    def __init__(self) -> None:
        from langchain_ctxbudget.convert import to_langchain

        self._to = to_langchain
        self._core: dict[str, Message] = {}
        self._counts: dict[str, int] = {}

    def to_langchain(self, message: Message) -> Any:
        converted = self._to(message)
        self._core[message.id] = message
        self._counts[message.id] = COUNTER.count_message(message)
        return converted

    def count(self, messages: Sequence[Any]) -> int:
        """Exact request tokens of LangChain messages (the counter trim_messages is given)."""
        return COUNTER.request_overhead + sum(self._counts[m.id] for m in messages)

    def to_core(self, messages: Sequence[Any]) -> list[Message]:
        return [self._core[m.id] for m in messages]


def run_kit(transcript: RealTranscript, budget: int) -> Outcome:
    """The kit's ``semantic-checklist`` compactor, the budget in characters of its ``[role] text`` turns."""
    from compaction_kit import SemanticChecklistCompactor, Turn  # type: ignore[import-untyped]  # ships no py.typed

    started = time.perf_counter()
    turns = [Turn(role=m.role, text=message_text(m)) for m in transcript.messages]
    rendering = "\n".join(f"[{turn.role}] {turn.text}" for turn in turns)
    budget_chars = budget * len(rendering) // max(1, COUNTER.count_text(rendering))
    compacted = SemanticChecklistCompactor().compact(turns, round_num=1, budget_chars=budget_chars)
    return Outcome(
        system=KIT,
        name=transcript.name,
        budget=budget,
        tokens=COUNTER.count_text(compacted.text),
        found=_found(transcript, compacted.text),
        recovered=None,
        seconds=time.perf_counter() - started,
    )


def run_claude_code(transcript: RealTranscript) -> Outcome | None:
    """What Claude Code itself sent in place of the span it compacted; ``None`` for other transcripts."""
    if transcript.claude_code_kept is None:
        return None
    kept = transcript.claude_code_kept
    return Outcome(
        system=CLAUDE,
        name=transcript.name,
        budget=None,
        tokens=count_request(COUNTER, kept),
        found=_found(transcript, request_text(kept)),
        recovered=None,
    )


RUNNERS: dict[str, Callable[[RealTranscript, int], Outcome]] = {OURS: run_ours, TRIM: run_trim, KIT: run_kit}


@dataclass(frozen=True)
class Row:
    """One transcript's outcomes at one budget."""

    transcript: RealTranscript
    tokens: int
    header: int
    fraction: float
    budget: int
    outcomes: dict[str, Outcome]


def run(
    transcripts: Sequence[RealTranscript], fractions: Sequence[float] = FRACTIONS, *, of_whole: bool = False
) -> list[Row]:
    """Every system on every transcript at every budget (see :func:`budget_for` for ``of_whole``)."""
    rows = []
    for transcript in transcripts:
        tokens, header = transcript_tokens(transcript), header_tokens(transcript)
        claude = run_claude_code(transcript)
        for fraction in fractions:
            budget = budget_for(transcript, fraction, of_whole=of_whole)
            outcomes = {system: runner(transcript, budget) for system, runner in RUNNERS.items()}
            if claude is not None:
                outcomes[CLAUDE] = claude
            rows.append(
                Row(
                    transcript=transcript,
                    tokens=tokens,
                    header=header,
                    fraction=fraction,
                    budget=budget,
                    outcomes=outcomes,
                )
            )
            ours = outcomes[OURS]
            print(
                f"{transcript.name:40s} {fraction:4.0%} budget {budget:7,}  "
                + "  ".join(f"{s} {_share(o.found)}" for s, o in outcomes.items())
                + f"  (+search {_share(ours.recovered or ())}, {ours.seconds:.2f}s)",
                file=sys.stderr,
            )
    return rows


def tail_floor(transcript: RealTranscript) -> tuple[bool, ...]:
    """Per probe, whether its answer also appears in the last 30% of the transcript."""
    late = request_text(transcript.messages[cut(transcript) :])
    return tuple(probe.answer in late for probe in transcript.probes)


# -- rendering -------------------------------------------------------------------------------------------------
def _share(flags: Sequence[bool]) -> str:
    return f"{sum(flags) / len(flags):.0%}" if flags else "-"


def _cell(outcome: Outcome | None, *, recovered: bool = False) -> str:
    if outcome is None:
        return ""
    flags = outcome.recovered if recovered else outcome.found
    if flags is None:
        return ""
    share = f"{_share(flags)} ({sum(flags)}/{len(flags)})"
    return f"{share} ✗" if outcome.error else share


def _tokens(outcome: Outcome | None, budget: int) -> str:
    if outcome is None or outcome.tokens is None:
        return "no request" if outcome is not None else ""
    over = " over" if outcome.budget is not None and outcome.tokens > budget else ""
    return f"{outcome.tokens:,}{over}"


def _pooled(rows: Sequence[Row], system: str, *, recovered: bool = False) -> str:
    flags: list[bool] = []
    for row in rows:
        outcome = row.outcomes.get(system)
        if outcome is None:
            continue
        got = outcome.recovered if recovered else outcome.found
        flags.extend(got or ())
    return f"{_share(flags)} ({sum(flags)}/{len(flags)})" if flags else ""


def budget_table(
    rows: Sequence[Row], fraction: float, *, of_whole: bool = False, heading: str = "## Budget"
) -> list[str]:
    """The markdown table for one budget: a row per transcript, then the pooled share."""
    chosen = [row for row in rows if row.fraction == fraction]
    title = f"{fraction:.0%} of each transcript" if of_whole else f"header + {fraction:.0%} of the rest"
    lines = [
        f"{heading}: {title}",
        "",
        "| transcript | kind | tokens | header | budget | probes | tail floor | ctxbudget in request | ctxbudget + "
        "search (top 3) | trim_messages | semantic-checklist | Claude Code's own summary | request tokens: "
        "ctxbudget / trim / checklist / Claude Code |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in chosen:
        t, o = row.transcript, row.outcomes
        floor = tail_floor(t)
        sizes = " / ".join(_tokens(o.get(s), row.budget) for s in (OURS, TRIM, KIT, CLAUDE) if s in o)
        lines.append(
            f"| {t.name} | {t.kind} | {row.tokens:,} | {row.header:,} | {row.budget:,} | {len(t.probes)} | "
            f"{_share(floor)} | "
            f"{_cell(o[OURS])} | {_cell(o[OURS], recovered=True)} | {_cell(o[TRIM])} | {_cell(o[KIT])} | "
            f"{_cell(o.get(CLAUDE))} | {sizes} |"
        )
    floors = [flag for row in chosen for flag in tail_floor(row.transcript)]
    lines.append(
        f"| **all ({len(chosen)} transcripts)** | | {sum(r.tokens for r in chosen):,} | | | {len(floors)} | "
        f"{_share(floors)} | **{_pooled(chosen, OURS)}** | **{_pooled(chosen, OURS, recovered=True)}** | "
        f"**{_pooled(chosen, TRIM)}** | **{_pooled(chosen, KIT)}** | {_pooled(chosen, CLAUDE)} | |"
    )
    return lines


def kind_table(rows: Sequence[Row]) -> list[str]:
    """ctxbudget's share in the request per probe kind, at each budget, pooled over transcripts."""
    kinds = sorted({probe.kind for row in rows for probe in row.transcript.probes})
    lines = [
        "## ctxbudget by probe kind",
        "",
        "| probe kind | probes | "
        + " | ".join(f"in request at {f:.0%} | + search at {f:.0%}" for f in FRACTIONS)
        + " |",
        "|---|---:|" + "---:|---:|" * len(FRACTIONS),
    ]
    for kind in kinds:
        cells, total = [], 0
        for fraction in FRACTIONS:
            found, recovered = [], []
            for row in (r for r in rows if r.fraction == fraction):
                outcome = row.outcomes[OURS]
                for index, probe in enumerate(row.transcript.probes):
                    if probe.kind == kind:
                        found.append(outcome.found[index])
                        recovered.append((outcome.recovered or outcome.found)[index])
            total = len(found)
            cells += [_share(found), _share(recovered)]
        lines.append(f"| {kind} | {total} | " + " | ".join(cells) + " |")
    return lines


def notes(rows: Sequence[Row], seconds: float) -> list[str]:
    """Errors, requests over budget, and timings."""
    lines = ["## Notes", ""]
    for row in rows:
        for system, outcome in row.outcomes.items():
            if outcome.error:
                lines.append(f"- {row.transcript.name} at {row.fraction:.0%}, {system}: no request ({outcome.error})")
            elif outcome.budget is not None and outcome.tokens is not None and outcome.tokens > row.budget:
                lines.append(
                    f"- {row.transcript.name} at {row.fraction:.0%}, {system}: {outcome.tokens:,} tokens, over the "
                    f"{row.budget:,}-token budget"
                )
    for system in RUNNERS:
        times = sorted(row.outcomes[system].seconds for row in rows)
        if not times:
            continue
        lines.append(
            f"- {system}: median {times[len(times) // 2]:.2f} s per transcript and budget, total {sum(times):.1f} s"
        )
    lines.append(f"- Whole run (scoring and search included): {seconds:.0f} s on {platform.python_version()}.")
    return lines


def render(rows: Sequence[Row], seconds: float, *, of_whole: bool = False, heldout: Sequence[Row] = ()) -> str:
    """The results file (``heldout``: the rows of the held-out transcripts, in a section of their own)."""
    lines = [
        "# Compaction on real transcripts",
        "",
        "Generated by `python -m benchmarks.bench_real` (see its docstring for the method). Each transcript is a "
        "public session nobody here wrote (`benchmarks/quality/real/README.md`); each probe is a short exact string "
        "a model needs to continue, written by hand from the first 70% of the transcript. Shares pool probes over "
        "transcripts; ✗ marks a system that built no request (scored as nothing kept). The budget is the header "
        "(system prompt, tool schemas, request overhead: sent whole by every system) plus the share of the rest; "
        "'tail floor' is the share of probes whose answer recurs in the last 30% of the transcript. Claude Code's "
        "own summary has no budget: it is the same in both tables.",
        "",
    ]
    if rows:
        for fraction in FRACTIONS:
            lines += [*budget_table(rows, fraction, of_whole=of_whole), ""]
        lines += [*kind_table(rows), ""]
    if heldout:
        lines += [
            "## Held-out transcripts",
            "",
            f"{len({row.transcript.name for row in heldout})} more public transcripts "
            "(`benchmarks/quality/heldout/README.md`), their probes written by a reviewer who had not seen "
            "ctxbudget's summaries of them; reported beside the set, not gated.",
            "",
        ]
        for fraction in FRACTIONS:
            lines += [*budget_table(heldout, fraction, of_whole=of_whole, heading="### Held-out, budget"), ""]
    lines += [*notes([*rows, *heldout], seconds), ""]
    return "\n".join(lines)


def write_summaries(rows: Sequence[Row], directory: Path = SUMMARIES) -> None:
    """Each ctxbudget summary as ``<name>_<budget %>.md``: the summary text exactly as the request carried it."""
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.md"):
        old.unlink()
    for row in rows:
        outcome = row.outcomes[OURS]
        path = directory / f"{row.transcript.name}_{round(row.fraction * 100)}.md"
        path.write_text((outcome.summary or "") + "\n", encoding="utf-8")


def show(name: str, width: int = 600) -> None:
    """Print a transcript's messages with the indices probe ``message`` fields refer to."""
    transcript = next(t for t in (*load_set(), *load_set(HELDOUT)) if t.name == name)
    print(f"# {transcript.name}: {len(transcript.messages)} messages; probes come from [0, {cut(transcript)})")
    for index, message in enumerate(transcript.messages):
        text = message_text(message)
        clipped = text if len(text) <= width else f"{text[:width]} ...[{len(text):,} chars]"
        print(f"--- [{index}] {message.role}\n{clipped}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark (or show a transcript)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument(
        "--only", help="comma-separated transcript names (of the set or the held-out); prints the table, writes nothing"
    )
    parser.add_argument("--show", help="print one transcript's messages with their indices")
    parser.add_argument("--no-write", action="store_true", help="print the table, write no results file")
    parser.add_argument(
        "--missing", action="store_true", help="also print each probe ctxbudget's request misses, per budget"
    )
    parser.add_argument("--summaries", type=Path, help="write ctxbudget's summaries into this directory")
    parser.add_argument(
        "--of-whole",
        action="store_true",
        help="budgets as a share of the whole transcript, header included (prints, writes nothing)",
    )
    args = parser.parse_args(argv)
    if args.show:
        show(args.show)
        return 0
    transcripts, held = load_set(), load_set(HELDOUT)
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {t.name for t in (*transcripts, *held)}
        if unknown:
            parser.error(f"--only: no transcript named {', '.join(sorted(unknown))}")
        transcripts = tuple(t for t in transcripts if t.name in wanted)
        held = tuple(t for t in held if t.name in wanted)
    started = time.perf_counter()
    rows = run(transcripts, of_whole=args.of_whole)
    heldout = run(held, of_whole=args.of_whole)
    text = render(rows, time.perf_counter() - started, of_whole=args.of_whole, heldout=heldout)
    print(text)
    if args.missing:
        print("\n".join(missing_lines([*rows, *heldout])))
    if args.summaries is not None:
        write_summaries([*rows, *heldout], args.summaries)
    if not args.only and not args.of_whole and not args.no_write:
        RESULTS.write_text(text, encoding="utf-8")
        write_summaries([*rows, *heldout])
        print(f"wrote {RESULTS} and {SUMMARIES}/", file=sys.stderr)
    return 0


def missing_lines(rows: Sequence[Row]) -> list[str]:
    """Each probe ctxbudget's request misses, per transcript and budget, and whether search finds it."""
    lines = ["## Probes missing from ctxbudget's request", ""]
    for row in rows:
        outcome = row.outcomes[OURS]
        recovered = outcome.recovered or outcome.found
        for index, probe in enumerate(row.transcript.probes):
            if not outcome.found[index]:
                how = "found by search" if recovered[index] else "NOT found by search"
                lines.append(
                    f"- {row.transcript.name} at {row.fraction:.0%}: [{probe.kind}] {probe.answer!r} "
                    f"(asked: {probe.question!r}; {how})"
                )
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
