"""Shared sessions: many workers, threads or processes on one session through a snapshot store.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages._lazy import lazy_face

if TYPE_CHECKING:
    from .session import (
        LoadedSession,
        SharedSession,
        SharedSessionStats,
    )

__all__ = [
    "LoadedSession",
    "SharedSession",
    "SharedSessionStats",
]

_LAZY: dict[str, str] = {
    "LoadedSession": "session",
    "SharedSession": "session",
    "SharedSessionStats": "session",
}


__getattr__, __dir__ = lazy_face(__name__, _LAZY)
