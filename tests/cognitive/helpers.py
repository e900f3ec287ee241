"""Shared builders for the cognitive-binding specification tests."""

from __future__ import annotations

import copy
from typing import Any

from ctxbudget.cognitive import (
    BindingLimits,
    Citation,
    CitedDocument,
    ContextRequest,
    ContextResponse,
    PackageBinding,
    sha256_digest,
)

GOLDEN = {
    "package_id": "contra-sense/handbook",
    "package_version": "0.1.0",
    "lifecycle_generation": 7,
    "generation_digest": "sha256:aa0beeb62f1b7b21bf70f21e6f0e858a1e4b720d313f0907209b5b9dad2eeb20",
    "surface_id": "domain-knowledge",
    "format_version": "0.2",
    "content_digest": "sha256:1def786da6d190b7b3ce0176e71d99ff1cac3f8c8cc7c0f8b76a893c544e7a90",
}
GOLDEN_CAPABILITY_DIGEST = "sha256:1e0f0a0162f5b290887ade8886af69fbba4548c863df026178e3550c77813455"
SESSION_ID = "session-1"
QUERY = "how are context budgets planned?"


MANIFEST = {
    "packageId": "acme/notes",
    "packageVersion": "1.0.0",
    "lifecycleGeneration": 3,
    "surfaceId": "domain-knowledge",
    "formatVersion": "0.2",
}
"""A package manifest's five keys, valid (tests vary one at a time)."""


def make_binding(limits: BindingLimits | None = None, **overrides: Any) -> PackageBinding:
    return PackageBinding.create(**{**GOLDEN, **overrides}, limits=limits)


def make_request(binding: PackageBinding | None = None, query: str = QUERY) -> ContextRequest:
    return ContextRequest.create(SESSION_ID, query, binding or make_binding())


def evidence(*texts: str) -> list[str]:
    return sorted(sha256_digest(text.encode()) for text in texts)


def make_document(
    binding: PackageBinding, path: str = "guide/budgets.md", heading: str = "Budgets", content: str = "Budgets."
) -> CitedDocument:
    citation = Citation.create(binding, document_path=path, heading=heading, evidence_ids=evidence(content))
    return CitedDocument.create(citation, content)


def make_response(request: ContextRequest | None = None) -> ContextResponse:
    request = request or make_request()
    documents = [
        make_document(request.binding),
        make_document(request.binding, "guide/compaction.md", "Compaction", "Compaction keeps sessions going — ✓."),
    ]
    return ContextResponse.create(request, documents)


def tampered(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """Return a deep copy of ``data`` with the leaf at ``path`` set to ``value``."""
    out = copy.deepcopy(data)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return out


class StaticProvider:
    """Answers every request with ``answer(request)``; records the calls."""

    def __init__(self, answer: Any = None, name: str = "static") -> None:
        self._answer = answer if answer is not None else make_response
        self.name = name
        self.calls: list[ContextRequest] = []

    def query(self, request: ContextRequest) -> Any:
        self.calls.append(request)
        return self._answer(request)


class AsyncStaticProvider:
    def __init__(self, answer: Any = None, name: str = "async-static") -> None:
        self._answer = answer if answer is not None else make_response
        self.name = name
        self.calls: list[ContextRequest] = []

    async def aquery(self, request: ContextRequest) -> Any:
        self.calls.append(request)
        return self._answer(request)
