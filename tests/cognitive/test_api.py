"""The public surface of ctxbudget.cognitive is pinned."""

from __future__ import annotations

import importlib

from ctxbudget import cognitive

MODULES = ["digest", "folder", "models", "provider", "rendering", "rules", "schemas", "session", "validation"]


def test_public_names_are_pinned() -> None:
    assert sorted(cognitive.__all__) == sorted(
        [
            "CAPABILITY_SNAPSHOT_DOMAIN", "CITATION_SCHEMA", "COGNITIVE_CONTEXT_BOUND", "KNOWLEDGE_BINDING_SCHEMA",
            "KNOWLEDGE_READ_SCHEMA", "KNOWLEDGE_SEARCH_SCHEMA", "MAX_DOCUMENT_BYTES_CAP", "MAX_RESULTS_CAP",
            "MAX_TOTAL_BYTES_CAP", "PACKAGE_BINDING_SCHEMA", "PROVIDER_KINDS", "REQUEST_SCHEMA", "RESPONSE_SCHEMA",
            "AsyncKnowledgeProvider", "BindingLimits", "Citation", "CitedDocument", "CognitiveContextSession",
            "ContextRequest", "ContextResponse", "EventCallback", "FolderKnowledgeProvider", "KnowledgeBinding",
            "KnowledgeProvider", "PackageBinding", "PackageManifest", "ProviderKind", "canonical_digest",
            "canonical_json", "check_providers", "check_resume", "citation_marker", "example_package_path",
            "provider_kind", "relevance_at", "render_document", "render_response", "sha256_digest",
            "validate_binding", "validate_citation", "validate_document", "validate_knowledge", "validate_limits",
            "validate_provider_name", "validate_request", "validate_response",
        ]
    )  # fmt: skip
    for name in cognitive.__all__:
        assert hasattr(cognitive, name), name


def test_every_module_declares_all() -> None:
    for name in MODULES:
        module = importlib.import_module(f"ctxbudget.cognitive.{name}")
        assert all(hasattr(module, item) for item in module.__all__), name


def test_schema_strings_are_exact() -> None:
    assert cognitive.PACKAGE_BINDING_SCHEMA == "a3s.code.cognitive-package-session-binding.v1"
    assert cognitive.KNOWLEDGE_BINDING_SCHEMA == "agentic.ontology.r0-knowledge-lease-binding.v1"
    assert cognitive.REQUEST_SCHEMA == "a3s.code.cognitive-context-request.v1"
    assert cognitive.RESPONSE_SCHEMA == "a3s.code.cognitive-context-response.v1"
    assert cognitive.KNOWLEDGE_SEARCH_SCHEMA == "a3s.use.okf-knowledge-search-request.v1"
    assert cognitive.KNOWLEDGE_READ_SCHEMA == "a3s.use.okf-knowledge-read-request.v1"
    assert cognitive.CITATION_SCHEMA == "a3s.use.okf-knowledge-citation.v1"
    assert cognitive.CAPABILITY_SNAPSHOT_DOMAIN == "a3s.use.capability-snapshot.v1"
    assert (cognitive.MAX_RESULTS_CAP, cognitive.MAX_DOCUMENT_BYTES_CAP, cognitive.MAX_TOTAL_BYTES_CAP) == (
        4,
        6144,
        6144,
    )
