"""Wire types: exact key order, exact JSON round trip, unknown/missing/duplicate keys rejected, digests computed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ctxbudget.cognitive import (
    BindingLimits,
    Citation,
    CitedDocument,
    ContextRequest,
    ContextResponse,
    KnowledgeBinding,
    PackageBinding,
    sha256_digest,
)
from ctxbudget.errors import CognitiveContextError, InvalidBinding, InvalidLimits, InvalidRequest, ResponseDrift
from pydantic import BaseModel

from .helpers import GOLDEN, GOLDEN_CAPABILITY_DIGEST, make_binding, make_request, make_response

KEY_ORDER = {
    KnowledgeBinding: [
        "schema", "surfaceId", "formatVersion", "contentDigest", "searchSchema", "readSchema", "citationSchema",
        "lifecycleGeneration", "generationDigest",
    ],
    BindingLimits: ["maxResults", "maxDocumentBytes", "maxTotalBytes"],
    PackageBinding: [
        "schema", "packageId", "packageVersion", "lifecycleGeneration", "generationDigest",
        "capabilitySnapshotDigest", "knowledge", "limits",
    ],
    ContextRequest: ["schema", "sessionId", "query", "binding", "requestDigest"],
    Citation: [
        "schema", "packageId", "packageVersion", "lifecycleGeneration", "generationDigest", "surfaceId",
        "contentDigest", "documentPath", "heading", "evidenceIds", "citationDigest",
    ],
    CitedDocument: ["citation", "sourceDigest", "content", "byteCount"],
    ContextResponse: ["schema", "requestDigest", "binding", "documents", "truncated"],
}  # fmt: skip

ERROR_OF = {
    KnowledgeBinding: InvalidBinding,
    BindingLimits: InvalidLimits,
    PackageBinding: InvalidBinding,
    ContextRequest: InvalidRequest,
    Citation: ResponseDrift,
    CitedDocument: ResponseDrift,
    ContextResponse: ResponseDrift,
}


def samples() -> dict[type[BaseModel], Any]:
    response = make_response()
    document = response.documents[1]
    return {
        KnowledgeBinding: response.binding.knowledge,
        BindingLimits: BindingLimits(max_results=2, max_document_bytes=100, max_total_bytes=150),
        PackageBinding: response.binding,
        ContextRequest: make_request(),
        Citation: document.citation,
        CitedDocument: document,
        ContextResponse: response,
    }


MODELS = list(KEY_ORDER)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_json_keys_are_camel_case_in_contract_order(model: type[BaseModel]) -> None:
    sample = samples()[model]
    assert list(json.loads(sample.to_json())) == KEY_ORDER[model]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_json_round_trips_exactly(model: type[Any]) -> None:
    sample = samples()[model]
    text = sample.to_json()
    again = model.from_json(text)
    assert again == sample
    assert again.to_json() == text
    assert model.from_json(text.encode()) == sample
    assert model.from_dict(sample.to_dict()) == sample


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_to_json_is_compact_utf8(model: type[Any]) -> None:
    text = samples()[model].to_json()
    assert ": " not in text
    assert ", " not in text or model in (ContextRequest,)  # only the query holds ", "


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_unknown_keys_are_rejected_with_the_models_error(model: type[Any]) -> None:
    data = samples()[model].to_dict()
    data["extra"] = 1
    with pytest.raises(ERROR_OF[model], match="extra"):
        model.from_dict(data)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_key_is_required_on_the_wire(model: type[Any]) -> None:
    for key in KEY_ORDER[model]:
        data = samples()[model].to_dict()
        del data[key]
        with pytest.raises(ERROR_OF[model], match=key):
            model.from_dict(data)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_snake_case_keys_are_not_the_wire_format(model: type[Any]) -> None:
    data = samples()[model].model_dump(by_alias=False, mode="json")
    with pytest.raises(ERROR_OF[model]):
        model.from_dict(data)


@pytest.mark.parametrize(
    "text",
    ['{"maxResults":1,"maxResults":2,"maxDocumentBytes":1,"maxTotalBytes":1}', "[1]", "{", "NaN", b"\xff"],
    ids=["duplicate-key", "array", "truncated", "nan", "not-utf8"],
)
def test_malformed_json_is_rejected(text: str | bytes) -> None:
    with pytest.raises(InvalidLimits):
        BindingLimits.from_json(text)


@pytest.mark.parametrize("value", [True, "4", 4.0, None])
def test_integers_are_strict(value: object) -> None:
    with pytest.raises(InvalidLimits, match="maxResults"):
        BindingLimits.from_dict({"maxResults": value, "maxDocumentBytes": 1, "maxTotalBytes": 1})


def test_direct_construction_never_leaks_a_pydantic_validation_error() -> None:
    with pytest.raises(InvalidLimits, match=r"max_results|maxResults"):
        BindingLimits(max_results="four")  # type: ignore[arg-type]
    with pytest.raises(ResponseDrift):
        CitedDocument(citation="x", source_digest="x", content="x", byte_count=1)  # type: ignore[arg-type]


def test_models_are_frozen() -> None:
    binding = make_binding()
    with pytest.raises(Exception, match="frozen"):
        binding.package_id = "other/pkg"  # type: ignore[misc]


def test_limits_default_to_the_caps() -> None:
    assert BindingLimits().to_dict() == {"maxResults": 4, "maxDocumentBytes": 6144, "maxTotalBytes": 6144}
    assert make_binding().limits == BindingLimits()


def test_create_computes_the_golden_capability_snapshot_digest() -> None:
    binding = PackageBinding.create(**GOLDEN)
    assert binding.capability_snapshot_digest == GOLDEN_CAPABILITY_DIGEST
    assert binding.knowledge.lifecycle_generation == 7
    assert binding.knowledge.generation_digest == GOLDEN["generation_digest"]


# The digests' exact bytes are pinned by fixed vectors in test_digest_vectors.py; these check the behaviour around.


def test_request_digest_pins_the_limits() -> None:
    wide = ContextRequest.create("s-1", "q", make_binding())
    narrow = ContextRequest.create("s-1", "q", make_binding(limits=BindingLimits(max_results=2)))
    assert wide.request_digest != narrow.request_digest
    assert narrow.request_digest == narrow.expected_request_digest()


def test_citation_sorts_its_evidence_ids() -> None:
    ids = sorted((sha256_digest(b"a"), sha256_digest(b"b")), reverse=True)
    citation = Citation.create(make_binding(), document_path="a/b.md", heading="H", evidence_ids=ids)
    assert list(citation.evidence_ids) == sorted(ids) != ids
    assert citation.digest_hex == citation.citation_digest.removeprefix("sha256:")


def test_document_create_computes_source_digest_and_utf8_byte_count() -> None:
    citation = make_response().documents[0].citation
    document = CitedDocument.create(citation, "é✓")
    assert document.byte_count == 5
    assert document.source_digest == sha256_digest("é✓".encode())


def test_with_limits_and_same_generation() -> None:
    binding = make_binding()
    smaller = binding.with_limits(BindingLimits(max_results=1))
    assert smaller != binding
    assert binding.same_generation(smaller)
    assert not binding.same_generation(make_binding(lifecycle_generation=8))


def test_every_error_is_a_cognitive_context_error() -> None:
    assert all(issubclass(error, CognitiveContextError) for error in ERROR_OF.values())
