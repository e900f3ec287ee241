"""Fixed byte-level vectors for requestDigest and citationDigest, independent of the library's own serializer.

Each ``J`` is the literal compact JSON array the spec describes (fields in the spec's order, a nested binding as an
object with camelCase keys in declaration order), written out by hand. The expected digest is computed here with
hashlib and struct, following the spec's framing, and pinned as a hex string too: the library must produce exactly
that digest, so a change to key order, escaping, spacing, field order or framing fails these tests.
"""

from __future__ import annotations

import hashlib
import struct

import pytest
from ctxbudget.cognitive import BindingLimits, Citation, ContextRequest

from .helpers import make_binding

G = "sha256:aa0beeb62f1b7b21bf70f21e6f0e858a1e4b720d313f0907209b5b9dad2eeb20"
C = "sha256:1def786da6d190b7b3ce0176e71d99ff1cac3f8c8cc7c0f8b76a893c544e7a90"
CAPABILITY = "sha256:1e0f0a0162f5b290887ade8886af69fbba4548c863df026178e3550c77813455"


def frame_digest(domain: str, body: bytes) -> str:
    """``sha256(b"agentic-ontology-canonical-v1\\0" + u64_be(len(domain)) + domain + u64_be(len(J)) + J)``."""
    d = domain.encode("utf-8")
    framed = b"agentic-ontology-canonical-v1\x00" + struct.pack(">Q", len(d)) + d + struct.pack(">Q", len(body)) + body
    return "sha256:" + hashlib.sha256(framed).hexdigest()


def binding_json(max_results: int) -> str:
    """The PackageBinding object: the spec's key order, knowledge nested, limits last."""
    return (
        '{"schema":"a3s.code.cognitive-package-session-binding.v1",'
        '"packageId":"contra-sense/handbook","packageVersion":"0.1.0","lifecycleGeneration":7,'
        f'"generationDigest":"{G}","capabilitySnapshotDigest":"{CAPABILITY}",'
        '"knowledge":{"schema":"agentic.ontology.r0-knowledge-lease-binding.v1","surfaceId":"domain-knowledge",'
        f'"formatVersion":"0.2","contentDigest":"{C}",'
        '"searchSchema":"a3s.use.okf-knowledge-search-request.v1",'
        '"readSchema":"a3s.use.okf-knowledge-read-request.v1",'
        '"citationSchema":"a3s.use.okf-knowledge-citation.v1",'
        f'"lifecycleGeneration":7,"generationDigest":"{G}"}},'
        f'"limits":{{"maxResults":{max_results},"maxDocumentBytes":6144,"maxTotalBytes":6144}}}}'
    )


# The query holds a quote, a newline, a tab and a non-ASCII letter: JSON escapes the first three, writes é as UTF-8.
QUERY = 'what is "é"?\n\tnext'
QUERY_JSON = r'"what is \"é\"?\n\tnext"'


@pytest.mark.parametrize(
    ("max_results", "pinned"),
    [
        (4, "sha256:f9e7d98c5fe1d0b5e401108bc5762bed44185209e64ef3d7e8790a220cf078c7"),
        (2, "sha256:1ff909bb2ded67aca177f4130bf9b716f142519cdc5ad81fec3c0557842bce54"),
    ],
)
def test_request_digest_vector(max_results: int, pinned: str) -> None:
    body = f'["a3s.code.cognitive-context-request.v1","s-1",{QUERY_JSON},{binding_json(max_results)}]'.encode()
    expected = frame_digest("a3s.code.cognitive-context-request.v1", body)
    assert expected == pinned
    binding = make_binding(limits=BindingLimits(max_results=max_results))
    assert binding.capability_snapshot_digest == CAPABILITY
    request = ContextRequest.create("s-1", QUERY, binding)
    assert request.request_digest == expected
    assert request.expected_request_digest() == expected


def test_the_request_vector_json_is_the_wire_binding() -> None:
    """The hand-written binding object is the binding's own wire JSON, byte for byte (order and spacing)."""
    assert make_binding().to_json() == binding_json(4)


def test_citation_digest_vector() -> None:
    low, high = "sha256:" + "0" * 64, "sha256:" + "f" * 64
    body = (
        f'["contra-sense/handbook","0.1.0",7,"{G}","domain-knowledge","{C}","docs/a é.md","Héading",["{low}","{high}"]]'
    ).encode()
    assert b"docs/a \xc3\xa9.md" in body  # UTF-8, not \u escapes
    expected = frame_digest("a3s.use.okf-knowledge-citation.v1", body)
    assert expected == "sha256:cc190b6d861df470b9e09945f0c53019ab5fd5e21fe75e8ded3596de1c129294"
    # Evidence given out of order: the citation sorts it, and the digest covers the sorted array.
    citation = Citation.create(make_binding(), document_path="docs/a é.md", heading="Héading", evidence_ids=[high, low])
    assert citation.citation_digest == expected
    assert citation.expected_citation_digest() == expected
