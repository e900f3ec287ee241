"""Compaction: the policy, the tiers, and what a summary keeps (salience, the ledger, the summarizers).

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages._lazy import lazy_face

if TYPE_CHECKING:
    from .policy import (
        CompactionPolicy,
    )
    from .receipt import (
        ArchivedItem,
    )
    from .summarize import (
        SUMMARY_SECTIONS,
        AsyncSummarizer,
        ExtractiveSummarizer,
        Summarizer,
        SummaryRequest,
        build_summary_prompt,
        render_transcript,
    )
    from .tiers import (
        ARCHIVE_META,
    )

__all__ = [
    "ARCHIVE_META",
    "SUMMARY_SECTIONS",
    "ArchivedItem",
    "AsyncSummarizer",
    "CompactionPolicy",
    "ExtractiveSummarizer",
    "Summarizer",
    "SummaryRequest",
    "build_summary_prompt",
    "render_transcript",
]

_LAZY: dict[str, str] = {
    "ARCHIVE_META": "tiers",
    "ArchivedItem": "receipt",
    "AsyncSummarizer": "summarize",
    "CompactionPolicy": "policy",
    "ExtractiveSummarizer": "summarize",
    "SUMMARY_SECTIONS": "summarize",
    "Summarizer": "summarize",
    "SummaryRequest": "summarize",
    "build_summary_prompt": "summarize",
    "render_transcript": "summarize",
}


__getattr__, __dir__ = lazy_face(__name__, _LAZY)
