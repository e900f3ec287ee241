"""The reference folder provider, end to end with real digests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from ctxbudget.cognitive import (
    BindingLimits,
    CognitiveContextSession,
    ContextRequest,
    FolderKnowledgeProvider,
    PackageBinding,
    canonical_digest,
    check_resume,
    example_package_path,
    sha256_digest,
    validate_response,
)
from ctxbudget.cognitive.folder import CONTENT_DIGEST_DOMAIN, GENERATION_DIGEST_DOMAIN, MANIFEST_NAME
from ctxbudget.errors import BindingMismatchError, InvalidBinding, ProviderFailure

from .helpers import MANIFEST


def write_package(root: Path, files: dict[str, str], manifest: object = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / MANIFEST_NAME).write_text(json.dumps(MANIFEST if manifest is None else manifest), encoding="utf-8")
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


def request_for(provider: FolderKnowledgeProvider, query: str, limits: BindingLimits | None = None) -> ContextRequest:
    return ContextRequest.create("s-1", query, provider.binding(limits))


def test_binding_digests_follow_the_documented_scheme(tmp_path: Path) -> None:
    root = write_package(tmp_path / "pkg", {"b.md": "# B\n\nbeta", "a/x.md": "# X\n\nalpha"})
    binding = FolderKnowledgeProvider(root).binding()
    files = [["a/x.md", sha256_digest(b"# X\n\nalpha")], ["b.md", sha256_digest(b"# B\n\nbeta")]]
    content = canonical_digest(CONTENT_DIGEST_DOMAIN, files)
    generation = canonical_digest(GENERATION_DIGEST_DOMAIN, [*MANIFEST.values(), content])
    assert binding.knowledge.content_digest == content
    assert binding.generation_digest == generation
    assert binding == PackageBinding.create(
        package_id="acme/notes",
        package_version="1.0.0",
        lifecycle_generation=3,
        generation_digest=generation,
        surface_id="domain-knowledge",
        format_version="0.2",
        content_digest=content,
    )


def test_sections_are_cited_with_their_heading_and_matching_paragraph_evidence(tmp_path: Path) -> None:
    text = "# Guide\n\nIntro.\n\n## Budgets\n\nTokens are a budget.\n\nUnrelated.\n\nAnother budget line.\n"
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", {"guide.md": text}))
    request = request_for(provider, "budget")
    response = provider.query(request)
    validate_response(response, request)
    (document,) = response.documents
    assert document.citation.heading == "Budgets"
    assert document.citation.document_path == "guide.md"
    assert document.content == "## Budgets\n\nTokens are a budget.\n\nUnrelated.\n\nAnother budget line."
    expected = sorted(sha256_digest(p.encode()) for p in ["Tokens are a budget.", "Another budget line."])
    assert list(document.citation.evidence_ids) == expected
    assert response.truncated is False


def test_ranking_is_deterministic_and_respects_max_results(tmp_path: Path) -> None:
    files = {f"n{i}.md": f"# Note {i}\n\n" + "budget " * (i + 1) for i in range(6)}
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", files))
    response = provider.query(request_for(provider, "budget", BindingLimits(max_results=2)))
    assert [d.citation.document_path for d in response.documents] == ["n5.md", "n4.md"]
    assert response.truncated is True
    assert provider.query(request_for(provider, "budget", BindingLimits(max_results=2))) == response


def test_a_long_section_is_cut_at_a_utf8_boundary(tmp_path: Path) -> None:
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", {"u.md": "# Ü\n\nbudget " + "é" * 40}))
    response = provider.query(request_for(provider, "budget", BindingLimits(max_document_bytes=20)))
    (document,) = response.documents
    assert document.byte_count <= 20
    assert document.content == "# Ü\n\nbudget ééé"  # 19 bytes: a fourth 'é' would split
    assert response.truncated is True


def test_max_total_bytes_cuts_the_last_document(tmp_path: Path) -> None:
    files = {"a.md": "# A\n\nbudget budget " + "a" * 30, "b.md": "# B\n\nbudget " + "b" * 30}
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", files))
    response = provider.query(request_for(provider, "budget", BindingLimits(max_total_bytes=60)))
    assert sum(d.byte_count for d in response.documents) == 60
    assert [d.citation.document_path for d in response.documents] == ["a.md", "b.md"]
    assert response.truncated is True


def test_it_refuses_a_request_bound_to_another_generation(tmp_path: Path) -> None:
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", {"a.md": "# A\n\nbudget"}))
    edited = FolderKnowledgeProvider(write_package(tmp_path / "q", {"a.md": "# A\n\nbudget!"}))
    with pytest.raises(ProviderFailure, match=r"the request is bound to acme/notes@1.0.0 generation 3"):
        provider.query(request_for(edited, "budget"))


def test_no_match_fails_closed_instead_of_returning_something_unrelated(tmp_path: Path) -> None:
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", {"a.md": "# A\n\nbudget"}))
    with pytest.raises(ProviderFailure, match="no section"):
        provider.query(request_for(provider, "kangaroo"))
    with pytest.raises(ProviderFailure, match="no searchable term"):
        provider.query(request_for(provider, "the a ?"))


def test_headings_inside_code_fences_and_preambles(tmp_path: Path) -> None:
    text = "Preamble budget.\n\n# Real\n\n```\n# not a heading budget\n```\n"
    provider = FolderKnowledgeProvider(write_package(tmp_path / "p", {"doc.md": text}))
    documents = provider.query(request_for(provider, "budget")).documents
    assert [d.citation.heading for d in documents] == ["doc.md", "Real"]  # a tie keeps document order
    assert documents[1].content == "# Real\n\n```\n# not a heading budget\n```"


def test_editing_a_file_is_a_new_generation_and_resume_rejects_it(tmp_path: Path) -> None:
    root = write_package(tmp_path / "p", {"a.md": "# A\n\nbudget"})
    before = FolderKnowledgeProvider(root).binding()
    (root / "a.md").write_text("# A\n\nbudget, edited", encoding="utf-8")
    after = FolderKnowledgeProvider(root).binding()
    with pytest.raises(BindingMismatchError, match="generationDigest"):
        check_resume(before, after)


def test_non_markdown_and_hidden_files_are_not_documents(tmp_path: Path) -> None:
    root = write_package(tmp_path / "p", {"a.md": "# A\n\nx", "notes.txt": "x", ".hidden/b.md": "# B"})
    assert list(FolderKnowledgeProvider(root).documents) == ["a.md"]


@pytest.mark.parametrize(
    ("link", "target"),
    [
        ("leak.md", "../secret.md"),
        ("a/leak.md", "../../secret.md"),
        ("host.md", "/etc/hostname"),
        ("gone.md", "/no/such/file.md"),
    ],
)
def test_a_file_symlink_out_of_the_folder_is_refused(tmp_path: Path, link: str, target: str) -> None:
    (tmp_path / "secret.md").write_text("# Secret\n\nthe password is hunter2", encoding="utf-8")
    root = write_package(tmp_path / "p", {"a/x.md": "# X\n\nsecret password"})
    (root / link).symlink_to(target)
    with pytest.raises(ProviderFailure) as caught:
        FolderKnowledgeProvider(root)
    message = str(caught.value)
    assert message.startswith(f"package document {link!r}: a symlink to ")
    assert "outside the package folder" in message


def test_a_directory_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nthe password is hunter2", encoding="utf-8")
    root = write_package(tmp_path / "p", {"a.md": "# A\n\nx"})
    (root / "docs").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ProviderFailure, match=r"^package folder entry 'docs': a symlink to .*outside the package"):
        FolderKnowledgeProvider(root)


def test_a_manifest_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    root = write_package(tmp_path / "p", {"a.md": "# A\n\nx"})
    (tmp_path / "elsewhere.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    (root / MANIFEST_NAME).unlink()
    (root / MANIFEST_NAME).symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(ProviderFailure, match="outside the package folder"):
        FolderKnowledgeProvider(root)


def test_symlinks_inside_the_folder_are_served(tmp_path: Path) -> None:
    root = write_package(tmp_path / "p", {"a/x.md": "# X\n\nalpha"})
    (root / "alias.md").symlink_to("a/x.md")
    (root / "mirror").symlink_to("a", target_is_directory=True)
    (tmp_path / "secret.md").write_text("# S", encoding="utf-8")
    (root / ".hidden.md").symlink_to("../secret.md")  # hidden: never a document, whatever it points to
    assert FolderKnowledgeProvider(root).documents == {"a/x.md": "# X\n\nalpha", "alias.md": "# X\n\nalpha"}


@pytest.mark.parametrize(
    ("manifest", "fragment"),
    [
        ({**MANIFEST, "extra": 1}, "must hold exactly"),
        ({k: v for k, v in MANIFEST.items() if k != "surfaceId"}, "must hold exactly"),
        ({**MANIFEST, "lifecycleGeneration": "3"}, "lifecycleGeneration must be a int"),
        ([1], "must hold exactly"),
    ],
)
def test_a_malformed_manifest_is_a_provider_failure(tmp_path: Path, manifest: object, fragment: str) -> None:
    with pytest.raises(ProviderFailure, match=fragment):
        FolderKnowledgeProvider(write_package(tmp_path / "p", {"a.md": "# A"}, manifest))


def test_manifest_values_follow_the_binding_rules(tmp_path: Path) -> None:
    with pytest.raises(InvalidBinding, match="packageId"):
        FolderKnowledgeProvider(write_package(tmp_path / "p", {"a.md": "# A"}, {**MANIFEST, "packageId": "Acme"}))


def test_a_path_breaking_the_document_path_rule_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ProviderFailure, match="must not contain a backslash"):
        FolderKnowledgeProvider(write_package(tmp_path / "p", {"a\\b.md": "# A"}))


def test_missing_manifest_or_documents(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ProviderFailure, match="cannot be read"):
        FolderKnowledgeProvider(tmp_path / "empty")
    with pytest.raises(ProviderFailure, match="no Markdown"):
        FolderKnowledgeProvider(write_package(tmp_path / "p", {}))


def test_the_example_package_end_to_end_through_a_session() -> None:
    provider = FolderKnowledgeProvider(example_package_path())
    assert provider.name == "folder:ctxbudget/example-handbook"
    events: list[str] = []
    cognitive = CognitiveContextSession(provider.binding(), provider, on_event=lambda n, p: events.append(n))
    items = cognitive.retrieve("what happens on generation drift?", session_id="demo-1")
    assert events == ["cognitive_context_bound"]
    assert items[0].metadata["citation"]["documentPath"] == "citations.md"
    assert items[0].metadata["citation"]["heading"] == "Failing closed"
    assert items[0].content.startswith("[cognitive citation=sha256:")


async def test_the_example_package_async(tmp_path: Path) -> None:
    root = shutil.copytree(example_package_path(), tmp_path / "copy")
    provider = FolderKnowledgeProvider(root)
    assert provider.binding() == FolderKnowledgeProvider(example_package_path()).binding()
    items = await CognitiveContextSession(provider.binding(), provider).aretrieve("compaction", session_id="d")
    assert items
