"""Citations and cited documents: where each answer came from, pinned to the binding's generation by digest."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator
from typing_extensions import Self

from ..errors import CognitiveContextError, ResponseDrift
from ._binding import PackageBinding
from ._shape import check_shape, expect_type
from ._value_rules import (
    MAX_HEADING_BYTES,
    MAX_PACKAGE_VERSION_BYTES,
    digest_problem,
    document_path_problem,
    evidence_ids_problem,
    exact_problem,
    generation_problem,
    package_id_problem,
    plain_problem,
    raise_first,
    recompute_problem,
    show,
    surface_id_problem,
    utf8_size,
)
from ._wire import WireModel, digest_or
from .digest import canonical_digest, sha256_digest
from .schemas import CITATION_SCHEMA

__all__ = ["Citation", "CitedDocument", "validate_citation", "validate_document"]


class Citation(WireModel):
    """Where a document came from: the exact generation, path, heading and evidence, digest-pinned."""

    _wire_error: ClassVar[type[CognitiveContextError]] = ResponseDrift

    schema_id: str = Field(default=CITATION_SCHEMA, alias="schema")
    package_id: str
    package_version: str
    lifecycle_generation: int
    generation_digest: str
    surface_id: str
    content_digest: str
    document_path: str = Field(description="Relative '/'-separated path ending '.md'.")
    heading: str = Field(description="The section heading, a plain value of at most 128 bytes.")
    evidence_ids: tuple[str, ...] = Field(description="1..256 sha256 digests, strictly ascending.")
    citation_digest: str

    @field_validator("evidence_ids", mode="before")
    @classmethod
    def _array_to_tuple(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    @model_validator(mode="after")
    def _check(self) -> Self:
        validate_citation(self)
        return self

    @classmethod
    def create(
        cls, binding: PackageBinding, *, document_path: str, heading: str, evidence_ids: Iterable[str]
    ) -> Citation:
        """Build a citation of ``binding``'s generation, computing its citationDigest.

        Args:
            binding: the binding the citation belongs to (its identity fields are copied).
            document_path: the document's relative path.
            heading: the section heading.
            evidence_ids: the evidence digests; they are sorted here, duplicates are still rejected.

        Returns:
            The validated citation.

        Raises:
            ResponseDrift: a field breaks a citation rule, ``binding`` is not a PackageBinding, or ``evidence_ids``
                is not an iterable of strings.
        """
        expect_type(binding, PackageBinding, ResponseDrift, "citation.binding")
        fields: dict[str, Any] = {
            "package_id": binding.package_id,
            "package_version": binding.package_version,
            "lifecycle_generation": binding.lifecycle_generation,
            "generation_digest": binding.generation_digest,
            "surface_id": binding.knowledge.surface_id,
            "content_digest": binding.knowledge.content_digest,
            "document_path": document_path,
            "heading": heading,
            "evidence_ids": tuple(sorted(_evidence_list(evidence_ids))),
        }
        digest = digest_or(
            ResponseDrift,
            "citation.citationDigest",
            lambda: canonical_digest(CITATION_SCHEMA, [*fields.values()]),
        )
        return cls(**fields, citation_digest=digest)

    def expected_citation_digest(self) -> str:
        """Recompute the citationDigest from this citation's fields."""
        values = [
            self.package_id,
            self.package_version,
            self.lifecycle_generation,
            self.generation_digest,
            self.surface_id,
            self.content_digest,
            self.document_path,
            self.heading,
            list(self.evidence_ids),
        ]
        return canonical_digest(self.schema_id, values)

    @property
    def digest_hex(self) -> str:
        """The citationDigest without its ``sha256:`` prefix."""
        return self.citation_digest.removeprefix("sha256:")


class CitedDocument(WireModel):
    """A document's Markdown content with its citation, byte count and source digest."""

    _wire_error: ClassVar[type[CognitiveContextError]] = ResponseDrift

    citation: Citation
    source_digest: str = Field(description="sha256 of the content's UTF-8 bytes, no domain.")
    content: str = Field(description="The Markdown content, non-empty.")
    byte_count: int = Field(description="The content's UTF-8 size.")

    @model_validator(mode="after")
    def _check(self) -> Self:
        validate_document(self)
        return self

    @classmethod
    def create(cls, citation: Citation, content: str) -> CitedDocument:
        """Build a document, computing its sourceDigest and byteCount.

        Args:
            citation: the document's citation.
            content: the Markdown content (non-empty).

        Returns:
            The validated document.

        Raises:
            ResponseDrift: the content is empty or not valid UTF-8, or ``citation`` is not a Citation.
        """
        expect_type(citation, Citation, ResponseDrift, "document.citation")
        try:
            data = content.encode("utf-8")
        except (UnicodeEncodeError, AttributeError):
            raise ResponseDrift("document.content: must be a non-empty UTF-8 string") from None
        return cls(citation=citation, source_digest=sha256_digest(data), content=content, byte_count=len(data))

    def expected_source_digest(self) -> str:
        """Recompute the sourceDigest from this document's content."""
        return sha256_digest(self.content.encode("utf-8"))


def _evidence_list(evidence_ids: Any) -> list[str]:
    """The evidence ids as a list of strings, ready to sort; anything else is drift naming the field."""
    if isinstance(evidence_ids, (str, bytes, Mapping)) or not isinstance(evidence_ids, Iterable):
        raise ResponseDrift(
            f"citation.evidenceIds: must be an iterable of digest strings, got {type(evidence_ids).__name__}"
        )
    ids = list(evidence_ids)
    for index, item in enumerate(ids):
        if not isinstance(item, str):
            raise ResponseDrift(f"citation.evidenceIds: [{index}] must be a string, got {type(item).__name__}")
    return ids


def validate_citation(citation: Citation, binding: PackageBinding | None = None, *, where: str = "citation") -> None:
    """Check a citation's own rules and, given the binding, that its identity fields are the binding's.

    Args:
        citation: the citation.
        binding: the binding it must belong to; ``None`` checks the citation on its own.
        where: the prefix the message names the field with.

    Raises:
        ResponseDrift: ``citation`` is not a Citation (or ``binding`` not a PackageBinding), a field rule failed, an
            identity field differs from the binding (a different generation is reported as generation drift), or
            the citationDigest does not recompute (the citation was substituted).
    """
    expect_type(citation, Citation, ResponseDrift, where)
    check_shape(citation, ResponseDrift, where)
    if binding is not None:
        expect_type(binding, PackageBinding, ResponseDrift, "binding")
    raise_first(
        ResponseDrift,
        where,
        [
            ("schema", exact_problem(citation.schema_id, CITATION_SCHEMA)),
            ("packageId", package_id_problem(citation.package_id)),
            ("packageVersion", plain_problem(citation.package_version, MAX_PACKAGE_VERSION_BYTES)),
            ("lifecycleGeneration", generation_problem(citation.lifecycle_generation)),
            ("generationDigest", digest_problem(citation.generation_digest)),
            ("surfaceId", surface_id_problem(citation.surface_id)),
            ("contentDigest", digest_problem(citation.content_digest)),
            ("documentPath", document_path_problem(citation.document_path)),
            ("heading", plain_problem(citation.heading, MAX_HEADING_BYTES)),
            ("evidenceIds", evidence_ids_problem(citation.evidence_ids)),
            ("citationDigest", digest_problem(citation.citation_digest)),
        ],
    )
    if binding is not None:
        raise_first(ResponseDrift, where, _identity_checks(citation, binding))
    substituted = " (the citation was substituted)"
    raise_first(
        ResponseDrift,
        where,
        [
            (
                "citationDigest",
                recompute_problem(citation.citation_digest, citation.expected_citation_digest(), substituted),
            )
        ],
    )


def _identity_checks(citation: Citation, binding: PackageBinding) -> list[tuple[str, str | None]]:
    def differs(value: object, expected: object, note: str = "") -> str | None:
        return None if value == expected else f"{show(value)} is not the binding's {show(expected)}{note}"

    drift = " (generation drift)"
    return [
        ("schema", differs(citation.schema_id, binding.knowledge.citation_schema)),
        ("packageId", differs(citation.package_id, binding.package_id)),
        ("packageVersion", differs(citation.package_version, binding.package_version)),
        ("lifecycleGeneration", differs(citation.lifecycle_generation, binding.lifecycle_generation, drift)),
        ("generationDigest", differs(citation.generation_digest, binding.generation_digest, drift)),
        ("surfaceId", differs(citation.surface_id, binding.knowledge.surface_id)),
        ("contentDigest", differs(citation.content_digest, binding.knowledge.content_digest, drift)),
    ]


def validate_document(
    document: CitedDocument, binding: PackageBinding | None = None, *, where: str = "document"
) -> None:
    """Check a cited document: its citation, non-empty content, byteCount, sourceDigest and the per-document limit.

    Args:
        document: the document.
        binding: the binding it must belong to (its citation identity and ``maxDocumentBytes``); ``None`` checks
            the document on its own.
        where: the prefix the message names the field with.

    Raises:
        ResponseDrift: ``document`` is not a CitedDocument (or ``binding`` not a PackageBinding), or any rule failed.
    """
    expect_type(document, CitedDocument, ResponseDrift, where)
    check_shape(document, ResponseDrift, where)
    if binding is not None:
        expect_type(binding, PackageBinding, ResponseDrift, "binding")
    validate_citation(document.citation, binding, where=f"{where}.citation")
    content = document.content
    size = utf8_size(content) if isinstance(content, str) else None
    if not content or size is None:
        raise ResponseDrift(f"{where}.content: must be a non-empty UTF-8 string")
    checks: list[tuple[str, str | None]] = [
        ("byteCount", None if document.byte_count == size else f"{document.byte_count} is not the {size} bytes"),
        ("sourceDigest", recompute_problem(document.source_digest, document.expected_source_digest())),
    ]
    if binding is not None and size > binding.limits.max_document_bytes:
        limit = binding.limits.max_document_bytes
        checks.append(("byteCount", f"{size:,} bytes is over the binding's maxDocumentBytes {limit:,}"))
    raise_first(ResponseDrift, where, checks)
