"""Every notebook in notebooks/ runs top to bottom, offline, in a kernel from this virtualenv."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

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


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A ``python3`` kernel spec that runs this interpreter, found before any system-wide one."""
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "Python 3 (ctxbudget venv)", "language": "python"})
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(root))
        patch.setenv("MPLBACKEND", "Agg")
        yield


def test_there_are_notebooks() -> None:
    assert [p.name for p in PATHS][:1] == ["01_quickstart.ipynb"]


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_is_committed_without_outputs_and_has_the_sections(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)
    headings = [line for cell in notebook.cells if cell.cell_type == "markdown" for line in cell.source.splitlines()]
    found = [h for h in headings if h in SECTIONS]
    assert found == list(SECTIONS)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs(path: Path, kernel_env: None) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=120,
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    executed = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count is not None for cell in executed)
    errors = [o for cell in executed for o in cell.outputs if o.output_type == "error"]
    assert errors == []
