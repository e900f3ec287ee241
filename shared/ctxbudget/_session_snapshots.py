"""Taking a :class:`~ctxbudget.session.ContextSession` apart into a snapshot, and putting one back together.

The session's internals, kept apart from ``session.py``; the snapshot model itself is :mod:`ctxbudget.snapshot`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .archive import Archive
from .errors import SnapshotFormatError
from .snapshot import SessionSnapshot, TrackerSnapshot
from .tokens import Calibration

if TYPE_CHECKING:
    from .session import ContextSession

__all__: list[str] = []


def take(session: ContextSession) -> SessionSnapshot:
    """Everything needed to resume ``session`` (the caller holds its lock)."""
    tracker = session.tracker
    return SessionSnapshot(
        session_id=session.session_id,
        model=session.model,
        max_tokens=session.max_tokens,
        system_prompt=session._system_prompt,
        tools=session._tools,
        policy=session.policy.model_dump(),
        compact_instructions=session.compact_instructions,
        history=tuple(session._live.messages),
        summary=session._summary,
        goal=session._goal,
        goal_id=session._goal_id,
        pinned=tuple(session._pinned),
        context=session._context_message,
        system_messages=tuple(session._system_extras),
        pinned_ids=tuple(sorted(session._pinned_ids)),
        archive=tuple(session.archive.entries()),
        order=dict(session._order),
        binding=session._binding_json(),
        log_seq=session.log_seq,
        tracker=TrackerSnapshot(
            ratio=tracker.calibration.ratio,
            samples=tracker.calibration.samples,
            last_reported=tracker.last_reported,
            counted_at_report=tracker.counted_at_report,
            floor=tracker.floor,
        ),
    )


def apply(session: ContextSession, snap: SessionSnapshot) -> None:
    """Load a snapshot's state into a freshly constructed session (whose configuration came from it)."""
    session.archive = Archive(snap.archive)
    session._order = dict(snap.order)
    session._summary = snap.summary
    session._goal, session._goal_id = snap.goal, snap.goal_id
    session._pinned = list(snap.pinned)
    session._pinned_ids = set(snap.pinned_ids)
    session._system_extras = list(snap.system_messages)
    session._context_message = snap.context
    session._invalidate_prefix()
    session._replace_history(list(snap.history))
    missing = [m.id for m in snap.history if m.id not in snap.order]
    if missing:
        raise SnapshotFormatError(
            f"snapshot.order: {len(missing)} live message(s) missing, e.g. {missing[0]!r}", field="order"
        )
    tracker = session.tracker
    tracker.calibration = Calibration(ratio=snap.tracker.ratio, samples=snap.tracker.samples)
    tracker.last_reported, tracker.counted_at_report = snap.tracker.last_reported, snap.tracker.counted_at_report
    tracker.floor = snap.tracker.floor
    session.log_seq = snap.log_seq
