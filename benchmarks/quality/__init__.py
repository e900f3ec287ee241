"""Compaction-quality benchmark: after compaction, what does the model still see?

``workloads`` builds seeded long agent sessions (ctxbudget ``Message`` objects) with planted probes, ``probes``
scores a request against them, ``systems`` replays a workload through ctxbudget and its peers, ``trajectories``
converts real public agent trajectories. The entry point is ``python -m benchmarks.bench_quality``.
"""
