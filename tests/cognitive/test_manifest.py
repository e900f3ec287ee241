"""``cognitive-package.json`` is read strictly: whatever it holds that is not exactly the five keys fails closed.

Each bad manifest below raises :class:`ProviderFailure` (the cognitive module's typed failure) naming the file and
the problem, when the provider is built: nothing is served.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from ctxbudget.cognitive import FolderKnowledgeProvider, PackageManifest
from ctxbudget.cognitive.folder import MANIFEST_NAME
from ctxbudget.errors import ProviderFailure

from .helpers import MANIFEST


def package(root: Path, manifest_text: str | None) -> Path:
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalpha", encoding="utf-8")
    if manifest_text is not None:
        (root / MANIFEST_NAME).write_text(manifest_text, encoding="utf-8")
    return root


def test_a_good_manifest_still_reads(tmp_path: Path) -> None:
    root = package(tmp_path / "p", json.dumps(MANIFEST))
    assert FolderKnowledgeProvider(root).manifest == PackageManifest(
        "acme/notes", "1.0.0", 3, "domain-knowledge", "0.2"
    )


def test_a_manifest_nested_deeper_than_the_parser_recurses_is_a_provider_failure(tmp_path: Path) -> None:
    text = '{"packageId": ' + "[" * 100_000 + "]" * 100_000 + "}"
    root = package(tmp_path / "p", text)
    with pytest.raises(ProviderFailure, match=rf"^package manifest .*{MANIFEST_NAME}: cannot be read as JSON"):
        FolderKnowledgeProvider(root)


@pytest.mark.parametrize("key", list(MANIFEST))
def test_a_key_given_twice_is_refused_naming_the_key(tmp_path: Path, key: str) -> None:
    # "last wins" would let two readers of one manifest disagree on the package identity
    text = json.dumps({key: MANIFEST[key]})[:-1] + ", " + json.dumps(MANIFEST)[1:]
    root = package(tmp_path / "p", text)
    with pytest.raises(ProviderFailure, match=rf"{MANIFEST_NAME}: cannot be read as JSON \(duplicate key '{key}'\)"):
        FolderKnowledgeProvider(root)


def test_nan_is_not_a_manifest_value(tmp_path: Path) -> None:
    root = package(tmp_path / "p", json.dumps(MANIFEST).replace("3", "NaN"))
    with pytest.raises(ProviderFailure, match="NaN is not JSON"):
        FolderKnowledgeProvider(root)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_manifest_is_refused_without_blocking(tmp_path: Path) -> None:
    # Opened for a blocking read, a FIFO with no writer never returns: the build would hang forever.
    root = package(tmp_path / "p", None)
    os.mkfifo(root / MANIFEST_NAME)
    with pytest.raises(ProviderFailure, match=rf"^package manifest .*{MANIFEST_NAME}: is not a regular file$"):
        FolderKnowledgeProvider(root)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_manifest_linked_to_a_fifo_inside_the_folder_is_refused(tmp_path: Path) -> None:
    root = package(tmp_path / "p", None)
    os.mkfifo(root / "pipe")
    (root / MANIFEST_NAME).symlink_to("pipe")
    with pytest.raises(ProviderFailure, match="is not a regular file"):
        FolderKnowledgeProvider(root)


def test_a_directory_named_like_the_manifest_is_refused(tmp_path: Path) -> None:
    root = package(tmp_path / "p", None)
    (root / MANIFEST_NAME).mkdir()
    with pytest.raises(ProviderFailure, match=rf"{MANIFEST_NAME}: (is not a regular file|cannot be read)"):
        FolderKnowledgeProvider(root)
