"""Shared sessions: many workers, threads or processes on one session through a snapshot store.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
