"""FolderKnowledgeProvider on packages of repeated sections: one document per distinct citation, few citations built.

A repeat (same path, heading and evidence, hence the same citationDigest) used to be skipped only after its
citation was built, so a package of thousands of identical headings built thousands of citations per query. The
answers must stay exactly what they were; these tests check them against the old algorithm, written out below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ctxbudget.cognitive import (
    BindingLimits,
    Citation,
    CitedDocument,
    ContextRequest,
    ContextResponse,
    FolderKnowledgeProvider,
    sha256_digest,
    validate_response,
)
from ctxbudget.cognitive._markdown import query_terms, split_sections, utf8_prefix
from ctxbudget.cognitive.folder import MANIFEST_NAME

from .helpers import MANIFEST

REPEATED = "# compaction\n"
NOTES = "## Compaction notes\n\nCompaction keeps the budget.\n\nUnrelated.\n"


def write_package(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / MANIFEST_NAME).write_text(json.dumps(MANIFEST), encoding="utf-8")
    for path, text in files.items():
        (root / path).write_text(text, encoding="utf-8")
    return root


def request_for(provider: FolderKnowledgeProvider, query: str, limits: BindingLimits | None = None) -> ContextRequest:
    return ContextRequest.create("s-1", query, provider.binding(limits))


def answer_as_before(provider: FolderKnowledgeProvider, request: ContextRequest) -> ContextResponse:
    """The answer as the provider computed it before repeats were skipped early: a citation for every section."""
    terms = query_terms(request.query)
    sections = [s for path, text in provider.documents.items() for s in split_sections(path, text)]
    scored = sorted(((s.score(terms), s) for s in sections), key=lambda pair: (-pair[0], pair[1].path, pair[1].index))
    limits = request.binding.limits
    documents: list[CitedDocument] = []
    seen: set[str] = set()
    remaining, truncated = limits.max_total_bytes, False
    for section in [s for score, s in scored if score]:
        if len(documents) == limits.max_results or remaining <= 0:
            truncated = True
            break
        content = utf8_prefix(section.text, min(limits.max_document_bytes, remaining))
        if not content:
            truncated = True
            break
        truncated = truncated or content != section.text
        evidence = sorted({sha256_digest(p.encode()) for p in section.matching_paragraphs(terms)})
        citation = Citation.create(
            request.binding, document_path=section.path, heading=section.heading, evidence_ids=evidence
        )
        if citation.citation_digest in seen:
            continue
        seen.add(citation.citation_digest)
        documents.append(CitedDocument.create(citation, content))
        remaining -= documents[-1].byte_count
    return ContextResponse.create(request, documents, truncated=truncated)


@pytest.fixture
def citations_built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the citations the provider builds (their document paths, in order)."""
    built: list[str] = []
    create = Citation.create

    def counting(binding: Any, **fields: Any) -> Citation:
        built.append(fields["document_path"])
        return create(binding, **fields)

    monkeypatch.setattr(Citation, "create", counting)
    return built


def test_a_package_of_one_repeated_heading_answers_one_document_with_one_citation(
    tmp_path: Path, citations_built: list[str]
) -> None:
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", {"a.md": REPEATED * 2000}))
    request = request_for(provider, "compaction")
    response = provider.query(request)
    validate_response(response, request)
    (document,) = response.documents
    assert (document.citation.document_path, document.citation.heading, document.content) == (
        "a.md",
        "compaction",
        "# compaction",
    )
    assert response.truncated is False
    assert citations_built == ["a.md"]


def test_repeats_mixed_with_distinct_sections_give_one_document_per_distinct_section(
    tmp_path: Path, citations_built: list[str]
) -> None:
    files = {"a.md": (REPEATED + NOTES) * 300 + "# Budget\n\ncompaction once\n", "b.md": REPEATED * 300}
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", files))
    request = request_for(provider, "compaction")  # maxResults 4: exactly the distinct sections
    response = provider.query(request)
    validate_response(response, request)
    assert response.truncated is False
    cited = [(d.citation.document_path, d.citation.heading) for d in response.documents]
    assert cited == [
        ("a.md", "Compaction notes"),
        ("a.md", "compaction"),
        ("b.md", "compaction"),
        ("a.md", "Budget"),
    ]
    assert citations_built == [path for path, _ in cited]
    assert response == answer_as_before(provider, request)


def test_citations_built_never_exceed_max_results(tmp_path: Path, citations_built: list[str]) -> None:
    files = {f"n{i}.md": REPEATED * 200 + f"# Note {i}\n\ncompaction\n" for i in range(5)}
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", files))
    request = request_for(provider, "compaction", BindingLimits(max_results=2))
    response = provider.query(request)
    assert len(response.documents) == 2
    assert response.truncated is True
    assert len(citations_built) == 2
    assert response == answer_as_before(provider, request)


def test_same_heading_and_evidence_with_other_text_is_still_the_same_citation(tmp_path: Path) -> None:
    text = "# Budget\n\nbudget rule\n\nfirst aside\n\n# Budget\n\nbudget rule\n\nsecond aside, longer\n"
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", {"a.md": text, "b.md": text}))
    request = request_for(provider, "budget")
    response = provider.query(request)
    assert [(d.citation.document_path, d.content) for d in response.documents] == [
        ("a.md", "# Budget\n\nbudget rule\n\nfirst aside"),
        ("b.md", "# Budget\n\nbudget rule\n\nfirst aside"),
    ]
    assert response == answer_as_before(provider, request)


@pytest.mark.parametrize(
    "limits",
    [
        None,
        BindingLimits(max_results=1),
        BindingLimits(max_results=3),
        BindingLimits(max_document_bytes=10),
        BindingLimits(max_total_bytes=40),
        BindingLimits(max_results=2, max_total_bytes=30, max_document_bytes=12),
    ],
)
@pytest.mark.parametrize("query", ["compaction", "budget", "compaction budget keeps"])
def test_answers_match_the_old_algorithm(tmp_path: Path, limits: BindingLimits | None, query: str) -> None:
    blank_line_variant = NOTES.replace("\n\nUnrelated", "\n  \nUnrelated")  # same paragraphs, other text
    files = {
        "a.md": "preamble budget\n\n" + (REPEATED + NOTES + blank_line_variant) * 20 + "# Budget\n\nbudget é" * 3,
        "b.md": (NOTES + "# Ü budget\n\nbudget budget ééé\n") * 10,
    }
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", files))
    request = request_for(provider, query, limits)
    response = provider.query(request)
    validate_response(response, request)
    assert response.to_json() == answer_as_before(provider, request).to_json()
