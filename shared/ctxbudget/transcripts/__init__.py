"""Transcripts: real logs read into messages, in every format the CLI reads, and written back.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages._lazy import lazy_face

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


__getattr__, __dir__ = lazy_face(__name__, _LAZY)
