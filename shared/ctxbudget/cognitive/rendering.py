"""Rendering validated cited documents into the planner's :class:`~ctxbudget.context.items.ContextItem`.

Each document becomes one item whose content is the citation marker, a blank line, then the document::

    [cognitive citation=<citationDigest> document=<path> heading=<heading>]

    <content>

with source ``a3s-use://citation/<hex>``, trust ``retrieved`` (data, never instructions), type ``cognitive``,
relevance ``max(0.9, 1 - 0.02 * position)`` (position 0 is the provider's best document) and the citation digest
as dedupe key.
"""

from __future__ import annotations

from ..context.items import ContextItem
from ..errors import ResponseDrift, UsageError
from .models import Citation, CitedDocument, ContextResponse
from .validation import expect_type

__all__ = ["CITATION_SOURCE_PREFIX", "citation_marker", "relevance_at", "render_document", "render_response"]

CITATION_SOURCE_PREFIX = "a3s-use://citation/"
"""The source of a rendered document is this prefix + the citation digest's hex."""


def citation_marker(citation: Citation) -> str:
    """Return the marker line that opens a rendered document.

    Args:
        citation: the document's citation.

    Returns:
        ``[cognitive citation=<citationDigest> document=<path> heading=<heading>]``.

    Raises:
        ResponseDrift: ``citation`` is not a Citation.
    """
    expect_type(citation, Citation, ResponseDrift, "citation")
    return (
        f"[cognitive citation={citation.citation_digest} document={citation.document_path} heading={citation.heading}]"
    )


def relevance_at(position: int) -> float:
    """Return the relevance of the document at 0-based ``position``: ``max(0.9, 1 - 0.02 * position)``.

    Args:
        position: 0 for the provider's first document.

    Returns:
        A relevance in 0.9..1.0.

    Raises:
        UsageError: ``position`` is not a non-negative integer.
    """
    if isinstance(position, bool) or not isinstance(position, int) or position < 0:
        raise UsageError(f"position: must be an integer >= 0, got {position!r}", field="position")
    return 0.9 if position >= 5 else max(0.9, 1.0 - 0.02 * position)  # no float conversion of a huge int


def render_document(document: CitedDocument, position: int, *, truncated: bool = False) -> ContextItem:
    """Render one validated document as a context item.

    Args:
        document: the document (validate the response first).
        position: its 0-based position in the response.
        truncated: the response's ``truncated`` flag, copied to the metadata.

    Returns:
        The context item.

    Raises:
        ResponseDrift: ``document`` is not a CitedDocument.
        UsageError: ``position`` is not a non-negative integer.
    """
    expect_type(document, CitedDocument, ResponseDrift, "document")
    relevance = relevance_at(position)
    citation = document.citation
    return ContextItem(
        id=f"cognitive:{citation.citation_digest}",
        source=CITATION_SOURCE_PREFIX + citation.digest_hex,
        type="cognitive",
        content=f"{citation_marker(citation)}\n\n{document.content}",
        trust="retrieved",
        relevance=relevance,
        source_key=citation.citation_digest,
        metadata={
            "citation": citation.to_dict(),
            "sourceDigest": document.source_digest,
            "byteCount": document.byte_count,
            "position": position,
            "truncated": truncated,
        },
    )


def render_response(response: ContextResponse) -> list[ContextItem]:
    """Render every document of a validated response, in the provider's order.

    Args:
        response: the response (validate it against its request first).

    Returns:
        One context item per document.

    Raises:
        ResponseDrift: ``response`` is not a ContextResponse.
    """
    expect_type(response, ContextResponse, ResponseDrift, "response")
    return [
        render_document(document, position, truncated=response.truncated)
        for position, document in enumerate(response.documents)
    ]
