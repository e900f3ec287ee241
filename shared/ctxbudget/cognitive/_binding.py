"""The package binding: the exact generation a session is bound to, its knowledge surface and its limits.

Each type checks its rules when it is built (:func:`validate_binding`, :func:`validate_knowledge`,
:func:`validate_limits`); the same functions re-check an instance however it was built.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, model_validator
from typing_extensions import Self

from ..errors import CognitiveContextError, InvalidBinding, InvalidLimits
from ._shape import check_shape, expect_type
from ._value_rules import (
    MAX_FORMAT_VERSION_BYTES,
    MAX_PACKAGE_VERSION_BYTES,
    digest_problem,
    exact_problem,
    generation_problem,
    package_id_problem,
    plain_problem,
    raise_first,
    recompute_problem,
    show,
    surface_id_problem,
)
from ._wire import WireModel, digest_or
from .digest import canonical_digest
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
)

__all__ = [
    "BindingLimits",
    "KnowledgeBinding",
    "PackageBinding",
    "validate_binding",
    "validate_knowledge",
    "validate_limits",
]


class BindingLimits(WireModel):
    """Prompt-injection limits; each is 1..cap, and the defaults are the caps (4, 6,144 and 6,144)."""

    _wire_error: ClassVar[type[CognitiveContextError]] = InvalidLimits

    max_results: int = Field(default=MAX_RESULTS_CAP, description="Documents per response, 1..4.")
    max_document_bytes: int = Field(default=MAX_DOCUMENT_BYTES_CAP, description="UTF-8 bytes per document.")
    max_total_bytes: int = Field(default=MAX_TOTAL_BYTES_CAP, description="UTF-8 bytes per response.")

    @model_validator(mode="after")
    def _check(self) -> Self:
        validate_limits(self, where="limits")
        return self


class KnowledgeBinding(WireModel):
    """The exact knowledge surface a package binding pins (an A3S Use Knowledge lease)."""

    _wire_error: ClassVar[type[CognitiveContextError]] = InvalidBinding

    schema_id: str = Field(default=KNOWLEDGE_BINDING_SCHEMA, alias="schema")
    surface_id: str = Field(description="The knowledge surface, e.g. 'domain-knowledge'.")
    format_version: str = Field(description="The surface's format version, e.g. '0.2'.")
    content_digest: str = Field(description="Digest of the surface's content.")
    search_schema: str = KNOWLEDGE_SEARCH_SCHEMA
    read_schema: str = KNOWLEDGE_READ_SCHEMA
    citation_schema: str = CITATION_SCHEMA
    lifecycle_generation: int = Field(description="Equal to the package's generation.")
    generation_digest: str = Field(description="Equal to the package's generation digest.")

    @model_validator(mode="after")
    def _check(self) -> Self:
        validate_knowledge(self)
        return self


class PackageBinding(WireModel):
    """The durable identity of one exact cognitive-package generation, with its prompt-injection limits.

    Two bindings are the same binding only if every field is equal, limits included.
    """

    _wire_error: ClassVar[type[CognitiveContextError]] = InvalidBinding

    schema_id: str = Field(default=PACKAGE_BINDING_SCHEMA, alias="schema")
    package_id: str = Field(description="'publisher/name', each part [a-z0-9_-]+.")
    package_version: str = Field(description="The package version, a plain value of at most 128 bytes.")
    lifecycle_generation: int = Field(description="The lifecycle generation, never 0.")
    generation_digest: str = Field(description="Digest of this generation.")
    capability_snapshot_digest: str = Field(description="Canonical digest over the identity, see create().")
    knowledge: KnowledgeBinding
    limits: BindingLimits = Field(default_factory=BindingLimits)

    @model_validator(mode="after")
    def _check(self) -> Self:
        validate_binding(self)
        return self

    @classmethod
    def create(
        cls,
        *,
        package_id: str,
        package_version: str,
        lifecycle_generation: int,
        generation_digest: str,
        surface_id: str,
        format_version: str,
        content_digest: str,
        limits: BindingLimits | None = None,
    ) -> PackageBinding:
        """Build a binding, computing its knowledge binding and capabilitySnapshotDigest.

        Args:
            package_id: ``publisher/name``.
            package_version: the exact package version.
            lifecycle_generation: the lifecycle generation (not 0).
            generation_digest: the generation's digest.
            surface_id: the knowledge surface id.
            format_version: the knowledge format version.
            content_digest: the knowledge content digest.
            limits: prompt-injection limits; ``None`` means the caps.

        Returns:
            The validated binding.

        Raises:
            InvalidBinding: a field breaks a binding rule.
            InvalidLimits: ``limits`` is not a BindingLimits, or is out of range.
        """
        if limits is not None:
            expect_type(limits, BindingLimits, InvalidLimits, "binding.limits")
        knowledge = KnowledgeBinding(
            surface_id=surface_id,
            format_version=format_version,
            content_digest=content_digest,
            lifecycle_generation=lifecycle_generation,
            generation_digest=generation_digest,
        )
        digest = digest_or(
            InvalidBinding,
            "binding.capabilitySnapshotDigest",
            lambda: _capability_digest(package_id, package_version, lifecycle_generation, generation_digest, knowledge),
        )
        return cls(
            package_id=package_id,
            package_version=package_version,
            lifecycle_generation=lifecycle_generation,
            generation_digest=generation_digest,
            capability_snapshot_digest=digest,
            knowledge=knowledge,
            limits=limits if limits is not None else BindingLimits(),
        )

    def with_limits(self, limits: BindingLimits) -> PackageBinding:
        """Return the same generation with other limits (a different binding: resume compares limits too).

        Args:
            limits: the new limits.

        Returns:
            The new binding.

        Raises:
            InvalidLimits: ``limits`` is not a BindingLimits.
        """
        expect_type(limits, BindingLimits, InvalidLimits, "limits")
        return PackageBinding(**{**dict(self), "limits": limits})

    def expected_capability_snapshot_digest(self) -> str:
        """Recompute the capabilitySnapshotDigest from this binding's fields."""
        return _capability_digest(
            self.package_id, self.package_version, self.lifecycle_generation, self.generation_digest, self.knowledge
        )

    def same_generation(self, other: PackageBinding) -> bool:
        """Return whether ``other`` binds the same generation (every field but the limits is equal).

        Args:
            other: another binding.

        Returns:
            ``True`` when only the limits may differ.

        Raises:
            InvalidBinding: ``other`` is not a PackageBinding.
        """
        expect_type(other, PackageBinding, InvalidBinding, "other")
        return self.with_limits(other.limits) == other


def _capability_digest(
    package_id: str, package_version: str, generation: int, generation_digest: str, knowledge: KnowledgeBinding
) -> str:
    values = [
        package_id,
        package_version,
        generation,
        generation_digest,
        knowledge.surface_id,
        knowledge.format_version,
        knowledge.content_digest,
    ]
    return canonical_digest(CAPABILITY_SNAPSHOT_DOMAIN, values)


def validate_limits(limits: BindingLimits, *, where: str = "binding.limits") -> None:
    """Check each limit is 1..cap (caps: 4 results, 6,144 bytes per document, 6,144 bytes in total).

    Args:
        limits: the limits.
        where: the prefix the message names the field with.

    Raises:
        InvalidLimits: ``limits`` is not a BindingLimits, or a limit is zero, negative or above its cap.
    """
    expect_type(limits, BindingLimits, InvalidLimits, where)
    check_shape(limits, InvalidLimits, where)
    for field, value, cap in (
        ("maxResults", limits.max_results, MAX_RESULTS_CAP),
        ("maxDocumentBytes", limits.max_document_bytes, MAX_DOCUMENT_BYTES_CAP),
        ("maxTotalBytes", limits.max_total_bytes, MAX_TOTAL_BYTES_CAP),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= cap:
            raise InvalidLimits(f"{where}.{field}: {show(value)} is out of range, it must be 1..{cap:,}")


def validate_knowledge(knowledge: KnowledgeBinding, *, where: str = "knowledge") -> None:
    """Check a knowledge binding's own fields: schemas, surfaceId, formatVersion, digests, generation.

    Args:
        knowledge: the knowledge binding.
        where: the prefix the message names the field with.

    Raises:
        InvalidBinding: ``knowledge`` is not a KnowledgeBinding, or a rule failed.
    """
    expect_type(knowledge, KnowledgeBinding, InvalidBinding, where)
    check_shape(knowledge, InvalidBinding, where)
    raise_first(
        InvalidBinding,
        where,
        [
            ("schema", exact_problem(knowledge.schema_id, KNOWLEDGE_BINDING_SCHEMA)),
            ("surfaceId", surface_id_problem(knowledge.surface_id)),
            ("formatVersion", plain_problem(knowledge.format_version, MAX_FORMAT_VERSION_BYTES)),
            ("contentDigest", digest_problem(knowledge.content_digest)),
            ("searchSchema", exact_problem(knowledge.search_schema, KNOWLEDGE_SEARCH_SCHEMA)),
            ("readSchema", exact_problem(knowledge.read_schema, KNOWLEDGE_READ_SCHEMA)),
            ("citationSchema", exact_problem(knowledge.citation_schema, CITATION_SCHEMA)),
            ("lifecycleGeneration", generation_problem(knowledge.lifecycle_generation)),
            ("generationDigest", digest_problem(knowledge.generation_digest)),
        ],
    )


def validate_binding(binding: PackageBinding, *, where: str = "binding") -> None:
    """Check every binding rule, in contract order, then the limits.

    Args:
        binding: the package binding.
        where: the prefix the message names the field with.

    Raises:
        InvalidBinding: ``binding`` is not a PackageBinding, a schema, id, version, generation, digest, surface or
            format rule failed, the knowledge binding's generation differs from the package's, or the
            capabilitySnapshotDigest does not recompute.
        InvalidLimits: a limit is out of range.
    """
    expect_type(binding, PackageBinding, InvalidBinding, where)
    check_shape(binding, InvalidBinding, where)
    knowledge = binding.knowledge
    raise_first(
        InvalidBinding,
        where,
        [
            ("schema", exact_problem(binding.schema_id, PACKAGE_BINDING_SCHEMA)),
            ("packageId", package_id_problem(binding.package_id)),
            ("packageVersion", plain_problem(binding.package_version, MAX_PACKAGE_VERSION_BYTES)),
            ("lifecycleGeneration", generation_problem(binding.lifecycle_generation)),
            ("generationDigest", digest_problem(binding.generation_digest)),
            ("capabilitySnapshotDigest", digest_problem(binding.capability_snapshot_digest)),
        ],
    )
    validate_knowledge(knowledge, where=f"{where}.knowledge")
    raise_first(
        InvalidBinding,
        where,
        [
            ("knowledge.lifecycleGeneration", _same(knowledge.lifecycle_generation, binding.lifecycle_generation)),
            ("knowledge.generationDigest", _same(knowledge.generation_digest, binding.generation_digest)),
            (
                "capabilitySnapshotDigest",
                recompute_problem(binding.capability_snapshot_digest, binding.expected_capability_snapshot_digest()),
            ),
        ],
    )
    validate_limits(binding.limits, where=f"{where}.limits")


def _same(value: object, package_value: object) -> str | None:
    if value == package_value:
        return None
    return f"{show(value)} differs from the package's {show(package_value)}"
