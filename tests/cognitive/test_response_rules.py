"""Response rules: every field of a valid response, tampered, is rejected as ResponseDrift naming the rule."""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget.cognitive import (
    BindingLimits,
    Citation,
    CitedDocument,
    CognitiveContextSession,
    ContextResponse,
    validate_response,
)
from ctxbudget.errors import ResponseDrift
from hypothesis import given, settings
from hypothesis import strategies as st

from .helpers import (
    QUERY,
    SESSION_ID,
    StaticProvider,
    evidence,
    make_binding,
    make_document,
    make_request,
    make_response,
    tampered,
)

DIGEST = "sha256:" + "1" * 64
CITATION = ("documents", 0, "citation")


def reject(data: dict[str, Any], request: Any = None) -> str:
    """Parse and validate ``data`` against the request; return the ResponseDrift message."""
    request = request or make_request()
    with pytest.raises(ResponseDrift) as caught:
        validate_response(ContextResponse.from_dict(data), request)
    return str(caught.value)


def valid() -> dict[str, Any]:
    return make_response().to_dict()


@pytest.mark.parametrize(
    ("path", "value", "fragment"),
    [
        (("schema",), "a3s.code.cognitive-context-response.v0", "response.schema"),
        (("requestDigest",), DIGEST, "requestDigest: " + DIGEST + " is not the request's"),
        (("requestDigest",), "nope", "response.requestDigest"),
        (("binding", "lifecycleGeneration"), 8, "invalid binding"),
        (("binding", "limits", "maxResults"), 5, "invalid binding"),
        (("documents",), [], "has 0 documents, maxResults allows 1..4"),
        (("truncated",), "yes", "truncated"),
        ((*CITATION, "schema"), "a3s.use.okf-knowledge-citation.v2", "citation.schema"),
        ((*CITATION, "lifecycleGeneration"), 0, "citation.lifecycleGeneration: must not be 0"),
        ((*CITATION, "packageId"), "other/pkg", "(the citation was substituted)"),
        ((*CITATION, "packageId"), "Other", "citation.packageId: 'Other' must be 'publisher/name'"),
        ((*CITATION, "packageVersion"), "0.1.1", "(the citation was substituted)"),
        ((*CITATION, "lifecycleGeneration"), 8, "(the citation was substituted)"),
        ((*CITATION, "generationDigest"), DIGEST, "(the citation was substituted)"),
        ((*CITATION, "surfaceId"), "other-surface", "(the citation was substituted)"),
        ((*CITATION, "surfaceId"), "", "citation.surfaceId: must not be empty"),
        ((*CITATION, "contentDigest"), DIGEST, "(the citation was substituted)"),
        ((*CITATION, "contentDigest"), "sha256:", "citation.contentDigest"),
        ((*CITATION, "documentPath"), "guide/other.md", "(the citation was substituted)"),
        ((*CITATION, "heading"), "Budgeting", "citation.citationDigest"),
        ((*CITATION, "evidenceIds"), [DIGEST], "(the citation was substituted)"),
        ((*CITATION, "citationDigest"), DIGEST, "citation.citationDigest"),
        ((*CITATION, "citationDigest"), "sha256:short", "citation.citationDigest"),
        (("documents", 0, "sourceDigest"), DIGEST, "document.sourceDigest"),
        (("documents", 0, "byteCount"), 9, "document.byteCount: 9 is not the 8 bytes"),
        (("documents", 0, "content"), "Budgets!", "document.sourceDigest"),
        (("documents", 0, "content"), "", "document.content: must be a non-empty UTF-8 string"),
        (("documents", 1, "byteCount"), 36, "document.byteCount: 36 is not the 40 bytes"),
    ],
)
def test_tampering_any_field_is_drift(path: tuple[Any, ...], value: object, fragment: str) -> None:
    assert fragment in reject(tampered(valid(), path, value))


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("../x.md", "documentPath: segment '..' is not allowed"),
        ("guide/../x.md", "segment '..' is not allowed"),
        ("./x.md", "segment '.' is not allowed"),
        ("guide//x.md", "documentPath: empty segment is not allowed"),
        ("guide/", "empty segment"),
        ("/etc/x.md", "documentPath: '/etc/x.md' must be relative"),
        ("C:/x.md", "must be relative"),
        ("guide\\x.md", "must not contain a backslash"),
        ("guide/x.txt", "must end with '.md'"),
        ("guide/x.MD", "must end with '.md'"),
        ("", "documentPath: must not be empty"),
        ("a/" * 255 + "x.md", "documentPath: is 514 bytes, the limit is 512"),
        ("x\n.md", "control character U+000A"),
    ],
)
def test_document_path_rules(path: str, fragment: str) -> None:
    assert fragment in reject(tampered(valid(), (*CITATION, "documentPath"), path))


@pytest.mark.parametrize(
    ("heading", "fragment"),
    [
        ("", "heading: must not be empty"),
        (" Budgets", "heading: ' Budgets' must be trimmed"),
        ("Bud\tgets", "heading: control character U+0009"),
        ("h" * 129, "heading: is 129 bytes, the limit is 128"),
    ],
)
def test_heading_rules(heading: str, fragment: str) -> None:
    assert fragment in reject(tampered(valid(), (*CITATION, "heading"), heading))


@pytest.mark.parametrize(
    ("ids", "fragment"),
    [
        ([], "evidenceIds: has 0 entries, it must have 1..256"),
        ([DIGEST, DIGEST], "evidenceIds: [1] repeats [0]: ids must be strictly ascending"),
        (["sha256:" + "2" * 64, DIGEST], "[1] sorts before [0]"),
        (["not-a-digest"], "evidenceIds: [0] 'not-a-digest' is not a digest"),
        ([f"sha256:{index:064x}" for index in range(257)], "has 257 entries"),
        ("sha256:" + "1" * 64, "evidenceIds"),
    ],
)
def test_evidence_id_rules(ids: object, fragment: str) -> None:
    assert fragment in reject(tampered(valid(), (*CITATION, "evidenceIds"), ids))


def test_evidence_accepts_256_ascending_ids() -> None:
    ids = [f"sha256:{index:064x}" for index in range(256)]
    citation = Citation.create(make_binding(), document_path="a.md", heading="H", evidence_ids=reversed(ids))
    assert list(citation.evidence_ids) == ids


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"package_id": "other/pkg"}, "citation.packageId: 'other/pkg' is not the binding's 'contra-sense/handbook'"),
        ({"package_version": "0.1.1"}, "citation.packageVersion"),
        ({"lifecycle_generation": 8}, "citation.lifecycleGeneration: 8 is not the binding's 7 (generation drift)"),
        ({"generation_digest": DIGEST}, "citation.generationDigest: '" + DIGEST),
        ({"surface_id": "other-surface"}, "citation.surfaceId: 'other-surface' is not the binding's"),
        ({"content_digest": DIGEST}, "citation.contentDigest"),
    ],
)
def test_a_self_consistent_citation_of_another_generation_is_drift(overrides: dict[str, Any], fragment: str) -> None:
    request = make_request()
    foreign = make_document(make_binding(**overrides))
    data = tampered(valid(), ("documents", 0), foreign.to_dict())
    assert fragment in reject(data, request)


def test_a_repeated_citation_is_drift() -> None:
    request = make_request()
    document = make_document(request.binding)
    with pytest.raises(ResponseDrift, match=r"documents\[1\]\.citation\.citationDigest: repeats documents\[0\]"):
        ContextResponse.create(request, [document, document])


def small_request(**limits: int) -> Any:
    return make_request(make_binding(limits=BindingLimits(**limits)))


def test_more_documents_than_max_results_is_drift() -> None:
    request = small_request(max_results=1)
    documents = [make_document(request.binding), make_document(request.binding, "b.md")]
    with pytest.raises(ResponseDrift, match=r"has 2 documents, maxResults allows 1..1"):
        ContextResponse.create(request, documents)


def test_a_document_over_max_document_bytes_is_drift() -> None:
    request = small_request(max_document_bytes=8)
    ContextResponse.create(request, [make_document(request.binding, content="12345678")])
    with pytest.raises(ResponseDrift, match="9 bytes is over the binding's maxDocumentBytes 8"):
        ContextResponse.create(request, [make_document(request.binding, content="123456789")])


def test_documents_over_max_total_bytes_are_drift() -> None:
    request = small_request(max_total_bytes=10)
    first = make_document(request.binding, "a.md", content="12345")
    with pytest.raises(ResponseDrift, match="11 bytes in total, over the binding's maxTotalBytes 10"):
        ContextResponse.create(request, [first, make_document(request.binding, "b.md", content="123456")])


def test_generation_drift_in_the_response_binding() -> None:
    request = make_request()
    drifted = make_request(make_binding(lifecycle_generation=8))
    response = make_response(drifted).model_copy(update={"request_digest": request.request_digest})
    with pytest.raises(ResponseDrift, match=r"lifecycleGeneration.*\(generation drift\)"):
        validate_response(response, request)


def test_other_limits_in_the_response_binding_are_drift() -> None:
    request = make_request()
    other = make_request(make_binding(limits=BindingLimits(max_results=3)))
    response = make_response(other).model_copy(update={"request_digest": request.request_digest})
    with pytest.raises(ResponseDrift, match=r"response.binding: differs .* in limits.maxResults"):
        validate_response(response, request)


def test_a_response_to_another_request_is_a_request_mismatch() -> None:
    with pytest.raises(ResponseDrift, match=r"\(request mismatch\)"):
        validate_response(make_response(make_request(query="another")), make_request())


def test_validate_response_rechecks_unvalidated_copies() -> None:
    response = make_response()
    document = response.documents[0]
    forged_doc = document.model_copy(update={"content": "Budgets?"})
    forged = response.model_copy(update={"documents": (forged_doc, response.documents[1])})
    with pytest.raises(ResponseDrift, match="sourceDigest"):
        validate_response(forged, make_request())


def test_documents_are_checked_on_their_own_too() -> None:
    citation = make_response().documents[0].citation
    with pytest.raises(ResponseDrift, match="content"):
        CitedDocument.create(citation, "")
    with pytest.raises(ResponseDrift, match="documentPath"):
        Citation.create(make_binding(), document_path="../x.md", heading="H", evidence_ids=evidence("x"))


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*path, key))]
    if isinstance(value, list):
        return [leaf for index, item in enumerate(value) for leaf in _leaves(item, (*path, index))]
    return [(path, value)]


PINNED_LEAVES = [leaf for leaf in _leaves(valid()) if leaf[0] != ("truncated",)]


def _mutate(value: Any, salt: int) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 + salt
    text = str(value)
    index = salt % len(text)
    replacement = "0" if text[index] != "0" else "1"
    return text[:index] + replacement + text[index + 1 :]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(PINNED_LEAVES), st.integers(min_value=0, max_value=10_000))
def test_any_single_field_tamper_of_a_valid_response_is_rejected(leaf: tuple[Any, Any], salt: int) -> None:
    path, value = leaf
    reject(tampered(valid(), path, _mutate(value, salt)))


def test_truncated_is_informational_and_not_pinned() -> None:
    # Documented: the contract pins no digest over `truncated`; flipping it is not drift.
    data = tampered(valid(), ("truncated",), True)
    validate_response(ContextResponse.from_dict(data), make_request())


# --- responses built with model_construct (no pydantic validation) are validated all the same ---------------------

_ABSENT = object()


def _constructed(request: Any = None, **changes: Any) -> ContextResponse:
    """The valid response to ``request``, rebuilt with ``model_construct`` and ``changes`` (``_ABSENT`` drops one)."""
    fields = {**dict(make_response(request)), **changes}
    return ContextResponse.model_construct(**{name: value for name, value in fields.items() if value is not _ABSENT})


def _constructed_document(**changes: Any) -> CitedDocument:
    return CitedDocument.model_construct(**{**dict(make_response().documents[0]), **changes})


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"truncated": "no"}, "response.truncated: must be a bool, got str"),
        ({"truncated": 0}, "response.truncated: must be a bool, got int"),
        ({"documents": _ABSENT}, "response.documents: is missing"),
        ({"documents": list(make_response().documents)}, "response.documents: must be a tuple, got list"),
        ({"request_digest": None}, "response.requestDigest: must be a str, got NoneType"),
        ({"binding": make_binding().to_dict()}, "response.binding: must be a PackageBinding, got dict"),
        (
            {"documents": (_constructed_document(byte_count=8.0),)},
            "response.documents[0].byteCount: must be an int, got float",
        ),
        (
            {"documents": (_constructed_document(byte_count=True),)},
            "response.documents[0].byteCount: must be an int, got bool",
        ),
    ],
)
def test_a_response_built_without_validation_is_still_checked(changes: dict[str, Any], fragment: str) -> None:
    forged = _constructed(**changes)
    with pytest.raises(ResponseDrift) as caught:
        validate_response(forged, make_request())
    assert fragment in str(caught.value)
    with pytest.raises(ResponseDrift):
        validate_response(forged)


def test_a_response_binding_built_without_validation_is_drift_even_without_the_request() -> None:
    forged_binding = make_binding().model_copy(update={"package_version": "9.9.9"})
    with pytest.raises(ResponseDrift, match=r"response\.binding\.capabilitySnapshotDigest"):
        validate_response(_constructed(binding=forged_binding))


def test_a_session_rejects_a_provider_response_built_without_validation() -> None:
    provider = StaticProvider(lambda request: _constructed(request, truncated="no"))
    session = CognitiveContextSession(make_binding(), provider)
    with pytest.raises(ResponseDrift, match="truncated"):
        session.fetch(QUERY, session_id=SESSION_ID)
