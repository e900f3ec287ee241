"""The archive: every original that leaves the prompt, kept by handle, and the search over it.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages._lazy import lazy_face

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


__getattr__, __dir__ = lazy_face(__name__, _LAZY)
