"""Concurrent appends: 8 threads x 500 records, each on its own handle: nothing lost, nothing duplicated."""

from __future__ import annotations

import json
import threading

from .conftest import StoreFactory

WORKERS = 8
RECORDS_PER_WORKER = 500
BATCH_SIZES = (1, 3, 1, 2, 5)  # cycled: single records and small batches interleave


def _append_all(handle_factory: StoreFactory, worker: int, start: threading.Barrier) -> list[tuple[int, str]]:
    handle = handle_factory()
    records = [json.dumps({"worker": worker, "i": i}) for i in range(RECORDS_PER_WORKER)]
    placed: list[tuple[int, str]] = []
    start.wait()
    position, turn = 0, 0
    while position < len(records):
        batch = records[position : position + BATCH_SIZES[turn % len(BATCH_SIZES)]]
        seqs = handle.append("shared", batch)
        assert seqs == list(range(seqs[0], seqs[0] + len(batch))), "a batch's numbers are consecutive"
        placed += zip(seqs, batch, strict=True)
        position, turn = position + len(batch), turn + 1
    return placed


def test_concurrent_appends_are_gap_free_unique_and_lose_nothing(store_factory: StoreFactory) -> None:
    start = threading.Barrier(WORKERS)
    results: list[list[tuple[int, str]]] = [[] for _ in range(WORKERS)]

    def run(worker: int) -> None:
        results[worker] = _append_all(store_factory, worker, start)

    threads = [threading.Thread(target=run, args=(worker,)) for worker in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    total = WORKERS * RECORDS_PER_WORKER
    log = store_factory().read_log("shared")
    assert [seq for seq, _ in log] == list(range(1, total + 1)), "gap-free, unique, in order"
    assert sorted(record for _, record in log) == sorted(
        json.dumps({"worker": w, "i": i}) for w in range(WORKERS) for i in range(RECORDS_PER_WORKER)
    ), "every record exactly once"
    assert sorted(pair for placed in results for pair in placed) == log, "each record sits where append said"
    for placed in results:
        order = [json.loads(record)["i"] for _, record in placed]
        assert order == list(range(RECORDS_PER_WORKER)), "one worker's records keep its order"
    assert store_factory().log_head("shared") == total
