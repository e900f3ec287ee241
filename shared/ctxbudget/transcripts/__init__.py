"""Transcripts: real logs read into messages, in every format the CLI reads, and written back.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .reading import (
        Transcript,
        TranscriptFormat,
        load_transcript,
        parse_transcript,
    )

__all__ = [
    "Transcript",
    "TranscriptFormat",
    "load_transcript",
    "parse_transcript",
]

_LAZY: dict[str, str] = {
    "Transcript": "reading",
    "TranscriptFormat": "reading",
    "load_transcript": "reading",
    "parse_transcript": "reading",
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
