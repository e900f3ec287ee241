"""The canonical digest, exactly as the contract frames it, and the plain sha256 digest."""

from __future__ import annotations

import hashlib
import json
import struct

import pytest
from ctxbudget.cognitive import CAPABILITY_SNAPSHOT_DOMAIN, canonical_digest, canonical_json, sha256_digest
from ctxbudget.errors import UsageError
from hypothesis import given
from hypothesis import strategies as st

from .helpers import GOLDEN, GOLDEN_CAPABILITY_DIGEST

GOLDEN_ARRAY = [
    GOLDEN["package_id"],
    GOLDEN["package_version"],
    GOLDEN["lifecycle_generation"],
    GOLDEN["generation_digest"],
    GOLDEN["surface_id"],
    GOLDEN["format_version"],
    GOLDEN["content_digest"],
]

json_leaves = st.none() | st.booleans() | st.integers(min_value=0, max_value=2**64 - 1) | st.text()
json_values = st.recursive(
    json_leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4)
)


def test_golden_capability_snapshot_vector_from_a3s_matches_exactly() -> None:
    assert canonical_digest(CAPABILITY_SNAPSHOT_DOMAIN, GOLDEN_ARRAY) == GOLDEN_CAPABILITY_DIGEST


def test_the_digest_is_sha256_over_prefix_length_framed_domain_and_json() -> None:
    domain = "d.v1"
    body = b'["a",1]'
    framed = b"agentic-ontology-canonical-v1\0" + struct.pack(">Q", 4) + b"d.v1" + struct.pack(">Q", 7) + body
    assert canonical_digest(domain, ["a", 1]) == "sha256:" + hashlib.sha256(framed).hexdigest()


def test_canonical_json_is_compact_utf8_and_keeps_key_order() -> None:
    assert canonical_json(["é ✓", {"b": 1, "a": [True, None]}]) == '["é ✓",{"b":1,"a":[true,null]}]'.encode()


def test_canonical_json_escapes_control_characters_like_serde_json() -> None:
    assert canonical_json(["\n\t\x01\x7f"]) == b'["\\n\\t\\u0001\x7f"]'


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ([1.5], "float"),
        ("not an array", "JSON array"),
        ({"a": 1}, "JSON array"),
        ([{1: "x"}], "non-string key"),
        ([b"bytes"], "bytes"),
        (["\ud800"], "lone surrogate"),
    ],
)
def test_values_without_a_portable_canonical_form_are_refused(value: object, fragment: str) -> None:
    with pytest.raises(UsageError, match=fragment):
        canonical_digest("d", value)  # type: ignore[arg-type]


def test_sha256_digest_has_no_domain() -> None:
    assert sha256_digest(b"") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def _frame(domain: bytes, body: bytes) -> bytes:
    """The contract's framing, written out here with struct (not the library's code)."""
    prefix = b"agentic-ontology-canonical-v1\x00"
    return prefix + struct.pack(">Q", len(domain)) + domain + struct.pack(">Q", len(body)) + body


def _framed(domain: bytes, body: bytes) -> str:
    return "sha256:" + hashlib.sha256(_frame(domain, body)).hexdigest()


def test_framing_vector_counts_utf8_bytes_big_endian() -> None:
    """A fixed vector: the lengths are UTF-8 byte counts (not characters), as 8-byte big-endian integers."""
    body = '["é",7,"x"]'.encode()
    framed = (
        b"agentic-ontology-canonical-v1\x00"
        + b"\x00\x00\x00\x00\x00\x00\x00\x03"  # len("dé") in UTF-8 bytes: 3, not 2
        + b"d\xc3\xa9"
        + b"\x00\x00\x00\x00\x00\x00\x00\x0c"  # len(body): 12 bytes for 11 characters
        + b'["\xc3\xa9",7,"x"]'
    )
    assert len(body) == 12
    assert framed == _frame("dé".encode(), body)
    expected = "sha256:79ce32e2327337dabc86fd14b0abcd24c2863ff226f140bd9564af6fccb0bf46"
    assert "sha256:" + hashlib.sha256(framed).hexdigest() == expected
    assert canonical_json(["é", 7, "x"]) == body
    assert canonical_digest("dé", ["é", 7, "x"]) == expected


@given(st.lists(json_values, max_size=5), st.text(min_size=1))
def test_digest_is_deterministic_and_equals_the_json_framing(value: list[object], domain: str) -> None:
    domain = domain.encode("utf-8", "replace").decode()
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert canonical_json(value) == body
    assert canonical_digest(domain, value) == _framed(domain.encode("utf-8"), body)
    assert canonical_digest(domain, value) == canonical_digest(domain, list(value))
    assert json.loads(canonical_json(value)) == value


@given(st.lists(json_values, max_size=3), st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8))
def test_domains_separate_digests(value: list[object], left: str, right: str) -> None:
    left, right = left.encode("utf-8", "replace").decode(), right.encode("utf-8", "replace").decode()
    assert (canonical_digest(left, value) == canonical_digest(right, value)) == (left == right)
