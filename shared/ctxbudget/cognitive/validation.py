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

This module is where the rules are imported from. Each wire type's validator lives with the type it checks
(``_binding``, ``_request``, ``_citation``, ``_response``), the rules on plain values in ``_value_rules`` and the
shape checks in ``_shape``.
"""

from __future__ import annotations

from ..errors import ProviderFailure
from ._binding import validate_binding, validate_knowledge, validate_limits
from ._citation import validate_citation, validate_document
from ._request import validate_request
from ._response import validate_response
from ._shape import check_shape, expect_type
from ._value_rules import (
    MAX_DOCUMENT_PATH_BYTES,
    MAX_EVIDENCE_IDS,
    MAX_FORMAT_VERSION_BYTES,
    MAX_HEADING_BYTES,
    MAX_PACKAGE_VERSION_BYTES,
    MAX_PROVIDER_NAME_BYTES,
    MAX_QUERY_BYTES,
    MAX_SURFACE_ID_BYTES,
    digest_problem,
    document_path_problem,
    evidence_ids_problem,
    generation_problem,
    package_id_problem,
    plain_problem,
    query_problem,
    raise_first,
    surface_id_problem,
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


def validate_provider_name(name: object) -> None:
    """Check a provider name: a plain value (non-empty, trimmed, no control characters), <= 128 bytes.

    Args:
        name: the provider's ``name``.

    Raises:
        ProviderFailure: the name is not a plain value of at most 128 bytes.
    """
    raise_first(ProviderFailure, "provider", [("name", plain_problem(name, MAX_PROVIDER_NAME_BYTES))])
