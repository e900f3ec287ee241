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
