"""The context response: the provider's cited documents, checked to answer exactly the request made."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator
from typing_extensions import Self

from ..errors import CognitiveContextError, InvalidBinding, InvalidLimits, ResponseDrift
from ._binding import PackageBinding, validate_binding
from ._citation import CitedDocument, validate_document
from ._request import ContextRequest
from ._shape import check_shape, expect_type
from ._value_rules import digest_problem, exact_problem, raise_first
from ._wire import WireModel
from .schemas import RESPONSE_SCHEMA

__all__ = ["ContextResponse", "validate_response"]


class ContextResponse(WireModel):
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
        validate_response(self)
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
    expect_type(response, ContextResponse, ResponseDrift, "response")
    check_shape(response, ResponseDrift, "response")
    if request is not None:
        expect_type(request, ContextRequest, ResponseDrift, "request")
    raise_first(
        ResponseDrift,
        "response",
        [
            ("schema", exact_problem(response.schema_id, RESPONSE_SCHEMA)),
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
