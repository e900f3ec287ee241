"""The exact schema strings, digest domains and limit caps of the A3S Code v1 cognitive-binding contract.

Every string here is part of the wire format: a binding, request or response whose ``schema`` differs by one
character is rejected.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CAPABILITY_SNAPSHOT_DOMAIN",
    "CITATION_SCHEMA",
    "KNOWLEDGE_BINDING_SCHEMA",
    "KNOWLEDGE_READ_SCHEMA",
    "KNOWLEDGE_SEARCH_SCHEMA",
    "MAX_DOCUMENT_BYTES_CAP",
    "MAX_RESULTS_CAP",
    "MAX_TOTAL_BYTES_CAP",
    "PACKAGE_BINDING_SCHEMA",
    "REQUEST_SCHEMA",
    "RESPONSE_SCHEMA",
]

PACKAGE_BINDING_SCHEMA: Final = "a3s.code.cognitive-package-session-binding.v1"
"""Schema of a :class:`~ctxbudget.cognitive.PackageBinding`."""

KNOWLEDGE_BINDING_SCHEMA: Final = "agentic.ontology.r0-knowledge-lease-binding.v1"
"""Schema of a :class:`~ctxbudget.cognitive.KnowledgeBinding`."""

REQUEST_SCHEMA: Final = "a3s.code.cognitive-context-request.v1"
"""Schema of a :class:`~ctxbudget.cognitive.ContextRequest`; also the domain of its ``requestDigest``."""

RESPONSE_SCHEMA: Final = "a3s.code.cognitive-context-response.v1"
"""Schema of a :class:`~ctxbudget.cognitive.ContextResponse`."""

KNOWLEDGE_SEARCH_SCHEMA: Final = "a3s.use.okf-knowledge-search-request.v1"
"""The knowledge surface's search-request schema, pinned in the knowledge binding."""

KNOWLEDGE_READ_SCHEMA: Final = "a3s.use.okf-knowledge-read-request.v1"
"""The knowledge surface's read-request schema, pinned in the knowledge binding."""

CITATION_SCHEMA: Final = "a3s.use.okf-knowledge-citation.v1"
"""Schema of a :class:`~ctxbudget.cognitive.Citation`; also the domain of its ``citationDigest``."""

CAPABILITY_SNAPSHOT_DOMAIN: Final = "a3s.use.capability-snapshot.v1"
"""Digest domain of a package binding's ``capabilitySnapshotDigest``."""

MAX_RESULTS_CAP: Final = 4
"""Hard cap on documents per response; also the default ``maxResults``."""

MAX_DOCUMENT_BYTES_CAP: Final = 6144
"""Hard cap on one document's UTF-8 bytes; also the default ``maxDocumentBytes``."""

MAX_TOTAL_BYTES_CAP: Final = 6144
"""Hard cap on a response's total UTF-8 content bytes; also the default ``maxTotalBytes``."""
