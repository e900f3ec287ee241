"""Transcripts: real logs read into messages, in every format the CLI reads, and written back.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .formats import (
        DEFAULT_OUTPUT,
        OUTPUT_FORMATS,
        PROVIDER_FORMATS,
        READ_FORMATS,
        check_name,
        default_output_format,
        render,
    )
    from .reading import (
        COMPACTED_FORMAT,
        MAX_DEPTH,
        CompactedState,
        Transcript,
        TranscriptFormat,
        UsageReport,
        load_transcript,
        parse_transcript,
    )

__all__ = [
    "COMPACTED_FORMAT",
    "DEFAULT_OUTPUT",
    "MAX_DEPTH",
    "OUTPUT_FORMATS",
    "PROVIDER_FORMATS",
    "READ_FORMATS",
    "CompactedState",
    "Transcript",
    "TranscriptFormat",
    "UsageReport",
    "check_name",
    "default_output_format",
    "load_transcript",
    "parse_transcript",
    "render",
]

_LAZY: dict[str, str] = {
    "COMPACTED_FORMAT": "reading",
    "CompactedState": "reading",
    "DEFAULT_OUTPUT": "formats",
    "MAX_DEPTH": "reading",
    "OUTPUT_FORMATS": "formats",
    "PROVIDER_FORMATS": "formats",
    "READ_FORMATS": "formats",
    "Transcript": "reading",
    "TranscriptFormat": "reading",
    "UsageReport": "reading",
    "check_name": "formats",
    "default_output_format": "formats",
    "load_transcript": "reading",
    "parse_transcript": "reading",
    "render": "formats",
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
