"""Exact cognitive package bindings: digest-pinned knowledge that fails closed.

Wire-compatible with the A3S Code v1 contract: a host binds a session to one exact cognitive-package generation
(:class:`PackageBinding`) and injects a provider holding its lease; each turn's typed, digest-pinned
:class:`ContextRequest` is answered by a :class:`ContextResponse` of cited Markdown documents, which is validated
before any of it enters the context. Every failure raises a
:class:`~ctxbudget.errors.CognitiveContextError`; nothing falls back to other retrieval::

    from ctxbudget.cognitive import CognitiveContextSession, FolderKnowledgeProvider, example_package_path

    provider = FolderKnowledgeProvider(example_package_path())
    session = CognitiveContextSession(provider.binding(), provider, timeout=5.0)
    items = session.retrieve("how does compaction work?", session_id="demo-1")

Modules: :mod:`.schemas` (exact strings and caps), :mod:`.digest`, :mod:`.models` (wire types),
:mod:`.validation` (every rule), :mod:`.provider` (the seam), :mod:`.session`, :mod:`.rendering`, :mod:`.rules`
(exclusivity and resume), :mod:`.folder` (a reference provider over Markdown files).
"""

from __future__ import annotations

from .digest import canonical_digest, canonical_json, sha256_digest
from .folder import FolderKnowledgeProvider, PackageManifest, example_package_path
from .models import (
    BindingLimits,
    Citation,
    CitedDocument,
    ContextRequest,
    ContextResponse,
    KnowledgeBinding,
    PackageBinding,
)
from .provider import AsyncKnowledgeProvider, KnowledgeProvider
from .rendering import citation_marker, relevance_at, render_document, render_response
from .rules import PROVIDER_KINDS, ProviderKind, check_providers, check_resume, provider_kind
from .schemas import (
    CAPABILITY_SNAPSHOT_DOMAIN,
    CITATION_SCHEMA,
    KNOWLEDGE_BINDING_SCHEMA,
    KNOWLEDGE_READ_SCHEMA,
    KNOWLEDGE_SEARCH_SCHEMA,
    MAX_DOCUMENT_BYTES_CAP,
    MAX_RESULTS_CAP,
    MAX_TOTAL_BYTES_CAP,
    PACKAGE_BINDING_SCHEMA,
    REQUEST_SCHEMA,
    RESPONSE_SCHEMA,
)
from .session import COGNITIVE_CONTEXT_BOUND, CognitiveContextSession, EventCallback
from .validation import (
    validate_binding,
    validate_citation,
    validate_document,
    validate_knowledge,
    validate_limits,
    validate_provider_name,
    validate_request,
    validate_response,
)

__all__ = [
    "CAPABILITY_SNAPSHOT_DOMAIN",
    "CITATION_SCHEMA",
    "COGNITIVE_CONTEXT_BOUND",
    "KNOWLEDGE_BINDING_SCHEMA",
    "KNOWLEDGE_READ_SCHEMA",
    "KNOWLEDGE_SEARCH_SCHEMA",
    "MAX_DOCUMENT_BYTES_CAP",
    "MAX_RESULTS_CAP",
    "MAX_TOTAL_BYTES_CAP",
    "PACKAGE_BINDING_SCHEMA",
    "PROVIDER_KINDS",
    "REQUEST_SCHEMA",
    "RESPONSE_SCHEMA",
    "AsyncKnowledgeProvider",
    "BindingLimits",
    "Citation",
    "CitedDocument",
    "CognitiveContextSession",
    "ContextRequest",
    "ContextResponse",
    "EventCallback",
    "FolderKnowledgeProvider",
    "KnowledgeBinding",
    "KnowledgeProvider",
    "PackageBinding",
    "PackageManifest",
    "ProviderKind",
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
]
