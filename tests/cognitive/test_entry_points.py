"""A wrong argument to any public entry point raises the typed error naming it, never a raw TypeError/AttributeError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from ctxbudget.cognitive import (
    BindingLimits,
    Citation,
    CitedDocument,
    ContextRequest,
    ContextResponse,
    canonical_digest,
    check_resume,
    citation_marker,
    relevance_at,
    render_document,
    render_response,
    sha256_digest,
    validate_binding,
    validate_citation,
    validate_document,
    validate_knowledge,
    validate_limits,
    validate_request,
    validate_response,
)
from ctxbudget.errors import InvalidBinding, InvalidLimits, InvalidRequest, ResponseDrift, UsageError

from .helpers import evidence, make_binding, make_request, make_response

B = make_binding()
R = make_request(B)
RESP = make_response(R)
DOC = RESP.documents[0]
CIT = DOC.citation
EVIDENCE = evidence("x")


def _cite(binding: Any = B, ids: Any = EVIDENCE) -> Citation:
    return Citation.create(binding, document_path="a.md", heading="H", evidence_ids=ids)


CASES: list[Any] = [
    # (id, call, error type, the message must contain this, naming the argument and what was received)
    ("citation-evidence-None", lambda: _cite(ids=None), ResponseDrift, "citation.evidenceIds: must be an iterable"),
    ("citation-evidence-str", lambda: _cite(ids=EVIDENCE[0]), ResponseDrift, "evidenceIds: must be an iterable"),
    ("citation-evidence-int-items", lambda: _cite(ids=[1, EVIDENCE[0]]), ResponseDrift, "[0] must be a string"),
    ("citation-evidence-mixed", lambda: _cite(ids=[EVIDENCE[0], 2]), ResponseDrift, "[1] must be a string, got int"),
    ("citation-binding-None", lambda: _cite(binding=None), ResponseDrift, "citation.binding: must be a PackageBinding"),
    ("citation-binding-dict", lambda: _cite(binding=B.to_dict()), ResponseDrift, "got dict"),
    ("document-citation-None", lambda: CitedDocument.create(None, "x"), ResponseDrift, "document.citation: must be"),
    ("response-documents-None", lambda: ContextResponse.create(R, None), ResponseDrift, "response.documents: must be"),
    ("response-documents-int", lambda: ContextResponse.create(R, 3), ResponseDrift, "got int"),
    ("response-request-None", lambda: ContextResponse.create(None, [DOC]), ResponseDrift, "response.request: must be"),
    ("response-request-dict", lambda: ContextResponse.create(R.to_dict(), [DOC]), ResponseDrift, "got dict"),
    ("request-binding-None", lambda: ContextRequest.create("s", "q", None), InvalidRequest, "request.binding: must"),
    ("request-binding-dict", lambda: ContextRequest.create("s", "q", B.to_dict()), InvalidRequest, "got dict"),
    ("same-generation-str", lambda: B.same_generation("x"), InvalidBinding, "other: must be a PackageBinding, got str"),
    ("same-generation-None", lambda: B.same_generation(None), InvalidBinding, "other: must be a PackageBinding"),
    ("with-limits-dict", lambda: B.with_limits({"maxResults": 1}), InvalidLimits, "limits: must be a BindingLimits"),
    ("create-limits-dict", lambda: make_binding(limits={}), InvalidLimits, "binding.limits: must be a BindingLimits"),
    ("validate-response-dict", lambda: validate_response({}, R), ResponseDrift, "response: must be a ContextResponse"),
    ("validate-response-request", lambda: validate_response(RESP, "x"), ResponseDrift, "request: must be a Context"),
    ("validate-binding-None", lambda: validate_binding(None), InvalidBinding, "binding: must be a PackageBinding"),
    ("validate-knowledge-None", lambda: validate_knowledge(None), InvalidBinding, "knowledge: must be a Knowledge"),
    ("validate-limits-dict", lambda: validate_limits({}), InvalidLimits, "binding.limits: must be a BindingLimits"),
    ("validate-request-None", lambda: validate_request(None), InvalidRequest, "request: must be a ContextRequest"),
    ("validate-citation-None", lambda: validate_citation(None), ResponseDrift, "citation: must be a Citation"),
    ("validate-citation-binding", lambda: validate_citation(CIT, "b"), ResponseDrift, "binding: must be a Package"),
    ("validate-document-None", lambda: validate_document(None), ResponseDrift, "document: must be a CitedDocument"),
    ("validate-document-binding", lambda: validate_document(DOC, 1), ResponseDrift, "binding: must be a Package"),
    ("canonical-domain-None", lambda: canonical_digest(None, []), UsageError, "domain must be a string, got NoneType"),
    ("canonical-domain-bytes", lambda: canonical_digest(b"d", []), UsageError, "domain must be a string, got bytes"),
    ("sha256-str", lambda: sha256_digest("text"), UsageError, "data must be bytes, got str"),
    ("citation-marker-None", lambda: citation_marker(None), ResponseDrift, "citation: must be a Citation"),
    ("render-document-None", lambda: render_document(None, 0), ResponseDrift, "document: must be a CitedDocument"),
    ("render-document-position", lambda: render_document(DOC, -1), UsageError, "position: must be an integer >= 0"),
    ("render-response-None", lambda: render_response(None), ResponseDrift, "response: must be a ContextResponse"),
    ("relevance-str", lambda: relevance_at("0"), UsageError, "position: must be an integer >= 0"),
    ("resume-stored-dict", lambda: check_resume(B.to_dict(), B), InvalidBinding, "stored_binding: must be a Package"),
    ("resume-provider-str", lambda: check_resume(B, "b"), InvalidBinding, "provider_binding: must be a PackageBinding"),
]


@pytest.mark.parametrize(("call", "error", "fragment"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_wrong_arguments_raise_the_typed_error(call: Callable[[], object], error: type[Exception], fragment: str):
    with pytest.raises(error) as caught:
        call()
    assert fragment in str(caught.value)
    # Not a raw Python error dressed up: the typed error itself, and nothing chained from a TypeError.
    assert not isinstance(caught.value, (TypeError, AttributeError))
    assert caught.value.__cause__ is None


def test_the_right_arguments_still_work() -> None:
    """The checks accept what the entry points always accepted (iterators of ids, tuples of documents)."""
    assert _cite(ids=iter(reversed(EVIDENCE))).evidence_ids == tuple(EVIDENCE)
    assert ContextResponse.create(R, iter([DOC])).documents == (DOC,)
    assert B.same_generation(B.with_limits(BindingLimits(max_results=1)))
    validate_response(RESP, R)
    validate_document(DOC, B)
    validate_citation(CIT, B)
    check_resume(None, None)
    check_resume(B, B)
    assert relevance_at(0) == 1.0
    assert canonical_digest("d", []) == canonical_digest("d", ())
