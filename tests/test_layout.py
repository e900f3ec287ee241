"""The architecture, as the folders show it (docs/architecture.md): layers, one concept per module, imports down.

* ``shared/ctxbudget`` holds at most 15 entries: the layer packages, the error tree, the testing doubles, the face;
* no module of the three packages is over 400 lines (a concept that big is two);
* no import circle, counting imports inside functions and under ``TYPE_CHECKING`` (two modules that import each
  other are one concept cut in two);
* every import points down the layer order below (a module imports its own layer and the layers under it).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "shared" / "ctxbudget"
PACKAGES = (CORE, ROOT / "langchain_ctxbudget", ROOT / "llamaindex_ctxbudget")
LAYERS = (
    "errors",
    "messages",
    "providers",
    "archive",
    "context",
    "cognitive",
    "compaction",
    "session",
    "stores",
    "shared_session",
    "transcripts",
    "testing",
    "cli",
)
"""The core's layers, bottom up."""
MAX_LINES = 400


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(CORE.rglob("*.py")):
        parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(module: str) -> Iterator[tuple[str, int]]:
    """Every core module ``module`` imports (anywhere in it), with the line."""
    path = MODULES[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                if f"{target}.{alias.name}" in MODULES:
                    yield f"{target}.{alias.name}", node.lineno
                elif target in MODULES:
                    yield target, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    yield alias.name, node.lineno


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 else len(LAYERS)


def test_the_core_folder_holds_at_most_fifteen_entries() -> None:
    entries = sorted(p.name for p in CORE.iterdir() if p.name != "__pycache__")
    assert len(entries) <= 15, entries
    packages = {p.name for p in CORE.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(LAYERS) - {"errors", "testing"}


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_no_module_is_over_400_lines(package: Path) -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in package.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = {module: {target for target, _ in _imports(module) if target != module} for module in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in MODULES:
        if module not in index:
            visit(module)
    assert not circles


def test_every_import_points_down_the_layers() -> None:
    upward = [
        f"{module} imports {target} (line {line})"
        for module in MODULES
        if module != "ctxbudget"
        for target, line in _imports(module)
        if target != "ctxbudget" and _layer(target) > _layer(module)
    ]
    assert not upward
