"""The public API is exactly these lists: adding or removing a name is a deliberate, reviewed change.

The top-level face holds the names a user types (at most 60); every other public name is imported from its layer
package, whose own face is pinned here too. A name the top-level face held before the layers were split out still
resolves there, with a DeprecationWarning that names its package.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import warnings

import ctxbudget
import pytest

EXPECTED = [
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

LAYER_FACES: dict[str, list[str]] = {
    "messages": [
        "BoundedCounter",
        "Calibration",
        "CharCounter",
        "ContentBlock",
        "DEFAULT_REGISTRY",
        "ENCODING_NAMES",
        "EstimatingCounter",
        "MISSING_RESULT_TEXT",
        "Message",
        "MessageRole",
        "MessageSequence",
        "MessageState",
        "ModelInfo",
        "ModelRegistry",
        "Provider",
        "REPLY_PRIMING",
        "TOKENS_PER_IMAGE",
        "TOKENS_PER_MESSAGE",
        "TOKENS_PER_NAME",
        "TOKENS_PER_TOOL_CALL",
        "TiktokenCounter",
        "TokenCounter",
        "ToolCall",
        "ToolPairProblem",
        "ToolSchema",
        "count_request",
        "find_tool_pair_problems",
        "get_encoding",
        "new_message_id",
        "repair_tool_pairs",
        "safe_cut_points",
        "validate_tool_sequence",
    ],
    "providers": [
        "ANTHROPIC",
        "ANTHROPIC_TOKENS_PER_IMAGE",
        "AnthropicCounter",
        "CacheControl",
        "OPENAI_CHAT",
        "OPENAI_RESPONSES",
        "PROVIDER_META",
        "UsageFigures",
        "counter_for_model",
        "is_responses_item",
        "message_from_openai",
        "message_to_openai",
        "messages_from_anthropic",
        "messages_from_openai",
        "messages_from_responses",
        "messages_to_anthropic",
        "messages_to_openai",
        "messages_to_responses",
        "to_anthropic_request",
        "to_openai_request",
        "to_responses_request",
        "tool_from_anthropic",
        "tool_from_openai",
        "tool_from_responses",
        "tool_to_anthropic",
        "tool_to_openai",
        "tool_to_responses",
        "tool_use_system_prompt_tokens",
        "usage_figures",
    ],
    "archive": [
        "Archive",
        "ArchiveEntry",
        "ArchiveHit",
        "ArchiveIndex",
        "ArchiveReason",
        "HANDLE_PREFIX",
        "render_hits",
    ],
    "context": [
        "BuiltContext",
        "ContextItem",
        "DATA_TRUSTS",
        "DropReason",
        "DroppedItem",
        "FRAGMENT_ROLES",
        "Fragment",
        "FragmentRole",
        "FragmentUsage",
        "INSTRUCTION_FILE_NAMES",
        "INSTRUCTION_ROLES",
        "Lifetime",
        "PlanResult",
        "PlannedItem",
        "PlannerConfig",
        "SEPARATOR",
        "Skill",
        "SkillLibrary",
        "Trust",
        "assemble_context_plan",
        "assemble_fragments",
        "compact_instructions",
        "escape_attribute",
        "escape_content",
        "evidence_item",
        "excerpt",
        "find_instruction_files",
        "load_compact_instructions",
        "load_instruction_items",
        "parse_front_matter",
        "plan_context",
        "render_envelope",
        "render_item",
        "render_items",
        "score_item",
        "trust_score",
    ],
    "cognitive": [
        "AsyncKnowledgeProvider",
        "BindingLimits",
        "CAPABILITY_SNAPSHOT_DOMAIN",
        "CITATION_SCHEMA",
        "COGNITIVE_CONTEXT_BOUND",
        "Citation",
        "CitedDocument",
        "CognitiveContextSession",
        "ContextRequest",
        "ContextResponse",
        "EventCallback",
        "FolderKnowledgeProvider",
        "KNOWLEDGE_BINDING_SCHEMA",
        "KNOWLEDGE_READ_SCHEMA",
        "KNOWLEDGE_SEARCH_SCHEMA",
        "KnowledgeBinding",
        "KnowledgeProvider",
        "MAX_DOCUMENT_BYTES_CAP",
        "MAX_RESULTS_CAP",
        "MAX_TOTAL_BYTES_CAP",
        "PACKAGE_BINDING_SCHEMA",
        "PROVIDER_KINDS",
        "PackageBinding",
        "PackageManifest",
        "ProviderKind",
        "REQUEST_SCHEMA",
        "RESPONSE_SCHEMA",
        "canonical_digest",
        "canonical_json",
        "check_providers",
        "check_resume",
        "citation_marker",
        "example_package_path",
        "provider_kind",
        "relevance_at",
        "render_document",
        "render_response",
        "sha256_digest",
        "validate_binding",
        "validate_citation",
        "validate_document",
        "validate_knowledge",
        "validate_limits",
        "validate_provider_name",
        "validate_request",
        "validate_response",
    ],
    "compaction": [
        "ARCHIVE_META",
        "ArchivedItem",
        "AsyncSummarizer",
        "CompactionPolicy",
        "ExtractiveSummarizer",
        "SUMMARY_SECTIONS",
        "Summarizer",
        "SummaryRequest",
        "build_summary_prompt",
        "render_transcript",
    ],
    "session": [
        "ArchivedItem",
        "BuiltRequest",
        "CognitiveContextBound",
        "CompactionFailed",
        "ContextCompacted",
        "ContextSession",
        "ContextState",
        "ContextUpdate",
        "ContextWindowTracker",
        "Event",
        "EventBus",
        "EventType",
        "INTERRUPTED_NOTICE",
        "PreCompact",
        "SNAPSHOT_SCHEMA",
        "SessionSnapshot",
        "ToolOutputBounded",
        "ToolResultUnsent",
        "TrackerSnapshot",
    ],
    "stores": [
        "ArchiveRecord",
        "BaseSnapshotStore",
        "InMemorySnapshotStore",
        "RedisSnapshotStore",
        "SQLiteSnapshotStore",
        "SnapshotStore",
        "StoredSnapshot",
    ],
    "shared_session": [
        "LoadedSession",
        "SharedSession",
        "SharedSessionStats",
    ],
    "transcripts": [
        "Transcript",
        "TranscriptFormat",
        "load_transcript",
        "parse_transcript",
    ],
    "cli": [
        "EXIT_FAILURE",
        "EXIT_OK",
        "EXIT_USAGE",
        "build_parser",
        "main",
    ],
}
"""Each layer package's face: ``from ctxbudget.<layer> import <name>``."""

FORMER_FACE = sorted(ctxbudget._MOVED)


def test_the_public_api_is_pinned() -> None:
    assert sorted(ctxbudget.__all__) == EXPECTED


def test_the_top_level_face_holds_at_most_sixty_names() -> None:
    assert len(ctxbudget.__all__) <= 60


@pytest.mark.parametrize("layer", sorted(LAYER_FACES))
def test_each_layer_face_is_pinned(layer: str) -> None:
    assert sorted(importlib.import_module(f"ctxbudget.{layer}").__all__) == LAYER_FACES[layer]


def _documented(where: str, name: str, value: object) -> None:
    if inspect.isclass(value) or inspect.isfunction(value):
        assert (getattr(value, "__doc__", None) or "").strip(), f"{where}.{name} has no docstring"


def test_every_public_name_resolves_and_is_documented() -> None:
    for name in ctxbudget.__all__:
        _documented("ctxbudget", name, getattr(ctxbudget, name))
    for layer, names in LAYER_FACES.items():
        package = importlib.import_module(f"ctxbudget.{layer}")
        for name in names:
            _documented(f"ctxbudget.{layer}", name, getattr(package, name))


def test_a_name_of_the_former_face_still_resolves_with_a_warning_naming_its_package() -> None:
    assert len(FORMER_FACE) > 100
    for name in FORMER_FACE:
        layer = ctxbudget._MOVED[name]
        with pytest.warns(DeprecationWarning, match=f"import it from ctxbudget.{layer}"):
            value = getattr(ctxbudget, name)
        assert value is getattr(importlib.import_module(f"ctxbudget.{layer}"), name)


def test_the_layer_packages_are_attributes_of_a_bare_import() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ctxbudget.archive.ArchiveIndex is importlib.import_module("ctxbudget.archive.search").ArchiveIndex


def test_import_ctxbudget_is_lazy() -> None:
    """``import ctxbudget`` loads no submodule (nor tiktoken or pydantic) until a name is used."""
    code = (
        "import sys, ctxbudget; "
        "loaded = sorted(m for m in sys.modules if m.startswith('ctxbudget.') or m in ('tiktoken', 'pydantic')); "
        "assert not loaded, loaded; "
        "from ctxbudget import ContextSession, Message; "
        "assert ctxbudget.ContextSession is ContextSession and 'ctxbudget.session.session' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("layer", sorted(LAYER_FACES))
def test_a_layer_face_lists_its_names_and_refuses_others(layer: str) -> None:
    package = importlib.import_module(f"ctxbudget.{layer}")
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match=f"ctxbudget.{layer}' has no attribute 'no_such_name'"):
        package.no_such_name  # noqa: B018
