"""Archive search with a model's own questions: hit@1, hit@3 and MRR per ranker, and what each costs.

Each source (see ``benchmarks/search/questions.py``) is replayed through a ``ContextSession`` in a small window and
then pushed on with a few short turns, so nearly everything it said is compacted into the archive. Each question
is a natural question a model would ask about something no longer in view, with the exact answer string; a hit
holds the answer when the text a model reads from it (the original read back by handle, the excerpt, the call it
names) contains the string. Rankers (``benchmarks/search/backends.py``): the index before this work, the default
index, bm25s, tantivy, and the default fused with wordllama embeddings; the optional ones are skipped when their
package is missing.

Costs are medians of the same run: building an index over a source's whole archive, one query, and one incremental
step (one new entry added, then a query). Install sizes are the installed files of each package and of its
dependencies that the core does not already need.

Run: ``python -m benchmarks.bench_search`` (writes ``benchmarks/results/search.md``); ``--quick`` prints only.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctxbudget import ContextSession
from ctxbudget.archive import ArchiveEntry
from ctxbudget.errors import ContextOverflowError

from benchmarks.quality.probes import request_text
from benchmarks.search import backends
from benchmarks.search.questions import SOURCES, Source, check, real_sources

RESULTS = Path(__file__).parent / "results" / "search.md"
PUSH_TURNS = 12
"""Short turns added after a source so that its last messages are compacted too."""
DEPTH = 10
"""Hits read per question (MRR counts the first one holding the answer within these)."""
OPTIONAL = {"bm25s": ("bm25s", "PyStemmer"), "tantivy": ("tantivy",), "wordllama": ("wordllama",)}


def archived(source: Source) -> tuple[list[ArchiveEntry], str]:
    """The source's archive after compaction, and the text of the final request (what is still in view)."""
    session = ContextSession(model="gpt-4o", max_tokens=source.window, system_prompt=source.system_prompt)
    for batch in source.calls():
        session.add(*batch)
        try:
            session.build_request()
        except ContextOverflowError:
            continue
    for i in range(PUSH_TURNS):
        session.add_user(f"Moving on, item {i} is settled; nothing else on that.")
        session.add_assistant("Noted.")
        try:
            session.build_request()
        except ContextOverflowError:
            continue
    try:
        view = request_text(session.build_request().messages)
    except ContextOverflowError:  # what the session would still send had it room: its live history
        view = request_text(session.history)
    return session.archive.entries(), view


@dataclass
class Row:
    ranker: str
    ranks: list[int | None] = field(default_factory=list)
    by_source: dict[str, list[int | None]] = field(default_factory=dict)
    build_ms: list[float] = field(default_factory=list)
    query_ms: list[float] = field(default_factory=list)
    step_ms: list[float] = field(default_factory=list)


def _rank(texts: list[str], answer: str) -> int | None:
    return next((i + 1 for i, text in enumerate(texts) if answer in text), None)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def evaluate(make: Callable[[], backends.Ranker], data: list[tuple[Source, list[ArchiveEntry], str]]) -> Row:
    row = Row(ranker=make().name)
    for source, entries, view in data:
        ranker = make()
        for _ in range(3):
            started = time.perf_counter()
            ranker.build(entries)
            row.build_ms.append(_ms(started))
        ranks = row.by_source.setdefault(source.name, [])
        for question, answer in source.questions:
            if answer in view:
                continue  # still in view: not a search question
            ranks.append(_rank(ranker.search(question, DEPTH), answer))
            for _ in range(3):
                started = time.perf_counter()
                ranker.search(question, 3)
                row.query_ms.append(_ms(started))
        row.ranks.extend(ranks)
        stepper = make()
        stepper.build(entries[:-5])
        for entry in entries[-5:]:
            started = time.perf_counter()
            stepper.add(entry)
            stepper.search(source.questions[0][0], 3)
            row.step_ms.append(_ms(started))
    return row


def _metrics(ranks: Sequence[int | None]) -> tuple[float, float, float]:
    n = len(ranks) or 1
    hit1 = sum(r == 1 for r in ranks) / n
    hit3 = sum(r is not None and r <= 3 for r in ranks) / n
    mrr = sum(1 / r for r in ranks if r is not None) / n
    return hit1, hit3, mrr


def install_size(*dists: str) -> float:
    """MiB of installed files of ``dists`` and their requirements, less what ctxbudget's core already installs."""
    core = _closure(["pydantic", "tiktoken"])
    total = 0
    for name in sorted(_closure(list(dists)) - core):
        try:
            files = importlib.metadata.distribution(name).files or []
        except importlib.metadata.PackageNotFoundError:
            continue
        total += sum(f.size or 0 for f in files)
    return total / 2**20


def _closure(names: list[str]) -> set[str]:
    seen: set[str] = set()
    while names:
        name = names.pop().lower().replace("_", "-")
        if name in seen:
            continue
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        seen.add(name)
        names.extend(r.split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0].split("~")[0].strip()
                     for r in requires if "extra ==" not in r)  # fmt: skip
    return seen


def rankers() -> list[tuple[Callable[[], backends.Ranker], str]]:
    """Each ranker's factory and the packages it needs ('' for none)."""
    found: list[tuple[Callable[[], backends.Ranker], str]] = [(backends.Baseline, ""), (backends.Default, "")]
    if importlib.util.find_spec("bm25s") and importlib.util.find_spec("Stemmer"):
        found.append((lambda: backends.Bm25s(our_terms=False), "bm25s,PyStemmer"))
        found.append((lambda: backends.Bm25s(our_terms=True), "bm25s"))
    if importlib.util.find_spec("tantivy"):
        found.append((backends.Tantivy, "tantivy"))
    if importlib.util.find_spec("wordllama"):
        model = backends.load_wordllama()  # loaded once, offline
        for options in ({"semantic_only": True}, {}, {"weight": 0.5}):
            found.append((lambda options=options: backends.Hybrid(model=model, **options), "wordllama"))
    return found


def report(rows: list[tuple[Row, str]], data: list[tuple[Source, list[ArchiveEntry], str]], note: str = "") -> str:
    asked = sum(1 for source, _, view in data for _, answer in source.questions if answer not in view)
    total = sum(len(source.questions) for source, _, _ in data)
    lines = [
        "# Archive search: natural questions over compacted sessions",
        "",
        f"`python -m benchmarks.bench_search` on {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}. {asked} of {total} questions ask about something compacted out of view (the other "
        f"{total - asked} were still in the request and are not counted); {len(data)} sessions, "
        f"{sum(len(e) for _, e, _ in data)} archive entries.{note}",
        "",
        "| ranker | hit@1 | hit@3 | MRR | build (ms, median per session) | query (ms, median) | "
        "add 1 entry + query (ms, median) | install (MiB beyond the core) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row, packages in rows:
        hit1, hit3, mrr = _metrics(row.ranks)
        size = f"{install_size(*packages.split(',')):.1f}" if packages else "0"
        lines.append(
            f"| {row.ranker} | {hit1:.0%} | {hit3:.0%} | {mrr:.2f} | {statistics.median(row.build_ms):.2f} | "
            f"{statistics.median(row.query_ms):.3f} | {statistics.median(row.step_ms):.2f} | {size} |"
        )
    groups = {
        "own questions (bench_search)": [s for s, _, _ in data if not s.name.startswith("real: ")],
        "real-transcript probe set (benchmarks/quality/real, questions written by others)": [
            s for s, _, _ in data if s.name.startswith("real: ")
        ],
    }
    groups = {name: sources for name, sources in groups.items() if sources}
    lines += ["", "## By question set: hit@1 / hit@3 / MRR (questions asked)", ""]
    lines.append("| ranker | " + " | ".join(groups) + " |")
    lines.append("|---|" + "---|" * len(groups))
    for row, _ in rows:
        cells = []
        for sources in groups.values():
            ranks = [r for source in sources for r in row.by_source.get(source.name, [])]
            hit1, hit3, mrr = _metrics(ranks)
            cells.append(f"{hit1:.0%} / {hit3:.0%} / {mrr:.2f} ({len(ranks)})")
        lines.append(f"| {row.ranker} | " + " | ".join(cells) + " |")
    lines += ["", "## hit@3 by session", "", "| ranker | " + " | ".join(s.name for s, _, _ in data) + " |"]
    lines.append("|---|" + "---|" * len(data))
    for row, _ in rows:
        cells = []
        for source, _, _ in data:
            ranks = row.by_source.get(source.name, [])
            cells.append(f"{_metrics(ranks)[1]:.0%} ({sum(r is not None and r <= 3 for r in ranks)}/{len(ranks)})")
        lines.append(f"| {row.ranker} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def query_length_costs(repeats: int = 5) -> list[tuple[int, float, float]]:
    """(query words, median ms before, median ms now) for a query against one 400 KB archived output."""
    from ctxbudget.archive.search import ArchiveIndex

    from benchmarks.search import baseline

    words = [f"w{i:04d}x" for i in range(4_000)]
    output = "\n".join(" ".join(words[(i * 7 + j) % len(words)] for j in range(12)) for i in range(5_500))
    entry = ArchiveEntry(handle="ctx://archive/big-output", reason="bounded", text=output, source="dump_logs")
    before, now = baseline.ArchiveIndex(), ArchiveIndex()
    before.add(entry)
    now.add(entry)
    rows = []
    for count in (3, 30, 300, 3_000):
        query = " ".join(words[:count])
        timings: dict[str, list[float]] = {"before": [], "now": []}
        for name, index in (("before", before), ("now", now)):
            for _ in range(1 if name == "before" and count >= 3_000 else repeats):
                started = time.perf_counter()
                index.search(query, 5)
                timings[name].append(_ms(started))
        rows.append((count, statistics.median(timings["before"]), statistics.median(timings["now"])))
    return rows


def misses(row: Row, data: list[tuple[Source, list[ArchiveEntry], str]]) -> list[str]:
    out = []
    for source, _, view in data:
        asked = [(q, a) for q, a in source.questions if a not in view]
        for (question, answer), rank in zip(asked, row.by_source.get(source.name, []), strict=True):
            if rank is None or rank > 3:
                out.append(f"  {source.name}: {question!r} -> {answer!r}: rank {rank}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="print only, write nothing")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--misses", action="store_true", help="print the questions each ranker misses in its top 3")
    parser.add_argument(
        "--real",
        type=Path,
        default=None,
        help="a benchmarks/quality folder with real.py and real/ (default: this tree's, when present)",
    )
    parser.add_argument("--only", default="", help="comma-separated substrings: run only the rankers named so")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    check()
    sources = (*SOURCES, *real_sources(args.real))
    data = [(source, *archived(source)) for source in sources]
    chosen = [name for name in args.only.split(",") if name]
    rows = [
        (evaluate(make, data), packages)
        for make, packages in rankers()
        if not chosen or any(name in make().name for name in chosen)
    ]
    real = [s for s in sources if s.name.startswith("real: ")]
    note = ""
    if real:
        where = args.real or Path(__file__).parent / "quality"
        note = f" The real-transcript probe set ({len(real)} transcripts) was read from `{where}`."
    text = report(rows, data, note)
    text += "\n## A query's cost against one 400 KB archived output (issue #26 finding 2)\n\n"
    text += "| query words | before (ms, median) | now (ms, median) |\n|---|---|---|\n"
    text += "".join(f"| {n:,} | {b:,.1f} | {a:,.2f} |\n" for n, b, a in query_length_costs())
    print(text)
    if args.misses:
        for row, _ in rows:
            print(row.ranker)
            print("\n".join(misses(row, data)))
    if not args.quick:
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
