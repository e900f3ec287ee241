"""The README and the pages in docs/: their Python examples run exactly as written, their links resolve, and the
README stays short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
MAX_README_BYTES = 15_000
TABLES = ("benchmark-table", "plain-chat-table", "quality-table", "external-kit-table", "real-transcripts-table")
"""The Benchmarks section's generated tables, each between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``."""


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)


BLOCKS = _python_blocks(README)
DOC_BLOCKS = [(page, i, block) for page in PAGES for i, block in enumerate(_python_blocks(page))]


def _run(block: str, path: Path) -> None:
    exec(compile(block, str(path), "exec"), {"__name__": "__readme__"})


def test_the_readme_has_the_core_langchain_and_llamaindex_examples() -> None:
    assert len(BLOCKS) >= 3
    assert any("langchain_ctxbudget" in block for block in BLOCKS)
    assert any("llamaindex_ctxbudget" in block for block in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(block: str) -> None:
    _run(block, README)


@pytest.mark.parametrize(
    ("page", "block"),
    [(page, block) for page, _, block in DOC_BLOCKS],
    ids=[f"{page.stem}-block{i}" for page, i, _ in DOC_BLOCKS],
)
def test_docs_example_runs(page: Path, block: str) -> None:
    _run(block, page)


def test_the_docs_have_pages_with_examples() -> None:
    assert {"architecture", "benchmarks", "cli", "core", "langchain", "llamaindex", "shared-sessions"} <= {
        page.stem for page in PAGES
    }
    assert {page.stem for page, _, _ in DOC_BLOCKS} >= {"core", "llamaindex", "shared-sessions"}


def test_every_python_fence_is_executed() -> None:
    """A block fenced as ``python`` with anything after it (``python-skip``, ``python title=...``) would not run."""
    for path in [README, *PAGES]:
        fences = re.findall(r"^```(python\S*.*)$", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
        assert set(fences) <= {"python"}, f"{path.name}: {fences}"


def test_the_readme_is_short() -> None:
    size = len(README.read_bytes())
    assert size <= MAX_README_BYTES, f"README.md is {size:,} bytes; move detail into docs/ (limit {MAX_README_BYTES:,})"


def test_the_readme_uses_no_term_it_does_not_explain() -> None:
    """These are explained in docs/notebooks.md and docs/architecture.md, not in the README."""
    text = README.read_text(encoding="utf-8").lower()
    for term in ("fragment", "planner", "cognitive", "a3s"):
        assert term not in text, f"the README says {term!r} without explaining it"


def test_the_readme_links_every_docs_page() -> None:
    links = {target.split("#")[0] for target in _links(README)}
    assert {f"docs/{page.name}" for page in PAGES} <= links


def test_the_benchmarks_section_has_the_table_markers() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Benchmarks\n")
    section = text[start : text.index("\n## ", start + 1)]
    for name in TABLES:
        opening, closing = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        assert text.count(opening) == text.count(closing) == 1, name
        assert -1 < section.find(opening) < section.find(closing), f"{name} is not in the Benchmarks section"


# -- links ---------------------------------------------------------------------------------------------------------


def _without_code_fences(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)


def _links(path: Path) -> list[str]:
    """The targets of ``[text](target)`` links outside code blocks (the text may span lines and hold code)."""
    return re.findall(r"\[[^\[\]]*\]\(([^)\s]+)\)", _without_code_fences(path.read_text(encoding="utf-8")))


def _anchors(path: Path) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", _without_code_fences(path.read_text(encoding="utf-8")), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def _is_external(target: str) -> bool:
    return re.match(r"^[a-z][a-z0-9+.-]*:", target) is not None  # https:, mailto:, ...


LINKS = [(path, target) for path in [README, *PAGES] for target in _links(path) if not _is_external(target)]


def test_the_pages_have_relative_links() -> None:
    assert len([1 for path, _ in LINKS if path == README]) >= 8
    assert {path for path, _ in LINKS} >= {README, *PAGES}


@pytest.mark.parametrize(
    ("path", "target"), LINKS, ids=[f"{path.relative_to(ROOT)}->{target}" for path, target in LINKS]
)
def test_every_relative_link_resolves(path: Path, target: str) -> None:
    file, _, anchor = target.partition("#")
    linked = (path.parent / file).resolve() if file else path
    assert linked.exists(), f"{path.relative_to(ROOT)} links to {target}, which does not exist"
    assert linked.is_relative_to(ROOT), f"{path.relative_to(ROOT)} links outside the repository: {target}"
    if anchor and linked.suffix == ".md":
        assert anchor in _anchors(linked), f"{path.relative_to(ROOT)} links to {target}: no such heading"


# -- install -------------------------------------------------------------------------------------------------------


def _install_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Install\n")
    return text[start : text.index("\n## ", start + 1)]


def _extras() -> list[str]:
    pyproject = (README.parent / "pyproject.toml").read_text(encoding="utf-8")
    table = pyproject.split("[project.optional-dependencies]\n", 1)[1].split("\n[", 1)[0]
    return re.findall(r"^([A-Za-z0-9_-]+) = ", table, flags=re.MULTILINE)


def test_the_install_section_lists_every_extra_with_what_needs_it() -> None:
    section = _install_section()
    extras = _extras()
    assert {"langchain", "llamaindex", "redis", "cli", "all", "dev"} <= set(extras)
    for extra in extras:
        assert f"\n| `{extra}` | " in section, f"extra {extra!r} is not in the README's install table"


def test_the_install_commands_work_without_a_package_index_entry() -> None:
    section = _install_section()
    commands = [line.split("#")[0].strip() for block in re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
                for line in block.splitlines()]  # fmt: skip
    assert 'pip install -e ".[all]"' in commands  # from a clone
    assert any(c.startswith("pip wheel .") for c in commands)  # a wheel, built locally
    assert any(c.startswith('pip install "dist/ctxbudget-') and c.endswith('.whl[langchain]"') for c in commands)
    assert not [c for c in commands if c.startswith(("pip install ctxbudget", 'pip install "ctxbudget'))], (
        "not published yet: an index install may be mentioned, not given as a command"
    )
