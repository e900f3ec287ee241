"""The core imports no framework; each adapter imports only its framework's core package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "ctxbudget": ROOT / "shared" / "ctxbudget",
    "langchain_ctxbudget": ROOT / "langchain_ctxbudget",
    "llamaindex_ctxbudget": ROOT / "llamaindex_ctxbudget",
}
FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "llama_index")
ALLOWED = {
    "ctxbudget": (),
    # langchain.agents.middleware is the one place create_agent's middleware API lives.
    "langchain_ctxbudget": ("langchain_core", "langchain.agents", "langgraph"),
    "llamaindex_ctxbudget": ("llama_index.core",),
}


def _imports(package: str) -> list[tuple[str, str]]:
    found = []
    for path in sorted(PACKAGES[package].rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [(str(path.relative_to(ROOT)), alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.append((str(path.relative_to(ROOT)), node.module))
    return found


def _is_framework(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FRAMEWORKS)


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_framework_imports_stay_inside_their_adapter(package: str) -> None:
    allowed = ALLOWED[package]
    offending = [
        (path, module)
        for path, module in _imports(package)
        if _is_framework(module) and not any(module == a or module.startswith(a + ".") for a in allowed)
    ]
    assert offending == []


def test_importing_the_core_loads_no_framework() -> None:
    code = f"import sys, ctxbudget; print(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
