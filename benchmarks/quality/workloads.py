"""Seeded, deterministic long agent sessions with planted probes: ``coding``, ``long_run`` and ``support``.

A :class:`Workload` is a sequence of model calls: each call is the batch of messages added since the previous one
(the model's own output included), after which the system under test builds the request it would send. The probes
say what should still be visible (or recoverable) in the final request. Build one with :func:`build_workload`.
"""

from __future__ import annotations

from ._builder import Workload
from ._coding import coding as _coding
from ._long_run import long_run as _long_run
from ._support import support as _support
from .probes import message_text

__all__ = ["FULL_TURNS", "QUICK_TURNS", "WORKLOADS", "Workload", "build_workload", "check_planted"]

WORKLOADS = ("coding", "long_run", "support")
FULL_TURNS = {"coding": 300, "long_run": 320, "support": 200}
QUICK_TURNS = {"coding": 60, "long_run": 80, "support": 50}


def build_workload(name: str, *, seed: int = 0, turns: int | None = None, quick: bool = False) -> Workload:
    """The ``name`` workload (``coding``, ``long_run``, ``support``; or a real trajectory, see ``trajectories``).

    Args:
        name: the shape.
        seed: the random seed (same seed, same session, same ids).
        turns: turns (agent steps for ``long_run``); default the full size, or the quick size with ``quick``.
        quick: a short session for a fast run; probe counts scale with the turns.
    """
    if name not in WORKLOADS:
        from .trajectories import TRAJECTORIES, load_trajectory

        if name in TRAJECTORIES:
            return load_trajectory(name)
        raise ValueError(f"unknown workload {name!r}; expected one of {(*WORKLOADS, *TRAJECTORIES)}")
    n = turns or (QUICK_TURNS if quick else FULL_TURNS)[name]
    builder = {"coding": _coding, "long_run": _long_run, "support": _support}[name]
    workload = builder(n, seed)
    check_planted(workload)
    return workload


def check_planted(workload: Workload) -> None:
    """Raise when a probe's answer is missing from where it was planted or also appears anywhere else."""
    texts = {m.id: message_text(m) for m in workload.messages()}
    for probe in workload.probes:
        holders = {mid for mid, text in texts.items() if probe.answer in text}
        if holders != set(probe.planted_in):
            raise AssertionError(
                f"probe {probe.kind} {probe.answer!r}: planted in {sorted(probe.planted_in)}, "
                f"found in {sorted(holders)}"
            )
