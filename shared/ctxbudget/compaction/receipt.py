"""A compaction's receipt: one :class:`ArchivedItem` per message that left the prompt, with where it is kept.

Compaction writes it; the ``context_compacted`` event (:class:`~ctxbudget.session.ContextCompacted`) carries it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["ArchivedItem"]


class ArchivedItem(BaseModel):
    """One entry of a compaction receipt: which message left the prompt, why, and where it is kept."""

    model_config = ConfigDict(frozen=True)

    message_id: str
    handle: str
    reason: str
    tokens_before: int
    tokens_after: int
    summarized: bool = False
    """True when the message's original content (tool outputs included) went into the summary."""
