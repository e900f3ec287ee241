"""Sessions: the conversation, its live history, the request it builds, events, usage tracking and snapshots.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages._lazy import lazy_face

if TYPE_CHECKING:
    from .events import (
        ArchivedItem,
        CognitiveContextBound,
        CompactionFailed,
        ContextCompacted,
        ContextUpdate,
        Event,
        EventBus,
        EventType,
        ToolOutputBounded,
        ToolResultUnsent,
    )
    from .request import (
        INTERRUPTED_NOTICE,
        BuiltRequest,
        PreCompact,
    )
    from .session import (
        ContextSession,
    )
    from .snapshot import (
        SNAPSHOT_SCHEMA,
        SessionSnapshot,
        TrackerSnapshot,
    )
    from .tracking import (
        ContextState,
        ContextWindowTracker,
    )

__all__ = [
    "INTERRUPTED_NOTICE",
    "SNAPSHOT_SCHEMA",
    "ArchivedItem",
    "BuiltRequest",
    "CognitiveContextBound",
    "CompactionFailed",
    "ContextCompacted",
    "ContextSession",
    "ContextState",
    "ContextUpdate",
    "ContextWindowTracker",
    "Event",
    "EventBus",
    "EventType",
    "PreCompact",
    "SessionSnapshot",
    "ToolOutputBounded",
    "ToolResultUnsent",
    "TrackerSnapshot",
]

_LAZY: dict[str, str] = {
    "ArchivedItem": "events",
    "BuiltRequest": "request",
    "CognitiveContextBound": "events",
    "CompactionFailed": "events",
    "ContextCompacted": "events",
    "ContextSession": "session",
    "ContextState": "tracking",
    "ContextUpdate": "events",
    "ContextWindowTracker": "tracking",
    "Event": "events",
    "EventBus": "events",
    "EventType": "events",
    "INTERRUPTED_NOTICE": "request",
    "PreCompact": "request",
    "SNAPSHOT_SCHEMA": "snapshot",
    "SessionSnapshot": "snapshot",
    "ToolOutputBounded": "events",
    "ToolResultUnsent": "events",
    "TrackerSnapshot": "snapshot",
}


__getattr__, __dir__ = lazy_face(__name__, _LAZY)
