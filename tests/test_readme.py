"""The README's Python examples run, exactly as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_readme_has_the_core_langchain_and_llamaindex_examples() -> None:
    assert len(BLOCKS) >= 3
    assert any("langchain_ctxbudget" in block for block in BLOCKS)
    assert any("llamaindex_ctxbudget" in block for block in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(block: str) -> None:
    exec(compile(block, str(README), "exec"), {"__name__": "__readme__"})


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
