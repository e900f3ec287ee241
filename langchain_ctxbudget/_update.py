"""What a thread's view hands the graph: the ``ctxbudget_*`` state fields and the update still to persist.

:class:`Pending` collects what compaction changed (removals and in-place replacements by id, the summary, the meta
a session is rebuilt from) until the view hands it over beside the model's reply, with the reference to the
thread's archive (written to its store first).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxbudget.session import ContextSession
from langchain_core.messages import BaseMessage, RemoveMessage

from ._archive_store import ArchiveRef

__all__ = ["ARCHIVE_KEY", "META_KEY", "SUMMARY_KEY", "Pending", "session_meta"]

SUMMARY_KEY = "ctxbudget_summary"
"""State field: the cumulative summary of everything compacted away."""
META_KEY = "ctxbudget_meta"
"""State field: goal, pinned messages and calibration, to rebuild a session from a checkpoint."""
ARCHIVE_KEY = "ctxbudget_archive"
"""State field: a reference to the thread's archive in its store (space, newest batch, entry count)."""


@dataclass
class Pending:
    """A state update not yet handed to the graph (new archive entries are in the thread's archive until written)."""

    removed: list[str] = field(default_factory=list)
    replaced: dict[str, BaseMessage] = field(default_factory=dict)
    summary: str | None = None
    meta: dict[str, Any] | None = None
    summary_dirty: bool = False

    @property
    def empty(self) -> bool:
        """Nothing to hand over: :meth:`update` without an archive reference is ``None``."""
        return not (self.removed or self.replaced or self.summary_dirty or self.meta is not None)

    def update(self, archive: ArchiveRef | None = None) -> dict[str, Any] | None:
        """The graph update: removals and in-place replacements by id, summary, meta and the archive's reference."""
        out: dict[str, Any] = {}
        messages: list[BaseMessage] = [RemoveMessage(id=i) for i in self.removed]
        messages.extend(self.replaced.values())
        if messages:
            out["messages"] = messages
        if self.summary_dirty:
            out[SUMMARY_KEY] = self.summary
        if self.meta is not None:
            out[META_KEY] = self.meta
        if archive is not None:
            out[ARCHIVE_KEY] = archive.to_state()
        return out or None


def session_meta(session: ContextSession) -> dict[str, Any]:
    """What ``ctxbudget_meta`` persists, read in O(pins) (not a full ``snapshot()``: O(history + archive)).

    The goal's message id and the pins have no public accessor on ``ContextSession`` yet, so they are read from the
    attributes :meth:`ContextSession.snapshot` itself reads (directly, so a rename fails loudly in the tests);
    the values are identical to the snapshot's.
    """
    calibration = session.tracker.calibration
    return {
        "goal": session.goal,
        "goal_id": session.goal_message_id,
        "pinned": [m.model_dump(mode="json") for m in session.pinned],
        "pinned_ids": sorted(session.pinned_ids),
        "ratio": calibration.ratio,
        "samples": calibration.samples,
    }
