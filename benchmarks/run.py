"""Run every benchmark in turn and regenerate the README tables: what ``make bench`` calls.

Each benchmark runs in its own process (``python -m benchmarks.<name>``), so one's caches and imports do not colour
the next one's timings. Run: ``python -m benchmarks.run`` (``--only bench_quality`` to run a subset).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence

BENCHMARKS = (
    "bench_counting",
    "bench_session",
    "bench_agent",
    "bench_langchain",
    "bench_llamaindex",
    "bench_quality",
    "bench_real",
    "bench_hostile",
)
"""Run in this order; each writes its file in ``benchmarks/results/``."""
AFTER = ("readme_table",)
"""Run once the results exist (the README's per-turn tables, agent workload and plain chat; bench_quality updates
its own table)."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(BENCHMARKS), help="comma-separated benchmark module names")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    for name in [*chosen, *AFTER]:
        started = time.perf_counter()
        print(f"== benchmarks.{name}", flush=True)
        code = subprocess.call([sys.executable, "-m", f"benchmarks.{name}"])
        print(f"== benchmarks.{name}: exit {code}, {time.perf_counter() - started:.0f}s", flush=True)
        if code:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
