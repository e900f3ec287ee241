"""Taking a session apart into a snapshot, and putting one back together.

Works on the session's :class:`~ctxbudget.session.conversation.Conversation` and public configuration (the
:class:`SnapshotHost` protocol), never its private fields; the snapshot model itself is
:mod:`ctxbudget.session.snapshot`.
"""

from __future__ import annotations

from typing import Protocol

from ..archive.store import Archive
from ..cognitive import CognitiveContextSession
from ..compaction.policy import CompactionPolicy
from ..errors import SnapshotFormatError
from ..messages.tokens import Calibration
from .conversation import Conversation
from .snapshot import SessionSnapshot, TrackerSnapshot
from .tracking import ContextWindowTracker

__all__: list[str] = []


class SnapshotHost(Protocol):
    """What a snapshot reads from (and restores into) a session: :class:`~ctxbudget.session.ContextSession` has it."""

    log_seq: int

    @property
    def session_id(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def policy(self) -> CompactionPolicy: ...
    @property
    def compact_instructions(self) -> str | None: ...
    @property
    def cognitive(self) -> CognitiveContextSession | None: ...
    @property
    def tracker(self) -> ContextWindowTracker: ...
    @property
    def conversation(self) -> Conversation: ...


def take(session: SnapshotHost, *, archive: bool = True) -> SessionSnapshot:
    """Everything needed to resume ``session`` (the caller holds its lock).

    With ``archive=False`` the snapshot leaves out the archive and the add order (both grow with the whole history):
    a shared session keeps them in its store and writes the live positions itself.
    """
    tracker = session.tracker
    conversation = session.conversation
    return SessionSnapshot(
        session_id=session.session_id,
        model=session.model,
        max_tokens=session.max_tokens,
        system_prompt=conversation.system_prompt,
        tools=conversation.tools,
        policy=session.policy.model_dump(mode="json"),
        compact_instructions=session.compact_instructions,
        history=tuple(conversation.live.messages),
        summary=conversation.summary,
        goal=conversation.goal,
        goal_id=conversation.goal_id,
        pinned=conversation.pinned,
        context=conversation.context,
        system_messages=conversation.system_messages,
        pinned_ids=tuple(sorted(conversation.pinned_ids)),
        archive=tuple(conversation.archive.entries()) if archive else (),
        order=conversation.order if archive else {},
        binding=session.cognitive.binding.to_dict() if session.cognitive is not None else None,
        log_seq=session.log_seq,
        tracker=TrackerSnapshot(
            ratio=tracker.calibration.ratio,
            samples=tracker.calibration.samples,
            last_reported=tracker.last_reported,
            counted_at_report=tracker.counted_at_report,
            floor=tracker.floor,
        ),
    )


def apply(session: SnapshotHost, snap: SessionSnapshot, *, archive: Archive | None = None) -> None:
    """Load a snapshot's state into a freshly constructed session (whose configuration came from it).

    ``archive`` is the archive of a snapshot that keeps it in a store (``archive_in_store``); such a snapshot is
    refused without one, rather than restored with its originals missing.
    """
    if snap.archive_in_store and archive is None:
        raise SnapshotFormatError(
            "snapshot.archive_in_store: this snapshot's archive is kept in its store beside it; load it with "
            "SharedSession (or pass the store's archive), it cannot be restored alone",
            field="archive_in_store",
        )
    missing = [m.id for m in snap.history if m.id not in snap.order]
    if missing:
        raise SnapshotFormatError(
            f"snapshot.order: {len(missing)} live message(s) missing, e.g. {missing[0]!r}", field="order"
        )
    session.conversation.load(
        archive=archive if archive is not None else snap.archive,
        order=snap.order,
        summary=snap.summary,
        goal=snap.goal,
        goal_id=snap.goal_id,
        pinned=snap.pinned,
        pinned_ids=snap.pinned_ids,
        system_messages=snap.system_messages,
        context=snap.context,
        history=snap.history,
    )
    tracker = session.tracker
    tracker.calibration = Calibration(ratio=snap.tracker.ratio, samples=snap.tracker.samples)
    tracker.last_reported, tracker.counted_at_report = snap.tracker.last_reported, snap.tracker.counted_at_report
    tracker.floor = snap.tracker.floor
    session.log_seq = snap.log_seq
