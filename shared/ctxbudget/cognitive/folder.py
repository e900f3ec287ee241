"""A reference knowledge provider over a folder of Markdown files: real digests, no service.

A package folder holds ``cognitive-package.json`` and Markdown files::

    {"packageId": "ctxbudget/example-handbook", "packageVersion": "0.1.0", "lifecycleGeneration": 1,
     "surfaceId": "domain-knowledge", "formatVersion": "0.2"}

Exactly those five keys. The documents are every ``*.md`` file under the folder (hidden files and folders
skipped), named by their ``/``-separated relative path.

A package is its folder: a symlink that resolves outside it (a ``leak.md -> ../secret.md``, a ``host.md ->
/etc/hostname``, a ``docs -> /elsewhere`` folder, a linked manifest) fails the build with ProviderFailure naming
the link and its target; nothing it points to is ever served. Links that stay inside the folder are fine: a linked
file is a document under the link's path, and a linked folder is not entered (its files are documents under
their own path already). They are read once, when the provider is built: that
snapshot *is* the generation, so every answer matches the digests it is bound to. The digests (this provider's
own scheme; an A3S Use registry computes its own):

- ``contentDigest = canonical_digest("ctxbudget.folder-package-content.v1", [[path, sha256(bytes)], ...])`` with
  the files sorted by path;
- ``generationDigest = canonical_digest("ctxbudget.folder-package-generation.v1", [packageId, packageVersion,
  lifecycleGeneration, surfaceId, formatVersion, contentDigest])``.

Editing a file therefore changes both digests and the binding: a session resumed with the edited folder is
rejected until the host binds the new generation.

Search is lexical and deterministic (see :mod:`ctxbudget.cognitive._markdown`): sections are ranked by score, then
path, then position; each result's heading is its section's heading and its evidenceIds are the sorted sha256
digests of the matching paragraphs. Limits are honoured: at most ``maxResults`` sections, each cut at a UTF-8
boundary to ``maxDocumentBytes`` and to what is left of ``maxTotalBytes``; the response's ``truncated`` is set
when anything was cut or a matching section was left out. A query with no match fails with ProviderFailure (a
response must hold at least one document; nothing unrelated is returned instead).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from ..errors import ProviderFailure
from ._markdown import Section, query_terms, split_sections, utf8_prefix
from ._wire import strict_loads
from .digest import canonical_digest, sha256_digest
from .models import BindingLimits, Citation, CitedDocument, ContextRequest, ContextResponse, PackageBinding
from .validation import MAX_EVIDENCE_IDS, document_path_problem, validate_request

__all__ = [
    "CONTENT_DIGEST_DOMAIN",
    "GENERATION_DIGEST_DOMAIN",
    "MANIFEST_NAME",
    "FolderKnowledgeProvider",
    "PackageManifest",
    "example_package_path",
]

MANIFEST_NAME = "cognitive-package.json"
"""The manifest file of a package folder."""

CONTENT_DIGEST_DOMAIN = "ctxbudget.folder-package-content.v1"
"""Digest domain of a folder package's contentDigest."""

GENERATION_DIGEST_DOMAIN = "ctxbudget.folder-package-generation.v1"
"""Digest domain of a folder package's generationDigest."""

_MANIFEST_TYPES: dict[str, type] = {
    "packageId": str,
    "packageVersion": str,
    "lifecycleGeneration": int,
    "surfaceId": str,
    "formatVersion": str,
}


def example_package_path() -> Path:
    """Return the folder of the small example package shipped with ctxbudget (a handbook about ctxbudget)."""
    return Path(__file__).resolve().parent / "example_package"


@dataclass(frozen=True)
class PackageManifest:
    """The identity a package folder declares in ``cognitive-package.json``."""

    package_id: str
    package_version: str
    lifecycle_generation: int
    surface_id: str
    format_version: str

    @classmethod
    def read(cls, path: Path) -> PackageManifest:
        """Read and shape-check a manifest file.

        Args:
            path: the manifest file.

        Returns:
            The manifest (its values are checked when the binding is built).

        Raises:
            ProviderFailure: the file is missing, not a regular file (a FIFO or a device is never opened for a
                blocking read), not UTF-8 JSON (a key given twice, NaN or nesting too deep for the parser included),
                or not exactly the five typed keys.
        """
        text = _read_regular_file(path, f"package manifest {path}")
        try:
            data: Any = strict_loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than json can recurse
            raise ProviderFailure(f"package manifest {path}: cannot be read as JSON ({exc})") from None
        if not isinstance(data, dict) or set(data) != set(_MANIFEST_TYPES):
            keys = sorted(data) if isinstance(data, dict) else type(data).__name__
            raise ProviderFailure(f"package manifest {path}: must hold exactly {list(_MANIFEST_TYPES)}, got {keys}")
        for key, kind in _MANIFEST_TYPES.items():
            if not isinstance(data[key], kind) or isinstance(data[key], bool):
                raise ProviderFailure(f"package manifest {path}: {key} must be a {kind.__name__}")
        return cls(*(data[key] for key in _MANIFEST_TYPES))


class FolderKnowledgeProvider:
    """Serves one generation of a Markdown package folder under the contract.

    Args:
        root: the package folder (with ``cognitive-package.json``).
        name: the provider name; defaults to ``"folder:<packageId>"``.

    Raises:
        ProviderFailure: the manifest or a document cannot be read, a path breaks the documentPath rule, a
            symlink leads out of the folder, or the folder holds no Markdown.
        InvalidBinding: the manifest's values break a binding rule.
    """

    kind: ClassVar[Literal["cognitive"]] = "cognitive"

    def __init__(self, root: str | os.PathLike[str], *, name: str | None = None) -> None:
        self._root = Path(root)
        _refuse_escape(self._root / MANIFEST_NAME, self._root.resolve(), f"package manifest {MANIFEST_NAME!r}")
        self._manifest = PackageManifest.read(self._root / MANIFEST_NAME)
        self._documents = _read_documents(self._root)
        self._sections = [section for path, text in self._documents.items() for section in split_sections(path, text)]
        self._identity = self.binding()
        self._name = name if name is not None else f"folder:{self._manifest.package_id}"

    @property
    def name(self) -> str:
        """The provider name."""
        return self._name

    @property
    def manifest(self) -> PackageManifest:
        """The package's declared identity."""
        return self._manifest

    @property
    def documents(self) -> Mapping[str, str]:
        """The documents of this generation, by relative path."""
        return dict(self._documents)

    @property
    def content_digest(self) -> str:
        """This generation's contentDigest (see the module docstring)."""
        entries = [[path, sha256_digest(text.encode("utf-8"))] for path, text in self._documents.items()]
        return canonical_digest(CONTENT_DIGEST_DOMAIN, entries)

    @property
    def generation_digest(self) -> str:
        """This generation's generationDigest (see the module docstring)."""
        m = self._manifest
        values = [m.package_id, m.package_version, m.lifecycle_generation, m.surface_id, m.format_version]
        return canonical_digest(GENERATION_DIGEST_DOMAIN, [*values, self.content_digest])

    def binding(self, limits: BindingLimits | None = None) -> PackageBinding:
        """Return the exact binding of this generation.

        Args:
            limits: prompt-injection limits; ``None`` means the caps.

        Returns:
            The binding, with real digests.
        """
        m = self._manifest
        return PackageBinding.create(
            package_id=m.package_id,
            package_version=m.package_version,
            lifecycle_generation=m.lifecycle_generation,
            generation_digest=self.generation_digest,
            surface_id=m.surface_id,
            format_version=m.format_version,
            content_digest=self.content_digest,
            limits=limits,
        )

    def query(self, request: ContextRequest) -> ContextResponse:
        """Answer ``request`` with the best-matching sections, within the request's limits.

        Args:
            request: a request bound to this generation (any limits).

        Returns:
            The response.

        Raises:
            InvalidRequest: the request is invalid.
            ProviderFailure: the request is bound to another generation, has no searchable term, or matches
                nothing.
        """
        validate_request(request)
        if not self._identity.same_generation(request.binding):
            raise ProviderFailure(
                f"provider {self._name!r} serves {_identity(self._identity)}, "
                f"the request is bound to {_identity(request.binding)}"
            )
        terms = query_terms(request.query)
        if not terms:
            raise ProviderFailure(f"provider {self._name!r}: the query has no searchable term")
        # Every match is ranked, not just the best maxResults (heapq.nlargest): repeats of a citation are skipped
        # and do not count toward maxResults, so no fixed prefix of the ranking is known to be enough.
        scored = [(section.score(terms), section) for section in self._sections]
        ranked = [s for score, s in sorted(scored, key=lambda pair: (-pair[0], pair[1].path, pair[1].index)) if score]
        if not ranked:
            raise ProviderFailure(f"provider {self._name!r}: no section of {_identity(self._identity)} matches")
        return self._answer(request, ranked, terms)

    async def aquery(self, request: ContextRequest) -> ContextResponse:
        """Async :meth:`query` (the search is in memory, so it does not block)."""
        return self.query(request)

    def _answer(self, request: ContextRequest, ranked: list[Section], terms: frozenset[str]) -> ContextResponse:
        """Cite the ranked sections in order, within the limits, each distinct citation once.

        A citationDigest is the injective canonical digest of the binding's identity (fixed per request) and the
        section's path, heading and sorted evidenceIds, so that triple is the duplicate key, checked *before* a
        citation is built: only returned sections get one, never more than ``maxResults``. A section repeating the
        path, heading and text of one already looked at is skipped before even its evidence is hashed (its text
        fixes its paragraphs, hence its key). Building and then discarding a digest-checked citation per repeat
        made a 1 MB package of one repeated heading take seconds per query. The limit checks still run first for
        every section, in order, so ``truncated`` and where the answer stops are unchanged.
        """
        limits = request.binding.limits
        documents: list[CitedDocument] = []
        seen: set[tuple[str, str, tuple[str, ...]]] = set()
        looked_at: set[tuple[str, str, str]] = set()
        remaining = limits.max_total_bytes
        truncated = False
        for section in ranked:
            if len(documents) == limits.max_results or remaining <= 0:
                truncated = True
                break
            content = utf8_prefix(section.text, min(limits.max_document_bytes, remaining))
            if not content:
                truncated = True
                break
            truncated = truncated or content != section.text
            shape = (section.path, section.heading, section.text)
            if shape in looked_at:  # a repeat of a section already cited or skipped: the same citation again
                continue
            looked_at.add(shape)
            evidence = _evidence(section, terms)
            key = (section.path, section.heading, tuple(evidence))
            if key in seen:  # same path, heading and evidence: the same citationDigest, so the same citation
                continue
            seen.add(key)
            citation = Citation.create(
                request.binding, document_path=section.path, heading=section.heading, evidence_ids=evidence
            )
            document = CitedDocument.create(citation, content)
            documents.append(document)
            remaining -= document.byte_count
        return ContextResponse.create(request, documents, truncated=truncated)

    def __repr__(self) -> str:
        return f"FolderKnowledgeProvider({str(self._root)!r}, {_identity(self._identity)})"


def _evidence(section: Section, terms: frozenset[str]) -> list[str]:
    digests = {sha256_digest(paragraph.encode("utf-8")) for paragraph in section.matching_paragraphs(terms)}
    return sorted(digests)[:MAX_EVIDENCE_IDS]


def _identity(binding: PackageBinding) -> str:
    return (
        f"{binding.package_id}@{binding.package_version} generation {binding.lifecycle_generation} "
        f"({binding.generation_digest})"
    )


def _refuse_escape(entry: Path, inside: Path, what: str) -> None:
    """Raise when ``entry`` is a symlink that resolves outside ``inside`` (the resolved package folder)."""
    if not entry.is_symlink():
        return
    try:
        target = entry.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on Python < 3.13
        raise ProviderFailure(f"{what}: a symlink that cannot be resolved ({exc})") from None
    if not target.is_relative_to(inside):
        raise ProviderFailure(
            f"{what}: a symlink to {target}, outside the package folder {inside}; a package is its folder, so "
            "nothing outside it is served"
        )


def _read_regular_file(path: Path, what: str) -> str:
    """Read ``path`` as UTF-8, refusing anything but a regular file (after symlinks) without blocking on it.

    The file is opened non-blocking (a FIFO with no writer would block a plain open forever) and checked on the
    open descriptor, so what is checked is what is read.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ProviderFailure(f"{what}: cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise ProviderFailure(f"{what}: is not a regular file")
    with os.fdopen(descriptor, "rb") as file:
        try:
            return file.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ProviderFailure(f"{what}: cannot be read as UTF-8 ({exc})") from None


def _walk_error(exc: OSError) -> None:
    raise ProviderFailure(f"package folder {exc.filename}: cannot be listed ({exc.strerror})")


def _read_documents(root: Path) -> dict[str, str]:
    inside = root.resolve()
    documents: dict[str, str] = {}
    # followlinks=False: a linked folder is never entered; one leading outside is refused below.
    for directory, folders, files in os.walk(root, onerror=_walk_error):
        here = Path(directory)
        folders[:] = [name for name in folders if not name.startswith(".")]
        for name in folders:
            _refuse_escape(here / name, inside, f"package folder entry {(here / name).relative_to(root).as_posix()!r}")
        for name in files:
            if name.startswith(".") or not name.endswith(".md"):
                continue
            file = here / name
            path = file.relative_to(root).as_posix()
            _refuse_escape(file, inside, f"package document {path!r}")
            if file.is_file():
                documents[path] = _read_document(file, path)
    if not documents:
        raise ProviderFailure(f"package folder {root}: holds no Markdown document")
    return dict(sorted(documents.items()))


def _read_document(file: Path, path: str) -> str:
    problem = document_path_problem(path)
    if problem is not None:
        raise ProviderFailure(f"package document {path!r}: documentPath {problem}")
    try:
        return file.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProviderFailure(f"package document {path!r}: cannot be read as UTF-8 ({exc})") from None
