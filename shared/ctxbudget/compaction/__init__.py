"""Compaction: the policy, the tiers, and what a summary keeps (salience, the ledger, the summarizers).

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .harness import (
        CONTINUATION_PREFIXES,
        HARNESS_PREFIXES,
        is_continuation_summary,
        strip_harness,
    )
    from .ledger import (
        LEDGER_SECTIONS,
        Ledger,
        parse_ledger,
    )
    from .memo import (
        ReadMemo,
    )
    from .outcomes import (
        CallKind,
        FileOp,
        call_kind,
        call_label,
        failure_line,
        file_op,
        is_file_read,
        is_search,
        outcome,
    )
    from .outputs import (
        OutputItem,
        output_items,
    )
    from .policy import (
        CompactionPolicy,
    )
    from .receipt import ArchivedItem
    from .salience import (
        SalienceKind,
        Salient,
        informative_tokens,
        item_key,
        key_lines,
        salient_items,
    )
    from .statements import (
        Statement,
        StatementKind,
        assistant_statements,
        classify,
        label_of,
        user_statements,
    )
    from .summarize import (
        SUMMARY_SECTIONS,
        AsyncSummarizer,
        ExtractiveSummarizer,
        Summarizer,
        SummaryRequest,
        build_summary_prompt,
        render_transcript,
        verify_summary,
    )
    from .supersession import (
        PREFIX,
        Subject,
        SupersessionIndex,
        subject_of,
    )
    from .textscan import (
        MAX_RUN,
        STOP_WORDS,
        Scan,
        Value,
        bounded,
        clip,
        content_words,
        scan,
        sentences,
        stem,
        values,
    )
    from .tiers import (
        ARCHIVE_META,
        CLEARED_META,
        Compaction,
        CompactionOutcome,
        SummaryStep,
        pinned_form,
        validate_summary,
    )

__all__ = [
    "ARCHIVE_META",
    "CLEARED_META",
    "CONTINUATION_PREFIXES",
    "HARNESS_PREFIXES",
    "LEDGER_SECTIONS",
    "MAX_RUN",
    "PREFIX",
    "STOP_WORDS",
    "SUMMARY_SECTIONS",
    "ArchivedItem",
    "AsyncSummarizer",
    "CallKind",
    "Compaction",
    "CompactionOutcome",
    "CompactionPolicy",
    "ExtractiveSummarizer",
    "FileOp",
    "Ledger",
    "OutputItem",
    "ReadMemo",
    "SalienceKind",
    "Salient",
    "Scan",
    "Statement",
    "StatementKind",
    "Subject",
    "Summarizer",
    "SummaryRequest",
    "SummaryStep",
    "SupersessionIndex",
    "Value",
    "assistant_statements",
    "bounded",
    "build_summary_prompt",
    "call_kind",
    "call_label",
    "classify",
    "clip",
    "content_words",
    "failure_line",
    "file_op",
    "informative_tokens",
    "is_continuation_summary",
    "is_file_read",
    "is_search",
    "item_key",
    "key_lines",
    "label_of",
    "outcome",
    "output_items",
    "parse_ledger",
    "pinned_form",
    "render_transcript",
    "salient_items",
    "scan",
    "sentences",
    "stem",
    "strip_harness",
    "subject_of",
    "user_statements",
    "validate_summary",
    "values",
    "verify_summary",
]

_LAZY: dict[str, str] = {
    "ArchivedItem": "receipt",
    "ARCHIVE_META": "tiers",
    "AsyncSummarizer": "summarize",
    "CLEARED_META": "tiers",
    "CONTINUATION_PREFIXES": "harness",
    "CallKind": "outcomes",
    "Compaction": "tiers",
    "CompactionOutcome": "tiers",
    "CompactionPolicy": "policy",
    "ExtractiveSummarizer": "summarize",
    "FileOp": "outcomes",
    "HARNESS_PREFIXES": "harness",
    "LEDGER_SECTIONS": "ledger",
    "Ledger": "ledger",
    "MAX_RUN": "textscan",
    "OutputItem": "outputs",
    "PREFIX": "supersession",
    "ReadMemo": "memo",
    "STOP_WORDS": "textscan",
    "SUMMARY_SECTIONS": "summarize",
    "SalienceKind": "salience",
    "Salient": "salience",
    "Scan": "textscan",
    "Statement": "statements",
    "StatementKind": "statements",
    "Subject": "supersession",
    "Summarizer": "summarize",
    "SummaryRequest": "summarize",
    "SummaryStep": "tiers",
    "SupersessionIndex": "supersession",
    "Value": "textscan",
    "assistant_statements": "statements",
    "bounded": "textscan",
    "build_summary_prompt": "summarize",
    "call_kind": "outcomes",
    "call_label": "outcomes",
    "classify": "statements",
    "clip": "textscan",
    "content_words": "textscan",
    "failure_line": "outcomes",
    "file_op": "outcomes",
    "informative_tokens": "salience",
    "is_continuation_summary": "harness",
    "is_file_read": "outcomes",
    "is_search": "outcomes",
    "item_key": "salience",
    "key_lines": "salience",
    "label_of": "statements",
    "outcome": "outcomes",
    "output_items": "outputs",
    "parse_ledger": "ledger",
    "pinned_form": "tiers",
    "render_transcript": "summarize",
    "salient_items": "salience",
    "scan": "textscan",
    "sentences": "textscan",
    "stem": "textscan",
    "strip_harness": "harness",
    "subject_of": "supersession",
    "user_statements": "statements",
    "validate_summary": "tiers",
    "values": "textscan",
    "verify_summary": "summarize",
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
