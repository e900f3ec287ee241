"""The notebooks are committed executed, as notebooks/_build.py builds them from their paired .py files, and current.

Each ``notebooks/NN_name.ipynb`` has its source in ``notebooks/NN_name.py`` (jupytext's percent format); its cells
must be that file's, in order.

Each notebook is re-executed offline in a kernel of this virtualenv; every code cell's outputs must match the
committed ones once what changes from run to run (timings, memory addresses, random ids, paths) is normalised, and
images must be where they were. A failure names the notebook, the cell and the command that regenerates them.
"""

from __future__ import annotations

import copy
import difflib
import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
SECTIONS = (
    "## Overview",
    "## Setup",
    "## Instantiation",
    "## Usage",
    "## Use within a chain/agent",
    "## API reference",
)
WITH_PLOTS = {"02_langchain_agent.ipynb", "05_side_by_side.ipynb"}


def _load_builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOKS / "_build.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = _load_builder()
STALE = f"stale: regenerate the notebooks with `{BUILD.REGENERATE} {{name}}` and commit them"


@pytest.fixture(scope="module")
def kernel_env() -> Iterator[None]:
    with BUILD.kernel_env():
        yield


def _code(notebook: Any) -> list[tuple[int, Any]]:
    return [(index, cell) for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"]


def test_every_notebook_is_built_and_committed() -> None:
    assert [p.name for p in PATHS] == list(BUILD.NOTEBOOKS), "every NN_name.ipynb needs its NN_name.py, and back"
    assert all(source.parent == NOTEBOOKS and source.suffix == ".py" for source in BUILD.NOTEBOOKS.values())


def test_jupytext_pairs_each_notebook_with_its_percent_format_source() -> None:
    config = tomllib.loads((NOTEBOOKS / "jupytext.toml").read_text(encoding="utf-8"))
    assert config["formats"] == "ipynb,py:percent"
    assert BUILD.FORMAT == "py:percent"
    for source in BUILD.NOTEBOOKS.values():
        text = source.read_text(encoding="utf-8")
        assert text.startswith(("# %%\n", "# %% [markdown]\n")), f"{source.name}: not in the percent format"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_committed_sources_are_what_the_builder_writes(path: Path) -> None:
    committed = nbformat.read(path, as_version=4)
    built = BUILD.notebook(path.name)
    assert [(c.cell_type, c.source) for c in committed.cells] == [(c.cell_type, c.source) for c in built.cells], (
        f"{path.name}: its cells differ from notebooks/{BUILD.NOTEBOOKS[path.name].name}; "
        + STALE.format(name=path.name)
    )
    assert [c.get("id") for c in committed.cells] == [c.id for c in built.cells], STALE.format(name=path.name)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_is_committed_executed_with_the_sections(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    code = _code(notebook)
    counts = [cell.execution_count for _, cell in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: not executed top to bottom; " + STALE.format(
        name=path.name
    )
    assert all(o.output_type != "error" for _, cell in code for o in cell.outputs)
    assert any(cell.outputs for _, cell in code)
    images = [o for _, cell in code for o in cell.outputs if "image/png" in o.get("data", {})]
    assert bool(images) == (path.name in WITH_PLOTS), f"{path.name}: inline plots expected in {sorted(WITH_PLOTS)}"
    headings = [line for cell in notebook.cells if cell.cell_type == "markdown" for line in cell.source.splitlines()]
    assert [h for h in headings if h in SECTIONS] == list(SECTIONS)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_setup_installs_from_the_clone_with_extras_that_exist(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    setup = next(c.source for c in notebook.cells if c.cell_type == "markdown" and "## Setup" in c.source.splitlines())
    lines = [line.strip() for line in setup.splitlines()]
    installs = [line for line in lines if line.startswith("pip install")]
    assert installs, f"{path.name}: the Setup cell installs nothing"
    assert all(re.match(r'pip install -e (\.|"\.\[[a-z,-]+\]")(\s|$)', line) for line in installs), (
        f'{path.name}: Setup installs ctxbudget from the clone (`pip install -e .` or `pip install -e ".[extra]"`)'
    )
    assert "# from the root of your ctxbudget clone (ctxbudget is not on PyPI yet):" in lines
    published = [line for line in lines if "pip install" in line and "-e" not in line]
    assert all(line.startswith("# pip install") for line in published), "the published form stays commented out"
    pyproject = tomllib.loads((NOTEBOOKS.parent / "pyproject.toml").read_text(encoding="utf-8"))
    extras = set(pyproject["project"]["optional-dependencies"])
    named = {extra for line in installs for group in re.findall(r"\[([a-z,-]+)\]", line) for extra in group.split(",")}
    assert named <= extras, f"{path.name}: Setup names extras pyproject.toml lacks: {sorted(named - extras)}"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_and_its_committed_outputs_are_current(path: Path, kernel_env: None) -> None:
    committed = nbformat.read(path, as_version=4)
    fresh = BUILD.execute(copy.deepcopy(committed))
    problems = []
    for (index, old), (_, new) in zip(_code(committed), _code(fresh), strict=True):
        before, after = BUILD.outputs_of(old), BUILD.outputs_of(new)
        if before != after:
            diff = difflib.unified_diff(_lines(before), _lines(after), "committed", "re-executed", lineterm="", n=1)
            problems.append(f"cell {index} ({old.get('id')}):\n" + "\n".join(list(diff)[:40]))
    assert not problems, f"{path.name}: committed outputs are {STALE.format(name=path.name)}\n" + "\n".join(problems)


def _lines(outputs: list[tuple[str, str]]) -> list[str]:
    return [f"[{kind}] {line}" for kind, text in outputs for line in text.splitlines()]


def test_normalise_hides_what_changes_between_runs() -> None:
    text = (
        f"median 12.345 ms, took 3.2 s, at 2025-01-03T10:00:00Z, <object at 0x7f3a2b1c9d80>, "
        f"ctx://archive/a75ac6d2-8864-418c-a358-03d524907c13.summarized in {NOTEBOOKS}/x.png"
    )
    assert BUILD.normalise(text) == (
        "median <time>, took <time>, at <timestamp>, <object at 0x<address>>, ctx://archive/<uuid>.summarized in "
        "<repo>/notebooks/x.png"
    )
    assert BUILD.normalise("5 turns, 40 steps, 8,000 tokens, 3 seconds") == "5 turns, 40 steps, 8,000 tokens, <time>"


def test_outputs_compare_text_and_images_by_presence() -> None:
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="took 1.5 ms\n"),
        nbformat.v4.new_output("stream", name="stdout", text="done\n"),  # a stream split by flushing
        nbformat.v4.new_output("display_data", data={"image/png": "AAAA", "text/plain": "<Figure size 9x4>"}),
        nbformat.v4.new_output("execute_result", data={"text/plain": "42"}, execution_count=1),
    ]
    assert BUILD.outputs_of(cell) == [
        ("stream:stdout", "took <time>\ndone\n"),
        ("image/png", "<image>"),
        ("text/plain", "42"),
    ]


def test_the_dev_extra_installs_what_jupyter_nbconvert_execute_needs(tmp_path: Path, kernel_env: None) -> None:
    pyproject = (NOTEBOOKS.parent / "pyproject.toml").read_text(encoding="utf-8")
    dev = pyproject.split("\ndev = [", 1)[1].split("\n]", 1)[0]
    for package in ("nbconvert", "nbclient", "nbformat", "ipykernel", "matplotlib", "jupytext"):
        assert f'"{package}>=' in dev, f"the dev extra lacks {package}"
    jupyter = Path(sys.executable).with_name("jupyter")
    source = NOTEBOOKS / "01_quickstart.ipynb"
    argv = [str(jupyter), "nbconvert", "--to", "notebook", "--execute", "--output-dir", str(tmp_path), str(source)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    executed = nbformat.read(tmp_path / source.name, as_version=4)
    assert all(cell.execution_count is not None for _, cell in _code(executed))
