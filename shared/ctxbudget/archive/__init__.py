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
        content_digest,
    )
    from .search import (
        EXCERPT_CHARS,
        MAX_K,
        QUERY_ECHO_CHARS,
        ArchiveHit,
        ArchiveIndex,
        Tokenizer,
        check_search_args,
        fit_text,
        render_hits,
        tokenize,
    )
    from .store import (
        Archive,
    )

__all__ = [
    "EXCERPT_CHARS",
    "HANDLE_PREFIX",
    "MAX_K",
    "QUERY_ECHO_CHARS",
    "Archive",
    "ArchiveEntry",
    "ArchiveHit",
    "ArchiveIndex",
    "ArchiveReason",
    "Tokenizer",
    "check_search_args",
    "content_digest",
    "fit_text",
    "render_hits",
    "tokenize",
]

_LAZY: dict[str, str] = {
    "Archive": "store",
    "ArchiveEntry": "entry",
    "ArchiveHit": "search",
    "ArchiveIndex": "search",
    "ArchiveReason": "entry",
    "EXCERPT_CHARS": "search",
    "HANDLE_PREFIX": "entry",
    "MAX_K": "search",
    "QUERY_ECHO_CHARS": "search",
    "Tokenizer": "search",
    "check_search_args": "search",
    "content_digest": "entry",
    "fit_text": "search",
    "render_hits": "search",
    "tokenize": "search",
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
