"""The wire types of the contract, as frozen pydantic models that round-trip their JSON exactly.

Python attributes are snake_case; the JSON keys are the contract's camelCase, in the contract's order
(``schema`` is ``schema_id`` in Python, since ``BaseModel.schema`` exists). Unknown keys are rejected, and JSON
read with :meth:`from_json` must carry every key. Every model checks its contract rules when it is built, so an
instance you hold is valid on its own; cross-object rules (a response answering *this* request) are checked by
:func:`~ctxbudget.cognitive.validation.validate_response`. pydantic's ``model_construct`` and
``model_copy(update=...)`` skip those checks, so the ``validate_*`` functions trust nothing about an instance: they
re-check every field's presence and type as well as every rule, and a session validates each provider response
that way whatever way it was built.

The ``create`` classmethods compute the digests (capabilitySnapshotDigest, requestDigest, citationDigest,
sourceDigest and byteCount). No constructor, ``create`` or ``from_json`` lets a pydantic ``ValidationError``
escape: shape errors become the model's typed error (:class:`~ctxbudget.errors.InvalidBinding` for bindings,
:class:`~ctxbudget.errors.InvalidLimits` for limits, :class:`~ctxbudget.errors.InvalidRequest` for requests,
:class:`~ctxbudget.errors.ResponseDrift` for citations, documents and responses).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from typing_extensions import Self

from ..errors import CognitiveContextError, InvalidBinding, InvalidLimits, InvalidRequest, ResponseDrift, UsageError
from . import validation
from .digest import canonical_digest, sha256_digest
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
from .validation import expect_type

__all__ = [
    "BindingLimits",
    "Citation",
    "CitedDocument",
    "ContextRequest",
    "ContextResponse",
    "KnowledgeBinding",
    "PackageBinding",
]

# Set while reading wire JSON: every model (nested ones too, which pydantic builds through our ``__init__``, so
# a validation context would not reach them) must then carry exactly its camelCase keys.
_WIRE_MODE: ContextVar[bool] = ContextVar("ctxbudget_cognitive_wire_mode", default=False)


class _WireModel(BaseModel):
    """Shared behaviour: camelCase aliases, strict types, exact JSON round trip, typed errors."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
    )

    _wire_error: ClassVar[type[CognitiveContextError]] = CognitiveContextError

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise self._wire_error(_describe(type(self).__name__, exc)) from None
        except TypeError as exc:  # a nested object with non-string keys cannot even be passed as keywords
            raise self._wire_error(f"{type(self).__name__}: not a JSON object with string keys ({exc})") from None

    @model_validator(mode="before")
    @classmethod
    def _exact_keys_on_the_wire(cls, data: Any) -> Any:
        if _WIRE_MODE.get() and isinstance(data, dict):
            aliases = [str(field.alias) for field in cls.model_fields.values()]
            missing = [alias for alias in aliases if alias not in data]
            unknown = sorted(str(key) for key in data if key not in aliases)
            if unknown:
                raise ValueError(f"unknown key(s) {', '.join(unknown)}")
            if missing:
                raise ValueError(f"missing key(s) {', '.join(missing)}")
        return data

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON object: camelCase keys in contract order, nested types as objects."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> str:
        """Return compact JSON (no spaces, non-ASCII as is) with the keys in contract order."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """Parse JSON written by :meth:`to_json` or by another implementation of the contract.

        Every key must be present, no unknown or duplicate key is allowed, and every rule is checked.

        Args:
            text: the JSON text (``bytes`` must be UTF-8).

        Returns:
            The validated model.

        Raises:
            CognitiveContextError: the model's typed error (see the module docstring) naming what is wrong.
        """
        return cls.from_dict(_parse_json(text, cls._wire_error, cls.__name__))

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """Validate an already-parsed JSON object (e.g. from a session snapshot) like :meth:`from_json`.

        Args:
            data: the JSON object, with camelCase keys.

        Returns:
            The validated model.

        Raises:
            CognitiveContextError: the model's typed error naming what is wrong.
        """
        token = _WIRE_MODE.set(True)
        try:
            return cls.model_validate(data, strict=True)
        except ValidationError as exc:
            raise cls._wire_error(_describe(cls.__name__, exc)) from None
        except TypeError as exc:  # a (nested) object with non-string keys
            raise cls._wire_error(f"{cls.__name__}: not a JSON object with string keys ({exc})") from None
        except CognitiveContextError as exc:
            if cls._wire_error is ResponseDrift and not isinstance(exc, ResponseDrift):
                raise ResponseDrift(f"{cls.__name__} carries an invalid binding: {exc}") from None
            raise
        finally:
            _WIRE_MODE.reset(token)


class BindingLimits(_WireModel):
    """Prompt-injection limits; each is 1..cap, and the defaults are the caps (4, 6,144 and 6,144)."""

    _wire_error: ClassVar[type[CognitiveContextError]] = InvalidLimits

    max_results: int = Field(default=MAX_RESULTS_CAP, description="Documents per response, 1..4.")
    max_document_bytes: int = Field(default=MAX_DOCUMENT_BYTES_CAP, description="UTF-8 bytes per document.")
    max_total_bytes: int = Field(default=MAX_TOTAL_BYTES_CAP, description="UTF-8 bytes per response.")

    @model_validator(mode="after")
    def _check(self) -> Self:
        validation.validate_limits(self, where="limits")
        return self


class KnowledgeBinding(_WireModel):
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
        validation.validate_knowledge(self)
        return self


class PackageBinding(_WireModel):
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
        validation.validate_binding(self)
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
        digest = _digest_or(
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


class ContextRequest(_WireModel):
    """One typed request to the provider; it repeats the whole binding and is digest-pinned."""

    _wire_error: ClassVar[type[CognitiveContextError]] = InvalidRequest

    schema_id: str = Field(default=REQUEST_SCHEMA, alias="schema")
    session_id: str = Field(description="The session, following the surfaceId rule.")
    query: str = Field(description="Trimmed, non-empty, <= 4096 bytes, no control characters but \\n and \\t.")
    binding: PackageBinding
    request_digest: str

    @model_validator(mode="after")
    def _check(self) -> Self:
        validation.validate_request(self)
        return self

    @classmethod
    def create(cls, session_id: str, query: str, binding: PackageBinding) -> ContextRequest:
        """Build a request, computing its requestDigest.

        Args:
            session_id: the session id.
            query: the query, already trimmed.
            binding: the binding the request is made under.

        Returns:
            The validated request.

        Raises:
            InvalidRequest: the session id or the query breaks its rule, or ``binding`` is not a PackageBinding.
        """
        expect_type(binding, PackageBinding, InvalidRequest, "request.binding")
        for field, problem in (
            ("sessionId", validation.surface_id_problem(session_id)),
            ("query", validation.query_problem(query)),
        ):
            if problem is not None:
                raise InvalidRequest(f"request.{field}: {problem}")
        digest = canonical_digest(REQUEST_SCHEMA, [REQUEST_SCHEMA, session_id, query, binding])
        return cls(session_id=session_id, query=query, binding=binding, request_digest=digest)

    def expected_request_digest(self) -> str:
        """Recompute the requestDigest from this request's fields."""
        return canonical_digest(REQUEST_SCHEMA, [self.schema_id, self.session_id, self.query, self.binding])


class Citation(_WireModel):
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
        validation.validate_citation(self)
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
        digest = _digest_or(
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


class CitedDocument(_WireModel):
    """A document's Markdown content with its citation, byte count and source digest."""

    _wire_error: ClassVar[type[CognitiveContextError]] = ResponseDrift

    citation: Citation
    source_digest: str = Field(description="sha256 of the content's UTF-8 bytes, no domain.")
    content: str = Field(description="The Markdown content, non-empty.")
    byte_count: int = Field(description="The content's UTF-8 size.")

    @model_validator(mode="after")
    def _check(self) -> Self:
        validation.validate_document(self)
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


class ContextResponse(_WireModel):
    """The provider's answer: the request's digest and binding, 1..maxResults cited documents."""

    _wire_error: ClassVar[type[CognitiveContextError]] = ResponseDrift

    schema_id: str = Field(default=RESPONSE_SCHEMA, alias="schema")
    request_digest: str
    binding: PackageBinding
    documents: tuple[CitedDocument, ...]
    truncated: bool = Field(default=False, description="Whether the provider cut or dropped content for limits.")

    @field_validator("documents", mode="before")
    @classmethod
    def _array_to_tuple(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    @model_validator(mode="after")
    def _check(self) -> Self:
        validation.validate_response(self)
        return self

    @classmethod
    def create(
        cls, request: ContextRequest, documents: Iterable[CitedDocument], *, truncated: bool = False
    ) -> ContextResponse:
        """Build the response to ``request``, repeating its digest and binding.

        Args:
            request: the request answered.
            documents: the cited documents, best first.
            truncated: whether content was cut or dropped to respect the limits.

        Returns:
            The validated response.

        Raises:
            ResponseDrift: a response rule failed (e.g. no documents, too many, over a byte limit), ``request`` is
                not a ContextRequest, or ``documents`` is not an iterable.
        """
        expect_type(request, ContextRequest, ResponseDrift, "response.request")
        if isinstance(documents, (str, bytes, Mapping)) or not isinstance(documents, Iterable):
            raise ResponseDrift(
                f"response.documents: must be an iterable of CitedDocument, got {type(documents).__name__}"
            )
        return cls(
            request_digest=request.request_digest,
            binding=request.binding,
            documents=tuple(documents),
            truncated=truncated,
        )


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


def _digest_or(error: type[CognitiveContextError], where: str, compute: Any) -> str:
    try:
        digest: str = compute()
    except UsageError as exc:
        raise error(f"{where}: {exc}") from None
    return digest


def _describe(model: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False)[:3]:
        location = ".".join(str(part) for part in error["loc"]) or "(object)"
        problems.append(f"{location}: {error['msg']}")
    more = exc.error_count() - len(problems)
    suffix = f" (and {more} more)" if more > 0 else ""
    return f"{model} does not match the contract: {'; '.join(problems)}{suffix}"


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(text: str | bytes, error: type[CognitiveContextError], model: str) -> Mapping[str, Any]:
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise error(f"{model} JSON is not valid UTF-8") from None
    if not isinstance(text, str):
        raise error(f"{model} JSON must be str or bytes, got {type(text).__name__}")
    try:
        data = json.loads(text, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise error(f"{model} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise error(f"{model} JSON must be an object, got {type(data).__name__}")
    return data
