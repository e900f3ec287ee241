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

This module is where the wire types are imported from; each lives with its own validator (``_binding``, ``_request``,
``_citation``, ``_response``, over the shared base in ``_wire``).
"""

from __future__ import annotations

from ._binding import BindingLimits, KnowledgeBinding, PackageBinding
from ._citation import Citation, CitedDocument
from ._request import ContextRequest
from ._response import ContextResponse

__all__ = [
    "BindingLimits",
    "Citation",
    "CitedDocument",
    "ContextRequest",
    "ContextResponse",
    "KnowledgeBinding",
    "PackageBinding",
]
