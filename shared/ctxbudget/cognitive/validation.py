"""Every validation rule of the contract, each raising its typed error with the rule and the field named.

Rules are small functions that return a problem description (or ``None``); the ``validate_*`` functions apply them
to a model and raise with a message of the form ``"<where>.<field>: <problem>"``, for example
``"documents[0].citation.documentPath: segment '..' is not allowed"``. Which error each object raises:

- a binding: :class:`~ctxbudget.errors.InvalidBinding`; its limits: :class:`~ctxbudget.errors.InvalidLimits`;
- a request: :class:`~ctxbudget.errors.InvalidRequest` (its binding still raises ``InvalidBinding``);
- a citation, a document or a response: :class:`~ctxbudget.errors.ResponseDrift`. A malformed citation fails
  closed as drift: the provider answered, but not with what the binding and the request pinned;
- a provider name: :class:`~ctxbudget.errors.ProviderFailure` (the provider cannot be used at all).

Every ``validate_*`` function first checks the object's shape: each field is present and of its declared type
(``int`` never a ``bool`` or ``float``, ``bool`` never an ``int``, a tuple where the model holds a tuple). A model
built with pydantic's ``model_construct`` or ``model_copy(update=...)`` skips pydantic's checks, so nothing about an
instance is trusted: a provider's response is validated field by field however it was built.

One rule is stricter than the contract's list: a ``documentPath`` may not hold control characters either, since
the path is rendered into the citation marker line and a newline there could forge a second marker.
"""

from __future__ import annotations

import re
import typing
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from ..errors import InvalidBinding, InvalidLimits, InvalidRequest, ProviderFailure, ResponseDrift
from .schemas import (
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

if TYPE_CHECKING:
    from .models import (
        BindingLimits,
        Citation,
        CitedDocument,
        ContextRequest,
        ContextResponse,
        KnowledgeBinding,
        PackageBinding,
    )

__all__ = [
    "MAX_DOCUMENT_PATH_BYTES",
    "MAX_EVIDENCE_IDS",
    "MAX_FORMAT_VERSION_BYTES",
    "MAX_HEADING_BYTES",
    "MAX_PACKAGE_VERSION_BYTES",
    "MAX_PROVIDER_NAME_BYTES",
    "MAX_QUERY_BYTES",
    "MAX_SURFACE_ID_BYTES",
    "check_shape",
    "digest_problem",
    "document_path_problem",
    "evidence_ids_problem",
    "expect_type",
    "generation_problem",
    "package_id_problem",
    "plain_problem",
    "query_problem",
    "surface_id_problem",
    "validate_binding",
    "validate_citation",
    "validate_document",
    "validate_knowledge",
    "validate_limits",
    "validate_provider_name",
    "validate_request",
    "validate_response",
]

MAX_PACKAGE_VERSION_BYTES = 128
MAX_FORMAT_VERSION_BYTES = 64
MAX_SURFACE_ID_BYTES = 256
MAX_QUERY_BYTES = 4096
MAX_DOCUMENT_PATH_BYTES = 512
MAX_HEADING_BYTES = 128
MAX_EVIDENCE_IDS = 256
MAX_PROVIDER_NAME_BYTES = 128
_U64_MAX = 2**64 - 1

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_PACKAGE_PART = re.compile(r"[a-z0-9_-]+")
_SURFACE_REST = re.compile(r"[A-Za-z0-9\-._:/@]*")
_DRIVE = re.compile(r"[A-Za-z]:")


_T = TypeVar("_T")


def expect_type(value: Any, expected: type[_T], error: type[Exception], where: str) -> _T:
    """Return ``value`` when it is an ``expected``; else raise ``error`` naming the argument and the type received.

    Every public entry point of the cognitive API checks its arguments with this, so a wrong argument (``None``,
    a dict, a string) raises the entry point's typed error instead of a raw ``TypeError`` or ``AttributeError``.

    Args:
        value: the argument.
        expected: the type it must be.
        error: the typed error to raise.
        where: the argument's name in the message, e.g. ``"citation.binding"``.

    Returns:
        ``value``, narrowed to ``expected``.
    """
    if not isinstance(value, expected):
        raise error(f"{where}: must be a {expected.__name__}, got {type(value).__name__}")
    return value


def _type_problem(value: object, annotation: Any) -> str | None:
    """What is wrong with ``value`` as a value of the field type ``annotation`` (a class or ``tuple[X, ...]``)."""
    if typing.get_origin(annotation) is tuple:
        if not isinstance(value, tuple):
            return f"must be a tuple, got {type(value).__name__}"
        item_type = typing.get_args(annotation)[0]
        for index, item in enumerate(value):
            problem = _type_problem(item, item_type)
            if problem is not None:
                return f"[{index}] {problem}"
        return None
    if isinstance(value, annotation) and not (annotation is int and isinstance(value, bool)):
        return None
    name = annotation.__name__
    article = "an" if name[0].lower() in "aeiou" else "a"
    return f"must be {article} {name}, got {type(value).__name__}"


def check_shape(model: BaseModel, error: type[Exception], where: str) -> None:
    """Check every field of ``model`` is present and of its declared type, whatever way the model was built.

    ``model_construct`` and ``model_copy(update=...)`` skip pydantic's validation, so a field may be missing or
    hold anything; the rules that follow would then pass a ``float`` byte count or a ``"no"`` flag.

    Args:
        model: the model instance.
        error: the typed error to raise.
        where: the prefix the message names the field with (the field is named by its JSON key).

    Raises:
        Exception: ``error``, naming the first field that is missing or of the wrong type.
    """
    values = model.__dict__
    for name, field in type(model).model_fields.items():
        label = f"{where}.{field.alias or name}"
        if name not in values:
            raise error(f"{label}: is missing")
        problem = _type_problem(values[name], field.annotation)
        if problem is not None:
            raise error(f"{label}: {problem}")


def _models() -> Any:
    """The models module, imported when first needed (it imports this module)."""
    from . import models  # noqa: PLC0415 - models imports validation; a top-level import would be circular

    return models


# --- rules on plain values: each returns what is wrong, or None ---------------------------------------------------


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _utf8_size(value: str) -> int | None:
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return None


def _control_char(value: str, allowed: str = "") -> str | None:
    for char in value:
        if char not in allowed and unicodedata.category(char) == "Cc":
            return char
    return None


def _text_problem(value: object, max_bytes: int, *, allowed_controls: str = "") -> str | None:  # noqa: PLR0911 - one early return per rule, in contract order
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    size = _utf8_size(value)
    if size is None:
        return "is not valid UTF-8 (it holds a lone surrogate)"
    if not value.strip():
        return "must not be empty or blank"
    if value != value.strip():
        return f"{_show(value)} must be trimmed (no leading or trailing whitespace)"
    control = _control_char(value, allowed_controls)
    if control is not None:
        return f"control character U+{ord(control):04X} is not allowed"
    if size > max_bytes:
        return f"is {size:,} bytes, the limit is {max_bytes:,}"
    return None


def plain_problem(value: object, max_bytes: int) -> str | None:
    """Check the "plain value" rule: a non-empty, trimmed string without control characters, <= ``max_bytes``.

    Args:
        value: the value to check.
        max_bytes: the largest allowed UTF-8 size.

    Returns:
        What is wrong, or ``None`` when the value is plain.
    """
    return _text_problem(value, max_bytes)


def query_problem(value: object) -> str | None:
    r"""Check a request query: trimmed, non-empty, <= 4096 bytes, no control characters but ``\n`` and ``\t``.

    Args:
        value: the query.

    Returns:
        What is wrong, or ``None``.
    """
    return _text_problem(value, MAX_QUERY_BYTES, allowed_controls="\n\t")


def surface_id_problem(value: object, max_bytes: int = MAX_SURFACE_ID_BYTES) -> str | None:  # noqa: PLR0911 - one early return per rule, in contract order
    """Check the surfaceId rule (also used for session ids): ASCII, alphanumeric first, then ``[A-Za-z0-9-._:/@]``.

    Args:
        value: the identifier.
        max_bytes: the largest allowed size (256 for both surface and session ids).

    Returns:
        What is wrong, or ``None``.
    """
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not value:
        return "must not be empty"
    if not value.isascii():
        return f"{_show(value)} must be ASCII"
    if not (value[0].isalnum()):
        return f"{_show(value)} must start with a letter or digit"
    if not _SURFACE_REST.fullmatch(value, 1):
        return f"{_show(value)} may only contain letters, digits and - . _ : / @"
    if len(value) > max_bytes:
        return f"is {len(value):,} bytes, the limit is {max_bytes:,}"
    return None


def package_id_problem(value: object) -> str | None:
    """Check a package id: ``publisher/name``, exactly one slash, each part ``[a-z0-9_-]+``.

    Args:
        value: the package id.

    Returns:
        What is wrong, or ``None``.
    """
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    parts = value.split("/")
    if len(parts) != 2 or not all(_PACKAGE_PART.fullmatch(part) for part in parts):
        return f"{_show(value)} must be 'publisher/name' with each part matching [a-z0-9_-]+"
    return None


def generation_problem(value: object) -> str | None:
    """Check a lifecycle generation: an unsigned 64-bit integer that is not 0.

    Args:
        value: the generation.

    Returns:
        What is wrong, or ``None``.
    """
    if not isinstance(value, int) or isinstance(value, bool):
        return f"must be an integer, got {type(value).__name__}"
    if value == 0:
        return "must not be 0"
    if not 0 < value <= _U64_MAX:
        return f"{value} does not fit an unsigned 64-bit integer"
    return None


def digest_problem(value: object) -> str | None:
    """Check a digest: ``sha256:`` followed by exactly 64 lowercase hex digits.

    Args:
        value: the digest.

    Returns:
        What is wrong, or ``None``.
    """
    if not isinstance(value, str) or not _DIGEST.fullmatch(value):
        return f"{_show(value)} is not a digest of the form sha256:<64 lowercase hex digits>"
    return None


def document_path_problem(value: object) -> str | None:  # noqa: PLR0911 - one early return per rule, in contract order
    """Check a citation's documentPath: relative, ``/``-separated, ends ``.md``, no empty, ``.`` or ``..`` segment.

    Args:
        value: the path.

    Returns:
        What is wrong, or ``None``.
    """
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    size = _utf8_size(value)
    if size is None:
        return "is not valid UTF-8 (it holds a lone surrogate)"
    if not value:
        return "must not be empty"
    if size > MAX_DOCUMENT_PATH_BYTES:
        return f"is {size:,} bytes, the limit is {MAX_DOCUMENT_PATH_BYTES:,}"
    if "\\" in value:
        return f"{_show(value)} must not contain a backslash"
    if value.startswith("/") or _DRIVE.match(value):
        return f"{_show(value)} must be relative, not absolute"
    control = _control_char(value)
    if control is not None:
        return f"control character U+{ord(control):04X} is not allowed"
    for segment in value.split("/"):
        if segment in ("", ".", ".."):
            return f"segment {segment!r} is not allowed" if segment else "empty segment is not allowed"
    if not value.endswith(".md"):
        return f"{_show(value)} must end with '.md'"
    return None


def evidence_ids_problem(value: object) -> str | None:
    """Check evidenceIds: 1..256 sha256 digests in strictly ascending order (so no duplicates).

    Args:
        value: the evidence ids.

    Returns:
        What is wrong, or ``None``.
    """
    if isinstance(value, str) or not isinstance(value, Sequence):
        return f"must be an array, got {type(value).__name__}"
    if not 1 <= len(value) <= MAX_EVIDENCE_IDS:
        return f"has {len(value)} entries, it must have 1..{MAX_EVIDENCE_IDS}"
    for index, item in enumerate(value):
        problem = digest_problem(item)
        if problem is not None:
            return f"[{index}] {problem}"
        if index and value[index - 1] >= item:
            relation = "repeats" if value[index - 1] == item else "sorts before"
            return f"[{index}] {relation} [{index - 1}]: ids must be strictly ascending"
    return None


# --- validators: apply the rules to one object and raise its typed error -----------------------------------------


def _raise_first(error: type[Exception], where: str, checks: Sequence[tuple[str, str | None]]) -> None:
    for field, problem in checks:
        if problem is not None:
            raise error(f"{where}.{field}: {problem}")


def _exact(value: object, expected: str) -> str | None:
    return None if value == expected else f"{_show(value)} is not the exact schema {expected!r}"


def validate_limits(limits: BindingLimits, *, where: str = "binding.limits") -> None:
    """Check each limit is 1..cap (caps: 4 results, 6,144 bytes per document, 6,144 bytes in total).

    Args:
        limits: the limits.
        where: the prefix the message names the field with.

    Raises:
        InvalidLimits: ``limits`` is not a BindingLimits, or a limit is zero, negative or above its cap.
    """
    expect_type(limits, _models().BindingLimits, InvalidLimits, where)
    check_shape(limits, InvalidLimits, where)
    for field, value, cap in (
        ("maxResults", limits.max_results, MAX_RESULTS_CAP),
        ("maxDocumentBytes", limits.max_document_bytes, MAX_DOCUMENT_BYTES_CAP),
        ("maxTotalBytes", limits.max_total_bytes, MAX_TOTAL_BYTES_CAP),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= cap:
            raise InvalidLimits(f"{where}.{field}: {_show(value)} is out of range, it must be 1..{cap:,}")


def validate_knowledge(knowledge: KnowledgeBinding, *, where: str = "knowledge") -> None:
    """Check a knowledge binding's own fields: schemas, surfaceId, formatVersion, digests, generation.

    Args:
        knowledge: the knowledge binding.
        where: the prefix the message names the field with.

    Raises:
        InvalidBinding: ``knowledge`` is not a KnowledgeBinding, or a rule failed.
    """
    expect_type(knowledge, _models().KnowledgeBinding, InvalidBinding, where)
    check_shape(knowledge, InvalidBinding, where)
    _raise_first(
        InvalidBinding,
        where,
        [
            ("schema", _exact(knowledge.schema_id, KNOWLEDGE_BINDING_SCHEMA)),
            ("surfaceId", surface_id_problem(knowledge.surface_id)),
            ("formatVersion", plain_problem(knowledge.format_version, MAX_FORMAT_VERSION_BYTES)),
            ("contentDigest", digest_problem(knowledge.content_digest)),
            ("searchSchema", _exact(knowledge.search_schema, KNOWLEDGE_SEARCH_SCHEMA)),
            ("readSchema", _exact(knowledge.read_schema, KNOWLEDGE_READ_SCHEMA)),
            ("citationSchema", _exact(knowledge.citation_schema, CITATION_SCHEMA)),
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
    expect_type(binding, _models().PackageBinding, InvalidBinding, where)
    check_shape(binding, InvalidBinding, where)
    knowledge = binding.knowledge
    _raise_first(
        InvalidBinding,
        where,
        [
            ("schema", _exact(binding.schema_id, PACKAGE_BINDING_SCHEMA)),
            ("packageId", package_id_problem(binding.package_id)),
            ("packageVersion", plain_problem(binding.package_version, MAX_PACKAGE_VERSION_BYTES)),
            ("lifecycleGeneration", generation_problem(binding.lifecycle_generation)),
            ("generationDigest", digest_problem(binding.generation_digest)),
            ("capabilitySnapshotDigest", digest_problem(binding.capability_snapshot_digest)),
        ],
    )
    validate_knowledge(knowledge, where=f"{where}.knowledge")
    _raise_first(
        InvalidBinding,
        where,
        [
            ("knowledge.lifecycleGeneration", _same(knowledge.lifecycle_generation, binding.lifecycle_generation)),
            ("knowledge.generationDigest", _same(knowledge.generation_digest, binding.generation_digest)),
            (
                "capabilitySnapshotDigest",
                _recomputes(binding.capability_snapshot_digest, binding.expected_capability_snapshot_digest()),
            ),
        ],
    )
    validate_limits(binding.limits, where=f"{where}.limits")


def _same(value: object, package_value: object) -> str | None:
    if value == package_value:
        return None
    return f"{_show(value)} differs from the package's {_show(package_value)}"


def _recomputes(stated: str, recomputed: str, consequence: str = "") -> str | None:
    if stated == recomputed:
        return None
    return f"{stated} does not match the recomputed {recomputed}{consequence}"


def validate_request(request: ContextRequest) -> None:
    """Check a context request: schema, sessionId, query, its binding, and the recomputed requestDigest.

    Args:
        request: the request.

    Raises:
        InvalidRequest: ``request`` is not a ContextRequest, or the schema, sessionId, query or requestDigest rule
            failed.
        InvalidBinding: the request's binding is invalid.
        InvalidLimits: the request's binding has out-of-range limits.
    """
    expect_type(request, _models().ContextRequest, InvalidRequest, "request")
    check_shape(request, InvalidRequest, "request")
    _raise_first(
        InvalidRequest,
        "request",
        [
            ("schema", _exact(request.schema_id, REQUEST_SCHEMA)),
            ("sessionId", surface_id_problem(request.session_id)),
            ("query", query_problem(request.query)),
            ("requestDigest", digest_problem(request.request_digest)),
        ],
    )
    validate_binding(request.binding, where="request.binding")
    _raise_first(
        InvalidRequest,
        "request",
        [("requestDigest", _recomputes(request.request_digest, request.expected_request_digest()))],
    )


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
    models = _models()
    expect_type(citation, models.Citation, ResponseDrift, where)
    check_shape(citation, ResponseDrift, where)
    if binding is not None:
        expect_type(binding, models.PackageBinding, ResponseDrift, "binding")
    _raise_first(
        ResponseDrift,
        where,
        [
            ("schema", _exact(citation.schema_id, CITATION_SCHEMA)),
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
        _raise_first(ResponseDrift, where, _identity_checks(citation, binding))
    substituted = " (the citation was substituted)"
    _raise_first(
        ResponseDrift,
        where,
        [("citationDigest", _recomputes(citation.citation_digest, citation.expected_citation_digest(), substituted))],
    )


def _identity_checks(citation: Citation, binding: PackageBinding) -> list[tuple[str, str | None]]:
    def differs(value: object, expected: object, note: str = "") -> str | None:
        return None if value == expected else f"{_show(value)} is not the binding's {_show(expected)}{note}"

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
    models = _models()
    expect_type(document, models.CitedDocument, ResponseDrift, where)
    check_shape(document, ResponseDrift, where)
    if binding is not None:
        expect_type(binding, models.PackageBinding, ResponseDrift, "binding")
    validate_citation(document.citation, binding, where=f"{where}.citation")
    content = document.content
    size = _utf8_size(content) if isinstance(content, str) else None
    if not content or size is None:
        raise ResponseDrift(f"{where}.content: must be a non-empty UTF-8 string")
    checks: list[tuple[str, str | None]] = [
        ("byteCount", None if document.byte_count == size else f"{document.byte_count} is not the {size} bytes"),
        ("sourceDigest", _recomputes(document.source_digest, document.expected_source_digest())),
    ]
    if binding is not None and size > binding.limits.max_document_bytes:
        limit = binding.limits.max_document_bytes
        checks.append(("byteCount", f"{size:,} bytes is over the binding's maxDocumentBytes {limit:,}"))
    _raise_first(ResponseDrift, where, checks)


def validate_response(response: ContextResponse, request: ContextRequest | None = None) -> None:
    """Check a response: on its own, and (given the request) that it answers exactly that request.

    On its own: every field present and of its type (however the response was built); the schema; the binding's
    own rules; 1..maxResults documents, each valid and cited from the response's binding; no
    repeated citationDigest; total bytes <= maxTotalBytes. Against the request: the same requestDigest, and the
    same binding as a whole (limits included).

    Args:
        response: the response.
        request: the request it must answer; ``None`` checks the response on its own.

    Raises:
        ResponseDrift: ``response`` is not a ContextResponse (or ``request`` not a ContextRequest), or any rule
            failed.
    """
    models = _models()
    expect_type(response, models.ContextResponse, ResponseDrift, "response")
    check_shape(response, ResponseDrift, "response")
    if request is not None:
        expect_type(request, models.ContextRequest, ResponseDrift, "request")
    _raise_first(
        ResponseDrift,
        "response",
        [
            ("schema", _exact(response.schema_id, RESPONSE_SCHEMA)),
            ("requestDigest", digest_problem(response.request_digest)),
        ],
    )
    if request is not None:
        _check_answers(response, request)
    binding = response.binding
    try:
        validate_binding(binding, where="response.binding")
    except (InvalidBinding, InvalidLimits) as exc:
        raise ResponseDrift(str(exc)) from None
    documents = response.documents
    limit = binding.limits.max_results
    if not 1 <= len(documents) <= limit:
        raise ResponseDrift(f"response.documents: has {len(documents)} documents, maxResults allows 1..{limit}")
    seen: dict[str, int] = {}
    total = 0
    for index, document in enumerate(documents):
        validate_document(document, binding, where=f"response.documents[{index}]")
        digest = document.citation.citation_digest
        if digest in seen:
            raise ResponseDrift(
                f"response.documents[{index}].citation.citationDigest: repeats documents[{seen[digest]}]"
            )
        seen[digest] = index
        total += document.byte_count
    if total > binding.limits.max_total_bytes:
        raise ResponseDrift(
            f"response.documents: {total:,} bytes in total, over the binding's maxTotalBytes "
            f"{binding.limits.max_total_bytes:,}"
        )


def _check_answers(response: ContextResponse, request: ContextRequest) -> None:
    if response.request_digest != request.request_digest:
        raise ResponseDrift(
            f"response.requestDigest: {response.request_digest} is not the request's {request.request_digest} "
            "(request mismatch)"
        )
    if response.binding != request.binding:
        changed = _binding_differences(response.binding, request.binding)
        drift = any(name in changed for name in ("lifecycleGeneration", "generationDigest", "knowledge.contentDigest"))
        raise ResponseDrift(
            f"response.binding: differs from the request's binding in {', '.join(changed)}"
            + (" (generation drift)" if drift else "")
        )


def _binding_differences(left: PackageBinding, right: PackageBinding) -> list[str]:
    def flat(binding: PackageBinding) -> dict[str, object]:
        data = binding.to_dict()
        out: dict[str, object] = {}
        for key, value in data.items():
            if isinstance(value, dict):
                out.update({f"{key}.{inner}": item for inner, item in value.items()})
            else:
                out[key] = value
        return out

    a, b = flat(left), flat(right)
    return [key for key in a if a[key] != b.get(key)] or ["its type"]


def validate_provider_name(name: object) -> None:
    """Check a provider name: a plain value (non-empty, trimmed, no control characters), <= 128 bytes.

    Args:
        name: the provider's ``name``.

    Raises:
        ProviderFailure: the name is not a plain value of at most 128 bytes.
    """
    _raise_first(ProviderFailure, "provider", [("name", plain_problem(name, MAX_PROVIDER_NAME_BYTES))])
