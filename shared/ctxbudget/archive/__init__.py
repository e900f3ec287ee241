"""The archive: every original that leaves the prompt, kept by handle, and the search over it.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .entry import (
        HANDLE_PREFIX,
        ArchiveEntry,
        ArchiveReason,
    )
    from .search import (
        ArchiveHit,
        ArchiveIndex,
        render_hits,
    )
    from .store import (
        Archive,
    )

__all__ = [
    "HANDLE_PREFIX",
    "Archive",
    "ArchiveEntry",
    "ArchiveHit",
    "ArchiveIndex",
    "ArchiveReason",
    "render_hits",
]

_LAZY: dict[str, str] = {
    "Archive": "store",
    "ArchiveEntry": "entry",
    "ArchiveHit": "search",
    "ArchiveIndex": "search",
    "ArchiveReason": "entry",
    "HANDLE_PREFIX": "entry",
    "render_hits": "search",
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
