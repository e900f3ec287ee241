"""Stress: 8 workers x 500 appends on one shared session while compactors rewrite its snapshot concurrently.

Through SQLite (threads, and worker processes) and Redis (threads). Whatever interleaving happens: no message is
lost, none is duplicated, each worker's messages keep their order, every built request is accepted by a strict
provider and is within budget. The figures (appends/s, compactions, conflicts retried) are printed (``-s``).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import SnapshotConflictError
from ctxbudget.messages import Message, ToolCall
from ctxbudget.session import ContextSession
from ctxbudget.shared_session import SharedSession
from ctxbudget.stores import SnapshotStore, SQLiteSnapshotStore
from ctxbudget.testing import StrictProvider

from .faults import COUNTER

WORKERS = 8
APPENDS = 500
WINDOW = 4_000
BUILD_EVERY = 125


def worker_messages(worker: int, index: int) -> list[Message]:
    """What worker ``worker`` appends in its ``index``-th append: one message, or a tool call with its result."""
    tag = f"w{worker}-{index}"
    if index % 10 == 9:
        call = ToolCall(id=f"call-{tag}", name="ls", args={"dir": f"d{index}"})
        return [
            Message(role="assistant", tool_calls=(call,), id=f"{tag}-a"),
            Message(role="tool", tool_call_id=call.id, name="ls", content=f"f{index}.py", id=f"{tag}-r"),
        ]
    role = "user" if index % 2 == 0 else "assistant"
    return [Message(role=role, content=f"worker {worker} note {index}", id=tag)]


@dataclass
class Figures:
    backend: str
    appends: int = 0
    seconds: float = 0.0
    compactions: int = 0
    conflicts_retried: int = 0
    stale_reloads: int = 0
    requests_checked: int = 0
    lost: int = -1
    duplicated: int = -1
    errors: list[BaseException] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, count in counts.items():
                setattr(self, name, getattr(self, name) + count)

    def line(self) -> str:
        rate = self.appends / self.seconds if self.seconds else 0.0
        return (
            f"[stress] {self.backend}: {self.appends} appends in {self.seconds:.1f}s = {rate:,.0f} appends/s, "
            f"compactions={self.compactions}, conflicts_retried={self.conflicts_retried}, "
            f"stale_reloads={self.stale_reloads}, requests_checked={self.requests_checked}, "
            f"lost={self.lost}, duplicated={self.duplicated}"
        )


def template(session_id: str) -> ContextSession:
    return ContextSession(
        max_tokens=WINDOW,
        counter=COUNTER,
        system_prompt="You coordinate eight workers.",
        policy=CompactionPolicy(keep_recent_messages=8),
        session_id=session_id,
    )


def check_request(shared: SharedSession) -> None:
    request = shared.build_request()
    provider = StrictProvider(max_tokens=WINDOW, counter=COUNTER)
    assert provider.complete(request.messages, request.tools) <= WINDOW
    assert [m.role for m in request.messages].count("system") == 1
    assert request.messages[0].role == "system"


def expected_ids(workers: range) -> list[list[str]]:
    return [[m.id for i in range(APPENDS) for m in worker_messages(w, i)] for w in workers]


def verify(shared: SharedSession, figures: Figures, workers: range) -> None:
    """Zero lost, zero duplicated, per-worker order kept, and the final request valid."""
    originals = [m.id for m in shared.load().session.originals()]
    wanted = expected_ids(workers)
    flat = {i for ids in wanted for i in ids}
    figures.lost = len(flat - set(originals))
    figures.duplicated = len(originals) - len(set(originals))
    assert figures.lost == 0
    assert figures.duplicated == 0
    assert len(originals) == len(flat)
    position = {message_id: index for index, message_id in enumerate(originals)}
    for ids in wanted:
        assert [position[i] for i in ids] == sorted(position[i] for i in ids), "a worker's order changed"
    check_request(shared)


def compactors(
    make_store: Callable[[], SnapshotStore], session_id: str, done: threading.Event, figures: Figures, count: int = 2
) -> list[threading.Thread]:
    def loop() -> None:
        shared = SharedSession(make_store(), session_id, counter=COUNTER, max_attempts=50)
        try:
            while not done.is_set():
                shared.compact()
                check_request(shared)
                figures.add(requests_checked=1)
        except BaseException as exc:
            figures.errors.append(exc)
        finally:
            stats = shared.stats
            figures.add(
                compactions=stats.compactions_saved,
                conflicts_retried=stats.conflicts_retried,
                stale_reloads=stats.stale_reloads,
            )

    return [threading.Thread(target=loop, name=f"compactor-{n}") for n in range(count)]


def run_threads(make_store: Callable[[], SnapshotStore], backend: str) -> Figures:
    session_id = f"stress-{uuid.uuid4().hex[:8]}"
    SharedSession.create(make_store(), template(session_id))
    figures = Figures(backend)
    done = threading.Event()
    start = threading.Barrier(WORKERS + 1)

    def work(worker: int) -> None:
        shared = SharedSession(make_store(), session_id, counter=COUNTER, max_attempts=50)
        try:
            start.wait()
            for index in range(APPENDS):
                shared.add(*worker_messages(worker, index))
                if index % BUILD_EVERY == BUILD_EVERY - 1:
                    check_request(shared)
                    figures.add(requests_checked=1)
        except BaseException as exc:
            figures.errors.append(exc)
        finally:
            stats = shared.stats
            figures.add(
                compactions=stats.compactions_saved,
                conflicts_retried=stats.conflicts_retried,
                stale_reloads=stats.stale_reloads,
            )

    threads = [threading.Thread(target=work, args=(w,)) for w in range(WORKERS)]
    background = compactors(make_store, session_id, done, figures)
    for thread in [*threads, *background]:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    figures.seconds = time.perf_counter() - began
    figures.appends = WORKERS * APPENDS
    done.set()
    for thread in background:
        thread.join()
    assert not figures.errors, figures.errors
    verify(SharedSession(make_store(), session_id, counter=COUNTER), figures, range(WORKERS))
    print(figures.line())
    return figures


@pytest.mark.slow
def test_sqlite_threads(tmp_path: Path) -> None:
    figures = run_threads(lambda: SQLiteSnapshotStore(tmp_path / "stress.db"), "sqlite-threads")
    assert figures.compactions > 0


@pytest.mark.slow
@pytest.mark.redis
def test_redis_threads(redis_url: str, redis_prefix: str) -> None:
    from ctxbudget.stores import RedisSnapshotStore

    figures = run_threads(lambda: RedisSnapshotStore(redis_url, prefix=redis_prefix), "redis-threads")
    assert figures.compactions > 0


PROCESS_WORKER = """
import sys
sys.path.insert(0, {tests!r})
from ctxbudget.shared_session.session import SharedSession
from ctxbudget.stores import SQLiteSnapshotStore
from reliability.faults import COUNTER
from reliability.test_stress import APPENDS, worker_messages

shared = SharedSession(SQLiteSnapshotStore({db!r}), {session_id!r}, counter=COUNTER)
for index in range(APPENDS):
    shared.add(*worker_messages({worker}, index))
"""

PROCESSES = 4


@pytest.mark.slow
def test_sqlite_processes(tmp_path: Path) -> None:
    db = tmp_path / "stress.db"
    session_id = "stress-processes"
    SharedSession.create(SQLiteSnapshotStore(db), template(session_id))
    figures = Figures("sqlite-processes")
    done = threading.Event()
    background = compactors(lambda: SQLiteSnapshotStore(db), session_id, done, figures, count=1)
    tests = str(Path(__file__).resolve().parents[1])
    for thread in background:
        thread.start()
    began = time.perf_counter()
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                textwrap.dedent(PROCESS_WORKER.format(tests=tests, db=str(db), session_id=session_id, worker=w)),
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(PROCESSES)
    ]
    errors = [child.communicate(timeout=120)[1] for child in children]  # also closes each stderr pipe
    failures = [error for child, error in zip(children, errors, strict=True) if child.returncode != 0]
    figures.seconds = time.perf_counter() - began
    figures.appends = PROCESSES * APPENDS
    done.set()
    for thread in background:
        thread.join()
    assert not failures, failures
    assert not figures.errors, figures.errors
    verify(SharedSession(SQLiteSnapshotStore(db), session_id, counter=COUNTER), figures, range(PROCESSES))
    print(figures.line())
    assert figures.compactions > 0


def test_a_stale_compaction_is_never_written(tmp_path: Path) -> None:
    """Deterministic core of the stress test: two compactors load the same version; the second one retries."""
    store = SQLiteSnapshotStore(tmp_path / "stale.db")
    SharedSession.create(store, template("stale"))
    first = SharedSession(store, "stale", counter=COUNTER)
    first.add(*[m for i in range(60) for m in worker_messages(0, i)])
    stale = first.load()
    first.compact()  # moves the stored version on
    first.add(*worker_messages(1, 0))  # and a message arrives after it
    stale.session.compact()
    with pytest.raises(SnapshotConflictError) as caught:
        first._save(stale)
    assert caught.value.expected_version == stale.version
    assert caught.value.actual_version == stale.version + 1
    ids = [m.id for m in first.load().session.originals()]
    assert ids[-1] == worker_messages(1, 0)[0].id
    assert len(ids) == len(set(ids)) == len([m for i in range(60) for m in worker_messages(0, i)]) + 1
