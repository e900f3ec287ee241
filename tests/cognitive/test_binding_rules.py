"""Binding and limit rules: every one violated at least once, each with its typed error and field."""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget.cognitive import BindingLimits, PackageBinding, validate_binding
from ctxbudget.errors import InvalidBinding, InvalidLimits

from .helpers import make_binding, tampered

DIGEST = "sha256:" + "1" * 64


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"package_id": "contra-sense"}, "packageId: 'contra-sense' must be 'publisher/name'"),
        ({"package_id": "a/b/c"}, "packageId"),
        ({"package_id": "Contra/handbook"}, "packageId"),
        ({"package_id": "contra/"}, "packageId"),
        ({"package_id": "contra/hand.book"}, "packageId"),
        ({"package_version": ""}, "packageVersion: must not be empty"),
        ({"package_version": " 0.1.0"}, "packageVersion: ' 0.1.0' must be trimmed"),
        ({"package_version": "0.1\x00"}, "packageVersion: control character U+0000"),
        ({"package_version": "1" * 129}, "packageVersion: is 129 bytes, the limit is 128"),
        ({"lifecycle_generation": 0}, "lifecycleGeneration: must not be 0"),
        ({"lifecycle_generation": 2**64}, "lifecycleGeneration: 18446744073709551616 does not fit"),
        ({"lifecycle_generation": -1}, "lifecycleGeneration"),
        ({"generation_digest": "sha256:" + "A" * 64}, "generationDigest"),
        ({"generation_digest": "sha1:" + "a" * 64}, "generationDigest"),
        ({"content_digest": "sha256:" + "a" * 63}, "knowledge.contentDigest"),
        ({"surface_id": ""}, "knowledge.surfaceId: must not be empty"),
        ({"surface_id": "-knowledge"}, "knowledge.surfaceId: '-knowledge' must start with a letter or digit"),
        ({"surface_id": "knowledge base"}, "knowledge.surfaceId"),
        ({"surface_id": "wissen-ü"}, "knowledge.surfaceId: 'wissen-ü' must be ASCII"),
        ({"surface_id": "k" * 257}, "knowledge.surfaceId: is 257 bytes, the limit is 256"),
        ({"format_version": ""}, "knowledge.formatVersion"),
        ({"format_version": "0.2\n"}, "knowledge.formatVersion"),
        ({"format_version": "v" * 65}, "knowledge.formatVersion: is 65 bytes, the limit is 64"),
    ],
)
def test_binding_field_rules(overrides: dict[str, Any], fragment: str) -> None:
    with pytest.raises(InvalidBinding) as caught:
        make_binding(**overrides)
    assert fragment in str(caught.value)


def test_boundary_values_are_accepted() -> None:
    make_binding(
        package_id="a/b",
        package_version="v" * 128,
        lifecycle_generation=2**64 - 1,
        surface_id="a" + "-._:/@" + "k" * 249,
        format_version="f" * 64,
    )


@pytest.mark.parametrize(
    ("path", "value", "fragment"),
    [
        (("schema",), "a3s.code.cognitive-package-session-binding.v2", "binding.schema"),
        (("knowledge", "schema"), "agentic.ontology.r0-knowledge-lease-binding.v0", "knowledge.schema"),
        (("knowledge", "searchSchema"), "x", "knowledge.searchSchema"),
        (("knowledge", "readSchema"), "x", "knowledge.readSchema"),
        (("knowledge", "citationSchema"), "x", "knowledge.citationSchema"),
        (("knowledge", "lifecycleGeneration"), 8, "knowledge.lifecycleGeneration: 8 differs from the package's 7"),
        (("knowledge", "generationDigest"), DIGEST, "knowledge.generationDigest"),
        (("capabilitySnapshotDigest",), DIGEST, "capabilitySnapshotDigest: " + DIGEST + " does not match"),
        (("packageVersion",), "0.1.1", "capabilitySnapshotDigest"),
        (("knowledge", "surfaceId"), "other-surface", "capabilitySnapshotDigest"),
    ],
)
def test_wire_binding_rules(path: tuple[str, ...], value: object, fragment: str) -> None:
    data = tampered(make_binding().to_dict(), path, value)
    with pytest.raises(InvalidBinding) as caught:
        PackageBinding.from_dict(data)
    assert fragment in str(caught.value)


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("max_results", 0, "maxResults: 0 is out of range, it must be 1..4"),
        ("max_results", 5, "maxResults: 5 is out of range"),
        ("max_document_bytes", 0, "maxDocumentBytes: 0 is out of range, it must be 1..6,144"),
        ("max_document_bytes", 6145, "maxDocumentBytes"),
        ("max_total_bytes", 0, "maxTotalBytes"),
        ("max_total_bytes", 6145, "maxTotalBytes: 6145 is out of range"),
        ("max_results", -1, "maxResults"),
    ],
)
def test_limits_are_one_to_cap(field: str, value: int, fragment: str) -> None:
    with pytest.raises(InvalidLimits) as caught:
        BindingLimits(**{field: value})
    assert fragment in str(caught.value)


def test_smaller_limits_are_a_host_choice() -> None:
    limits = BindingLimits(max_results=1, max_document_bytes=1, max_total_bytes=1)
    assert make_binding(limits=limits).limits == limits


def test_limits_inside_a_binding_keep_their_own_error() -> None:
    data = tampered(make_binding().to_dict(), ("limits", "maxTotalBytes"), 0)
    with pytest.raises(InvalidLimits, match="maxTotalBytes"):
        PackageBinding.from_dict(data)


def test_validate_binding_rechecks_an_unvalidated_copy() -> None:
    forged = make_binding().model_copy(update={"lifecycle_generation": 8})
    with pytest.raises(InvalidBinding, match=r"knowledge.lifecycleGeneration"):
        validate_binding(forged)
