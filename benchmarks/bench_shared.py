"""Shared sessions at scale: appends/s of 8 worker processes, with and without a compactor running, vs history.

Each run: a shared session whose store already holds 1k, 10k or 50k messages of history (pre-filled through the
store API: the archived originals written with ``put_archive`` in batches, then a live-only snapshot, the state
50k appends and their compactions would leave), then 8 worker processes x 500 appends (``SharedSession.add``, one
message each), started together. With compaction, one more process compacts the shared session in a loop
(``SharedSession.compact``: load, compact, write the archived originals, compare-and-set) until the workers are done.
Afterwards every worker message must be in ``originals()`` exactly once (lost / duplicated).

Reported: appends/s (worker messages / wall time from the start barrier to the last worker's last append),
compactions saved and conflicts retried, the median time of one compaction, the stored snapshot's size at the end,
and the bytes each backend was sent per append (log records, snapshots and archive entries, counted by a wrapper
in every process, divided by 4,000).

Redis runs on a private loopback ``redis-server`` started for the benchmark with the durable settings the README
recommends (``--appendonly yes --appendfsync everysec``, in a temp dir); ``--redis-url`` uses another server.
SQLite runs on a temp file with ``synchronous=FULL`` (the store's default).

Each configuration runs ``--repeat`` times (2), interleaved with its counterpart; the fastest run is reported.

Run: ``python -m benchmarks.bench_shared`` (writes ``benchmarks/results/shared.md``; about 10 minutes on a shared
2-core machine). ``--sizes 1000`` or ``--backends sqlite`` for a subset (printed, not written).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbudget import CharCounter, CompactionPolicy, ContextSession, Message, SharedSession
from ctxbudget.archive import ArchiveEntry
from ctxbudget.errors import SnapshotConflictError
from ctxbudget.shared_session._archive import encode_entry
from ctxbudget.stores import ArchiveRecord, SnapshotStore, SQLiteSnapshotStore

WORKERS = 8
APPENDS = 500
SIZES = (1_000, 10_000, 50_000)
REPEAT = 2
BACKENDS = ("redis", "sqlite")
WINDOW = 4_000
LIVE = 24  # live messages the pre-filled snapshot holds
COUNTER = CharCounter()
RESULTS = Path(__file__).parent / "results" / "shared.md"


@dataclass
class Run:
    backend: str
    history: int
    compaction: bool
    seconds: float
    compactions: int
    conflicts: int
    compact_ms: float  # median wall time of one compaction (load, compact, write archive, compare-and-set, trim)
    snapshot_bytes: int
    bytes_sent: int
    lost: int
    duplicated: int

    @property
    def rate(self) -> float:
        return WORKERS * APPENDS / self.seconds


class Counting:
    """Counts the bytes a store is sent (log records, snapshots, archive entries); everything else passes through."""

    def __init__(self, inner: SnapshotStore) -> None:
        self.inner = inner
        self.sent = 0

    def append(self, session_id: str, records: Sequence[str]) -> list[int]:
        self.sent += sum(len(record.encode()) for record in records)
        return self.inner.append(session_id, records)

    def save(self, session_id: str, data: str, *, expected_version: int | None) -> int:
        self.sent += len(data.encode())
        return self.inner.save(session_id, data, expected_version=expected_version)

    def put_archive(self, session_id: str, records: Sequence[ArchiveRecord]) -> list[int]:
        self.sent += sum(len(record.data.encode()) + len(record.handle) for record in records)
        return self.inner.put_archive(session_id, records)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def open_store(spec: tuple[str, str]) -> SnapshotStore:
    backend, where = spec
    if backend == "sqlite":
        return SQLiteSnapshotStore(where)
    from ctxbudget.stores import RedisSnapshotStore

    return RedisSnapshotStore(where, prefix="bench:")


def template(session_id: str) -> ContextSession:
    return ContextSession(
        max_tokens=WINDOW,
        counter=COUNTER,
        system_prompt="You coordinate eight workers.",
        policy=CompactionPolicy(keep_recent_messages=8),
        session_id=session_id,
    )


def history_message(n: int) -> Message:
    role = "user" if n % 2 == 0 else "assistant"
    return Message(role=role, content=f"earlier note {n}: the build of module_{n % 97}.py passed", id=f"h{n}")


def prefill(store: SnapshotStore, session_id: str, history: int) -> None:
    """Write ``history`` messages' state through the store API: archived originals, then a live-only snapshot."""
    archived = history - LIVE
    for start in range(0, archived, 1_000):
        batch = []
        for n in range(start, min(start + 1_000, archived)):
            message = history_message(n)
            entry = ArchiveEntry(handle=f"ctx://archive/h{n}.summarized", reason="summarized", message=message)
            batch.append(encode_entry(entry, n, 0))
        store.put_archive(session_id, batch)
    session = template(session_id)
    session.add(*(history_message(n) for n in range(archived, history)))
    snapshot = session.snapshot()
    live = {f"h{n}": n for n in range(archived, history)}
    first = snapshot.model_copy(
        update={"order": live, "added": history, "archive_in_store": True, "archive_head": archived}
    )
    first = first.model_copy(update={"summary": f"{archived} earlier notes were summarized."})
    store.save(session_id, first.to_json(), expected_version=None)


def worker(spec: tuple[str, str], session_id: str, index: int, start: Any, out: Any) -> None:
    store = Counting(open_store(spec))
    shared = SharedSession(store, session_id, counter=COUNTER)
    messages = [Message(role="user", content=f"worker {index} note {i}", id=f"w{index}-{i}") for i in range(APPENDS)]
    start.wait()
    for message in messages:
        shared.add(message)
    out.put(("worker", time.perf_counter(), store.sent, 0, 0, 0.0))


def compactor(spec: tuple[str, str], session_id: str, start: Any, done: Any, out: Any) -> None:
    store = Counting(open_store(spec))
    shared = SharedSession(store, session_id, counter=COUNTER, max_attempts=50)
    start.wait()
    timings = []
    while not done.is_set():
        began = time.perf_counter()
        with suppress(SnapshotConflictError):
            shared.compact()
            timings.append(time.perf_counter() - began)
    median = statistics.median(timings) * 1_000 if timings else 0.0
    stats = shared.stats
    out.put(("compactor", 0.0, store.sent, stats.compactions_saved, stats.conflicts_retried, median))


def run(spec: tuple[str, str], history: int, *, compaction: bool) -> Run:
    session_id = f"bench-{uuid.uuid4().hex[:8]}"
    store = open_store(spec)
    prefill(store, session_id, history)
    context = mp.get_context("fork")
    start = context.Barrier(WORKERS + 1 + int(compaction))
    done, out = context.Event(), context.Queue()
    processes = [context.Process(target=worker, args=(spec, session_id, i, start, out)) for i in range(WORKERS)]
    if compaction:
        processes.append(context.Process(target=compactor, args=(spec, session_id, start, done, out)))
    for process in processes:
        process.start()
    start.wait()
    began = time.perf_counter()
    results = [out.get() for _ in range(WORKERS)]
    done.set()
    if compaction:
        results.append(out.get())
    for process in processes:
        process.join()
    ended = max(finished for kind, finished, *_ in results if kind == "worker")
    ids = [m.id for m in SharedSession(store, session_id, counter=COUNTER).originals()]
    wanted = {f"w{w}-{i}" for w in range(WORKERS) for i in range(APPENDS)}
    stored = store.load(session_id)
    return Run(
        backend=spec[0],
        history=history,
        compaction=compaction,
        seconds=ended - began,
        compactions=sum(r[3] for r in results),
        conflicts=sum(r[4] for r in results),
        compact_ms=max(r[5] for r in results),
        snapshot_bytes=len(stored.data.encode()) if stored is not None else 0,
        bytes_sent=sum(r[2] for r in results),
        lost=len(wanted - set(ids)),
        duplicated=len(ids) - len(set(ids)),
    )


@contextmanager
def redis_server(url: str | None) -> Iterator[str]:
    """``url``, or a private durable redis-server (AOF, everysec) on a free loopback port for the benchmark."""
    if url is not None:
        yield url
        return
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed: install it, pass --redis-url, or use --backends sqlite")
    import redis

    with socket.socket() as probe, tempfile.TemporaryDirectory() as directory:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        settings = ["--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--dir", directory]
        command = ["redis-server", "--bind", "127.0.0.1", "--port", str(port), *settings]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        url = f"redis://127.0.0.1:{port}/0"
        try:
            for _ in range(200):
                try:
                    if redis.Redis.from_url(url).ping():
                        break
                except redis.RedisError:
                    time.sleep(0.05)
            yield url
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)


def table(runs: list[Run]) -> str:
    rows = [
        "| backend | history (msgs) | compaction | appends/s | vs no compaction | compactions (conflicts) "
        "| ms per compaction | snapshot bytes | bytes sent per append | lost | duplicated |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base = {(r.backend, r.history): r.rate for r in runs if not r.compaction}
    for r in runs:
        ratio = f"{r.rate / base[(r.backend, r.history)]:.0%}" if (r.backend, r.history) in base else "-"
        rows.append(
            f"| {r.backend} | {r.history:,} | {'running' if r.compaction else 'none'} | {r.rate:,.0f} | {ratio} "
            f"| {r.compactions} ({r.conflicts}) | {f'{r.compact_ms:,.0f}' if r.compaction else '-'} "
            f"| {r.snapshot_bytes:,} | {r.bytes_sent / (WORKERS * APPENDS):,.0f} "
            f"| {r.lost} | {r.duplicated} |"
        )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--repeat", type=int, default=REPEAT, help="runs per configuration; the fastest is reported")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    backends = [name.strip() for name in args.backends.split(",")]
    runs: list[Run] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as directory, redis_server(args.redis_url if "redis" in backends else "") as url:
        for backend in backends:
            for history in sizes:
                tries: dict[bool, list[Run]] = {False: [], True: []}
                for attempt in range(args.repeat):  # interleaved, alternating which goes first, to even out drift
                    for compaction in (False, True) if attempt % 2 == 0 else (True, False):
                        where = url if backend == "redis" else str(Path(directory) / f"{uuid.uuid4().hex}.db")
                        result = run((backend, where), history, compaction=compaction)
                        tries[compaction].append(result)
                        print(table([result]).splitlines()[-1], flush=True)
                for compaction in (False, True):
                    best = max(tries[compaction], key=lambda r: r.rate)
                    best.lost = max(r.lost for r in tries[compaction])  # any run's loss counts
                    best.duplicated = max(r.duplicated for r in tries[compaction])
                    runs.append(best)
    text = table(runs)
    print(text)
    if sizes == list(SIZES) and backends == list(BACKENDS):
        header = (
            "# Shared sessions: appends/s with and without compaction, by history\n\n"
            f"{WORKERS} worker processes x {APPENDS} appends into one `SharedSession`; with compaction, one more "
            "process compacts in a loop. History pre-filled through the store API (archived originals + a live-only "
            f"snapshot); window {WINDOW:,} tokens. Redis: a private loopback redis-server, `appendonly yes`, "
            "`appendfsync everysec`. SQLite: a temp file, `synchronous=FULL`. Shared 2-core machine; "
            f"`python -m benchmarks.bench_shared` ({time.perf_counter() - started:.0f} s).\n\n"
            f"Each configuration ran {args.repeat} times, interleaved; the fastest run is reported (the machine is "
            "shared and busy: single runs wobble by tens of percent), and lost / duplicated are the worst of the "
            "runs.\n\n"
            "*vs no compaction*: this run's appends/s over the same backend's and history's run without compaction. "
            "*ms per compaction*: the median wall time of one compaction in the compacting process (load the "
            "snapshot and the log since it, compact, write the archived originals, compare-and-set, trim the log), "
            "while the workers append. *bytes sent per append*: log records + snapshots + archive entries sent to the "
            "store by every process, "
            f"over the {WORKERS * APPENDS:,} appends. lost / duplicated: worker messages missing from, or twice in, "
            "`originals()` afterwards.\n\n"
        )
        RESULTS.write_text(header + text + "\n")


if __name__ == "__main__":
    main()
