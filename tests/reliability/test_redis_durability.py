"""A durable Redis (AOF, ``appendfsync always``) restarted mid-run loses no acknowledged message.

Each test starts a private ``redis-server`` on a free loopback port with its own data directory (never the suite's
shared server), so it can stop it: SIGTERM (a clean shutdown) and SIGKILL (a crash), each restarted on the same
files. Workers keep appending to one shared session while a compactor keeps compacting it; an append is
*acknowledged* when ``SharedSession.add`` returned. Appends that fail while the server is down are retried (a retry
may land twice; loads skip the duplicate). Afterwards every acknowledged message is in ``originals()`` exactly once.

The last test shows what a non-durable server (``--appendonly no --save ''``, what ``.ci/redis.sh`` runs for speed)
means: a restart forgets the session, and the next load says so with a typed error.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import SnapshotConflictError, SnapshotStoreError, UsageError
from ctxbudget.messages import Message
from ctxbudget.session import ContextSession
from ctxbudget.shared_session import SharedSession

from .faults import COUNTER

redis = pytest.importorskip("redis")
from ctxbudget.stores import RedisSnapshotStore  # noqa: E402 - after the importorskip

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")

DURABLE = ("--appendonly", "yes", "--appendfsync", "always", "--save", "")
VOLATILE = ("--appendonly", "no", "--save", "")
T = TypeVar("T")
WORKERS = 4
APPENDS = 150


class Server:
    """One private redis-server process on loopback, restartable on the same data directory."""

    def __init__(self, directory: Path, settings: tuple[str, ...]) -> None:
        self.directory = directory
        self.settings = settings
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.directory)]
        self.process = subprocess.Popen([*command, *self.settings], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with redis.Redis.from_url(self.url) as client:
                    if client.ping():
                        return
            except redis.RedisError:
                time.sleep(0.05)
        raise AssertionError(f"redis-server on port {self.port} did not answer within 20 s")

    def stop(self, sig: signal.Signals) -> None:
        assert self.process is not None
        self.process.send_signal(sig)
        self.process.wait(timeout=20)
        self.process = None

    def restart(self, sig: signal.Signals) -> None:
        self.stop(sig)
        self.start()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def durable(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path, DURABLE)
    server.start()
    yield server
    if server.process is not None:
        server.stop(signal.SIGTERM)


def template(session_id: str) -> ContextSession:
    return ContextSession(
        max_tokens=2_000,
        counter=COUNTER,
        system_prompt="Workers report here.",
        policy=CompactionPolicy(keep_recent_messages=6),
        session_id=session_id,
    )


def retrying(call: Callable[..., T], *args: object) -> T:
    """Call until the store answers (the server may be down for a moment)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return call(*args)
        except (SnapshotStoreError, SnapshotConflictError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def test_a_durable_server_restarted_mid_run_loses_no_acknowledged_message(durable: Server) -> None:
    session_id = f"durable-{uuid.uuid4().hex[:8]}"
    prefix = "durability:"
    SharedSession.create(RedisSnapshotStore(durable.url, prefix=prefix), template(session_id))
    acknowledged: list[list[str]] = [[] for _ in range(WORKERS)]
    done = threading.Event()
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        shared = SharedSession(RedisSnapshotStore(durable.url, prefix=prefix), session_id, counter=COUNTER)
        try:
            for index in range(APPENDS):
                message = Message(role="user", content=f"worker {worker} note {index}", id=f"w{worker}-{index}")
                retrying(shared.add, message)
                acknowledged[worker].append(message.id)
        except BaseException as exc:
            errors.append(exc)

    def compact() -> None:
        shared = SharedSession(RedisSnapshotStore(durable.url, prefix=prefix), session_id, counter=COUNTER)
        while not done.is_set():
            try:
                shared.compact()
            except (SnapshotStoreError, SnapshotConflictError):
                time.sleep(0.02)

    workers = [threading.Thread(target=work, args=(worker,)) for worker in range(WORKERS)]
    compactor = threading.Thread(target=compact)
    for thread in [*workers, compactor]:
        thread.start()
    restarts: list[tuple[str, int]] = []
    for sig in (signal.SIGTERM, signal.SIGKILL):
        while sum(map(len, acknowledged)) < len(restarts) * 200 + 150:  # let acknowledged writes pile up first
            time.sleep(0.01)
        before = sum(map(len, acknowledged))
        durable.restart(sig)
        restarts.append((sig.name, before))
    for thread in workers:
        thread.join()
    done.set()
    compactor.join()

    assert errors == []
    counts = [count for _, count in restarts]
    assert 0 < counts[0] < counts[1] < WORKERS * APPENDS, f"both restarts happened mid-run: {restarts}"
    durable.restart(signal.SIGKILL)  # and once more after the last acknowledgement
    shared = SharedSession(RedisSnapshotStore(durable.url, prefix=prefix), session_id, counter=COUNTER)
    ids = [message.id for message in retrying(shared.originals)]
    wanted = {i for ids_of_worker in acknowledged for i in ids_of_worker}
    assert len(wanted) == WORKERS * APPENDS
    assert wanted - set(ids) == set(), "acknowledged messages lost"
    assert len(ids) == len(set(ids)), "a retried append was replayed twice"
    position = {message_id: index for index, message_id in enumerate(ids)}
    for ids_of_worker in acknowledged:
        assert [position[i] for i in ids_of_worker] == sorted(position[i] for i in ids_of_worker)
    assert shared.stats.loads >= 1


def test_a_non_durable_server_forgets_the_session_and_the_load_says_so(tmp_path: Path) -> None:
    server = Server(tmp_path, VOLATILE)
    server.start()
    try:
        store = RedisSnapshotStore(server.url, prefix="volatile:")
        shared = SharedSession.create(store, template("volatile"))
        shared.add(Message(role="user", content="acknowledged, then gone", id="gone"))
        server.restart(signal.SIGKILL)

        with pytest.raises(UsageError, match="has no snapshot in the store") as caught:
            retrying(SharedSession(RedisSnapshotStore(server.url, prefix="volatile:"), "volatile").load)
        assert caught.value.field == "session_id"
    finally:
        server.stop(signal.SIGTERM)
