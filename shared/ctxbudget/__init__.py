"""ctxbudget: treat an LLM's context window as a budgeted resource.

This face holds the names a user types: sessions, the compaction policy and summarizers, messages and tool calls,
token counters, fragments and the planner, the archive, events, stores, transcripts, and the error tree's base
classes; ``ctxbudget.testing`` holds the test doubles. Everything else is imported from its layer package
(``ctxbudget.messages``, ``ctxbudget.context``, ``ctxbudget.archive``, ``ctxbudget.compaction``,
``ctxbudget.session``, ``ctxbudget.stores``, ``ctxbudget.shared_session``, ``ctxbudget.providers``,
``ctxbudget.transcripts``, ``ctxbudget.cognitive``, ``ctxbudget.cli``; ``docs/architecture.md`` says what each
owns). ``tests/test_public_api.py`` pins this face and every layer's.

Every name is imported on first use (PEP 562 ``__getattr__``), so ``import ctxbudget`` costs next to nothing. A
name this face held before the layers were split out still works here, with a ``DeprecationWarning`` naming the
package to import it from.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what static analysis and IDEs see; at run time each name is imported when first used
    from . import testing
    from .archive import (
        Archive,
        ArchiveEntry,
        ArchiveHit,
    )
    from .cognitive import (
        CognitiveContextSession,
        PackageBinding,
    )
    from .compaction import (
        AsyncSummarizer,
        CompactionPolicy,
        ExtractiveSummarizer,
        Summarizer,
        SummaryRequest,
    )
    from .context import (
        BuiltContext,
        ContextItem,
        Fragment,
        PlannerConfig,
        PlanResult,
        assemble_fragments,
        plan_context,
    )
    from .errors import (
        ArchiveError,
        BudgetExceededError,
        CompactionError,
        ContextOverflowError,
        CtxBudgetError,
        InvalidMessageError,
        InvalidPolicyError,
        SnapshotError,
        SummarizerError,
        TranscriptError,
        UsageError,
    )
    from .messages import (
        CharCounter,
        ContentBlock,
        EstimatingCounter,
        Message,
        TiktokenCounter,
        TokenCounter,
        ToolCall,
        ToolSchema,
        count_request,
        find_tool_pair_problems,
        get_encoding,
        repair_tool_pairs,
    )
    from .providers import (
        counter_for_model,
        messages_from_anthropic,
        messages_from_openai,
    )
    from .session import (
        BuiltRequest,
        ContextCompacted,
        ContextSession,
        ContextState,
        Event,
        EventType,
        PreCompact,
    )
    from .shared_session import (
        SharedSession,
    )
    from .stores import (
        InMemorySnapshotStore,
        SnapshotStore,
        SQLiteSnapshotStore,
    )
    from .transcripts import (
        Transcript,
        load_transcript,
    )

__version__ = "0.1.0"

__all__ = [
    "Archive",
    "ArchiveEntry",
    "ArchiveError",
    "ArchiveHit",
    "AsyncSummarizer",
    "BudgetExceededError",
    "BuiltContext",
    "BuiltRequest",
    "CharCounter",
    "CognitiveContextSession",
    "CompactionError",
    "CompactionPolicy",
    "ContentBlock",
    "ContextCompacted",
    "ContextItem",
    "ContextOverflowError",
    "ContextSession",
    "ContextState",
    "CtxBudgetError",
    "EstimatingCounter",
    "Event",
    "EventType",
    "ExtractiveSummarizer",
    "Fragment",
    "InMemorySnapshotStore",
    "InvalidMessageError",
    "InvalidPolicyError",
    "Message",
    "PackageBinding",
    "PlanResult",
    "PlannerConfig",
    "PreCompact",
    "SQLiteSnapshotStore",
    "SharedSession",
    "SnapshotError",
    "SnapshotStore",
    "Summarizer",
    "SummarizerError",
    "SummaryRequest",
    "TiktokenCounter",
    "TokenCounter",
    "ToolCall",
    "ToolSchema",
    "Transcript",
    "TranscriptError",
    "UsageError",
    "__version__",
    "assemble_fragments",
    "count_request",
    "counter_for_model",
    "find_tool_pair_problems",
    "get_encoding",
    "load_transcript",
    "messages_from_anthropic",
    "messages_from_openai",
    "plan_context",
    "repair_tool_pairs",
    "testing",
]

_LAZY: dict[str, str] = {
    "Archive": "archive",
    "ArchiveEntry": "archive",
    "ArchiveError": "errors",
    "ArchiveHit": "archive",
    "AsyncSummarizer": "compaction",
    "BudgetExceededError": "errors",
    "BuiltContext": "context",
    "BuiltRequest": "session",
    "CharCounter": "messages",
    "CognitiveContextSession": "cognitive",
    "CompactionError": "errors",
    "CompactionPolicy": "compaction",
    "ContentBlock": "messages",
    "ContextCompacted": "session",
    "ContextItem": "context",
    "ContextOverflowError": "errors",
    "ContextSession": "session",
    "ContextState": "session",
    "CtxBudgetError": "errors",
    "EstimatingCounter": "messages",
    "Event": "session",
    "EventType": "session",
    "ExtractiveSummarizer": "compaction",
    "Fragment": "context",
    "InMemorySnapshotStore": "stores",
    "InvalidMessageError": "errors",
    "InvalidPolicyError": "errors",
    "Message": "messages",
    "PackageBinding": "cognitive",
    "PlanResult": "context",
    "PlannerConfig": "context",
    "PreCompact": "session",
    "SQLiteSnapshotStore": "stores",
    "SharedSession": "shared_session",
    "SnapshotError": "errors",
    "SnapshotStore": "stores",
    "Summarizer": "compaction",
    "SummarizerError": "errors",
    "SummaryRequest": "compaction",
    "TiktokenCounter": "messages",
    "TokenCounter": "messages",
    "ToolCall": "messages",
    "ToolSchema": "messages",
    "Transcript": "transcripts",
    "TranscriptError": "errors",
    "UsageError": "errors",
    "assemble_fragments": "context",
    "count_request": "messages",
    "counter_for_model": "providers",
    "find_tool_pair_problems": "messages",
    "get_encoding": "messages",
    "load_transcript": "transcripts",
    "messages_from_anthropic": "providers",
    "messages_from_openai": "providers",
    "plan_context": "context",
    "repair_tool_pairs": "messages",
}
"""Each name of the face and the layer package it comes from."""

_MOVED: dict[str, str] = {
    "new_message_id": "messages",
    "ARCHIVE_META": "compaction",
    "AnthropicCounter": "providers",
    "ArchiveIndex": "archive",
    "ArchiveReason": "archive",
    "ArchiveRecord": "stores",
    "ArchivedItem": "session",
    "AsyncKnowledgeProvider": "cognitive",
    "BaseSnapshotStore": "stores",
    "BindingLimits": "cognitive",
    "BindingMismatchError": "errors",
    "BindingResumeError": "errors",
    "BoundedCounter": "messages",
    "COGNITIVE_CONTEXT_BOUND": "cognitive",
    "Calibration": "messages",
    "Citation": "cognitive",
    "CitedDocument": "cognitive",
    "CognitiveContextBound": "session",
    "CognitiveContextError": "errors",
    "CognitiveExclusivityError": "errors",
    "CompactionFailed": "session",
    "ContextRequest": "cognitive",
    "ContextResponse": "cognitive",
    "ContextUpdate": "session",
    "ContextWindowTracker": "session",
    "DATA_TRUSTS": "context",
    "DEFAULT_REGISTRY": "messages",
    "DropReason": "context",
    "DroppedItem": "context",
    "DuplicateFragmentError": "errors",
    "ENCODING_NAMES": "messages",
    "EncodingDataError": "errors",
    "EventBus": "session",
    "FRAGMENT_ROLES": "context",
    "FolderKnowledgeProvider": "cognitive",
    "FragmentLimitError": "errors",
    "FragmentRole": "context",
    "FragmentUsage": "context",
    "HANDLE_PREFIX": "archive",
    "INSTRUCTION_FILE_NAMES": "context",
    "INSTRUCTION_ROLES": "context",
    "INTERRUPTED_NOTICE": "session",
    "InvalidBinding": "errors",
    "InvalidFragmentError": "errors",
    "InvalidLimits": "errors",
    "InvalidRequest": "errors",
    "KnowledgeBinding": "cognitive",
    "KnowledgeProvider": "cognitive",
    "Lifetime": "context",
    "LoadedSession": "shared_session",
    "MISSING_RESULT_TEXT": "messages",
    "MessageRole": "messages",
    "MessageSequence": "messages",
    "MessageState": "messages",
    "MissingProviderError": "errors",
    "ModelInfo": "messages",
    "ModelRegistry": "messages",
    "PlanAuditError": "errors",
    "PlannedItem": "context",
    "Provider": "messages",
    "ProviderFailure": "errors",
    "ProviderKind": "cognitive",
    "REPLY_PRIMING": "messages",
    "ResponseDrift": "errors",
    "SEPARATOR": "context",
    "SNAPSHOT_SCHEMA": "session",
    "SUMMARY_SECTIONS": "compaction",
    "SessionSnapshot": "session",
    "SharedSessionStats": "shared_session",
    "Skill": "context",
    "SkillLibrary": "context",
    "SnapshotConflictError": "errors",
    "SnapshotFormatError": "errors",
    "SnapshotIntegrityError": "errors",
    "SnapshotStoreError": "errors",
    "SourceError": "errors",
    "StoredSnapshot": "stores",
    "SystemPromptTooLargeError": "errors",
    "TOKENS_PER_IMAGE": "messages",
    "TOKENS_PER_MESSAGE": "messages",
    "TOKENS_PER_NAME": "messages",
    "TOKENS_PER_TOOL_CALL": "messages",
    "ToolOutputBounded": "session",
    "ToolPairProblem": "messages",
    "ToolResultUnsent": "session",
    "TrackerSnapshot": "session",
    "TranscriptFormat": "transcripts",
    "Trust": "context",
    "UnexpectedBindingError": "errors",
    "UnknownModelError": "errors",
    "UsageFigures": "providers",
    "assemble_context_plan": "context",
    "build_summary_prompt": "compaction",
    "canonical_digest": "cognitive",
    "check_providers": "cognitive",
    "check_resume": "cognitive",
    "compact_instructions": "context",
    "escape_attribute": "context",
    "escape_content": "context",
    "evidence_item": "context",
    "example_package_path": "cognitive",
    "excerpt": "context",
    "find_instruction_files": "context",
    "load_compact_instructions": "context",
    "load_instruction_items": "context",
    "messages_from_responses": "providers",
    "messages_to_anthropic": "providers",
    "messages_to_openai": "providers",
    "messages_to_responses": "providers",
    "parse_front_matter": "context",
    "parse_transcript": "transcripts",
    "render_envelope": "context",
    "render_hits": "archive",
    "render_item": "context",
    "render_items": "context",
    "render_transcript": "compaction",
    "safe_cut_points": "messages",
    "score_item": "context",
    "to_anthropic_request": "providers",
    "to_openai_request": "providers",
    "to_responses_request": "providers",
    "tool_from_anthropic": "providers",
    "tool_from_openai": "providers",
    "tool_from_responses": "providers",
    "tool_to_anthropic": "providers",
    "tool_to_openai": "providers",
    "tool_to_responses": "providers",
    "tool_use_system_prompt_tokens": "providers",
    "trust_score": "context",
    "usage_figures": "providers",
    "validate_tool_sequence": "messages",
}
"""Names this face held before the layers were split out, and the package that holds each now."""


_PACKAGES = frozenset(
    {
        "archive", "cli", "cognitive", "compaction", "context", "errors", "messages", "providers", "session",
        "shared_session", "stores", "testing", "transcripts",
    }
)  # fmt: skip
"""The layer packages (and the errors and testing modules), importable as attributes of this package."""


def __getattr__(name: str) -> Any:
    if name in _PACKAGES:  # ctxbudget.archive.ArchiveIndex after a bare ``import ctxbudget``
        return importlib.import_module(f".{name}", __name__)
    layer = _LAZY.get(name)
    if layer is None:
        layer = _MOVED.get(name)
        if layer is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        warnings.warn(f"ctxbudget.{name} moved: import it from ctxbudget.{layer}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(f".{layer}", __name__), name)
    value = getattr(importlib.import_module(f".{layer}", __name__), name)
    globals()[name] = value  # later lookups find it without calling __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
