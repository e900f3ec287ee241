"""The context request: one typed, digest-pinned question asked under a binding."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, model_validator
from typing_extensions import Self

from ..errors import CognitiveContextError, InvalidRequest
from ._binding import PackageBinding, validate_binding
from ._shape import check_shape, expect_type
from ._value_rules import (
    digest_problem,
    exact_problem,
    query_problem,
    raise_first,
    recompute_problem,
    surface_id_problem,
)
from ._wire import WireModel
from .digest import canonical_digest
from .schemas import REQUEST_SCHEMA

__all__ = ["ContextRequest", "validate_request"]


class ContextRequest(WireModel):
    """One typed request to the provider; it repeats the whole binding and is digest-pinned."""

    _wire_error: ClassVar[type[CognitiveContextError]] = InvalidRequest

    schema_id: str = Field(default=REQUEST_SCHEMA, alias="schema")
    session_id: str = Field(description="The session, following the surfaceId rule.")
    query: str = Field(description="Trimmed, non-empty, <= 4096 bytes, no control characters but \\n and \\t.")
    binding: PackageBinding
    request_digest: str

    @model_validator(mode="after")
    def _check(self) -> Self:
        validate_request(self)
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
            ("sessionId", surface_id_problem(session_id)),
            ("query", query_problem(query)),
        ):
            if problem is not None:
                raise InvalidRequest(f"request.{field}: {problem}")
        digest = canonical_digest(REQUEST_SCHEMA, [REQUEST_SCHEMA, session_id, query, binding])
        return cls(session_id=session_id, query=query, binding=binding, request_digest=digest)

    def expected_request_digest(self) -> str:
        """Recompute the requestDigest from this request's fields."""
        return canonical_digest(REQUEST_SCHEMA, [self.schema_id, self.session_id, self.query, self.binding])


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
    expect_type(request, ContextRequest, InvalidRequest, "request")
    check_shape(request, InvalidRequest, "request")
    raise_first(
        InvalidRequest,
        "request",
        [
            ("schema", exact_problem(request.schema_id, REQUEST_SCHEMA)),
            ("sessionId", surface_id_problem(request.session_id)),
            ("query", query_problem(request.query)),
            ("requestDigest", digest_problem(request.request_digest)),
        ],
    )
    validate_binding(request.binding, where="request.binding")
    raise_first(
        InvalidRequest,
        "request",
        [("requestDigest", recompute_problem(request.request_digest, request.expected_request_digest()))],
    )
