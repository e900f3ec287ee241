"""Build the example notebooks from their paired percent-format sources, and execute them.

Each notebook ``notebooks/NN_name.ipynb`` is paired with ``notebooks/NN_name.py``, its source in jupytext's percent
format (``# %%`` code cells, ``# %% [markdown]`` cells; ``notebooks/jupytext.toml`` pairs them for jupytext and
Jupyter). Edit the ``.py`` file, then run ``.venv/bin/python notebooks/_build.py`` from the repository root (name
notebooks to build only those, e.g. ``01_quickstart.ipynb``): it reads each ``.py`` file, writes the ``.ipynb`` and
executes it top to bottom in a kernel of this interpreter, so the committed notebooks carry their outputs, plots
inline as PNG, and a reader on the repository page sees every result. ``--no-execute`` writes them without outputs.
Every notebook follows the same sections: overview, setup, instantiation, usage, use within a chain or agent, API
reference. All run offline (fake or strict test models, the extractive summarizer); how to swap in a real model is
shown in markdown only.

``tests/notebooks/test_notebooks.py`` checks that each committed notebook's cells are what this file builds from its
``.py`` file, re-executes every notebook and compares each code cell's outputs with the committed ones (text after
:func:`normalise` hides what changes from run to run: timings, memory addresses, random ids, paths; images by
presence), so committed outputs can never go stale or missing. ``jupyter nbconvert --to notebook --execute
notebooks/01_quickstart.ipynb`` runs one by hand (the dev extra installs nbconvert and jupytext).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jupytext
import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
REGENERATE = ".venv/bin/python notebooks/_build.py"
"""The command that rebuilds and re-executes the notebooks (append names to rebuild only those)."""
TIMEOUT = 300
"""Seconds one cell may run."""
FORMAT = "py:percent"
"""The jupytext format of the paired sources."""
NOTEBOOKS: dict[str, Path] = {source.stem + ".ipynb": source for source in sorted(HERE.glob("[0-9][0-9]_*.py"))}
"""Each notebook's file name and the ``.py`` file its cells come from."""
Cell = tuple[str, str]  # ("markdown" | "code", source)


def read_cells(source: Path) -> list[Cell]:
    """The cells of a percent-format ``source``, as ``(cell type, source)`` pairs in order."""
    paired = jupytext.read(source, fmt=FORMAT)
    found = [(cell.cell_type, cell.source) for cell in paired.cells]
    unknown = sorted({kind for kind, _ in found} - {"markdown", "code"})
    if unknown:
        raise ValueError(f"{source.name}: only code and markdown cells are built, not {', '.join(unknown)}")
    return found


def build(cells: list[Cell]) -> nbformat.NotebookNode:
    """A notebook of ``cells`` for a ``python3`` kernel, its cells numbered ``cell-00``, ``cell-01``, ..."""
    notebook = new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.cells = [new_markdown_cell(src) if kind == "markdown" else new_code_cell(src) for kind, src in cells]
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index:02d}"
    return notebook


def notebook(name: str) -> nbformat.NotebookNode:
    """The notebook ``name`` (e.g. ``01_quickstart.ipynb``) built from its paired ``.py`` file, without outputs."""
    return build(read_cells(NOTEBOOKS[name]))


# -- executing and comparing ---------------------------------------------------------------------------------------
SEEDED_IDS = """
# Run by the kernel before the first cell (notebooks/_build.py, tests/notebooks): the ids ctxbudget and LangChain
# make come from seeded sequences. Ids appear in archive handles, which compacted messages carry, so their token
# counts would otherwise change from run to run by a few tokens, and with them every figure printed after a
# compaction. Ids other libraries make (LlamaIndex's instrumentation spans, often from concurrent tasks) stay random
# and do not shift the sequence.
import random as _random
import sys as _sys
import uuid as _uuid

_ids = _random.Random(16)
_run_ids = _random.Random(7)
_random_uuid4 = _uuid.uuid4
_SEEDED = {"ctxbudget", "langchain_ctxbudget", "llamaindex_ctxbudget", "langchain", "langchain_core", "langgraph"}


def _uuid4():
    if _sys._getframe(1).f_globals.get("__name__", "").split(".")[0] in _SEEDED:
        return _uuid.UUID(int=_ids.getrandbits(128), version=4)
    return _random_uuid4()


_uuid.uuid4 = _uuid4
_order = iter(range(1, 1 << 48))


def _uuid7(*args, **kwargs):
    # Time-ordered as a real uuid7: a counter where the milliseconds go, then version 7, the variant, random bits.
    bits = (next(_order) << 80) | (0x7 << 76) | (_run_ids.getrandbits(12) << 64) | (0x2 << 62)
    return _uuid.UUID(int=bits | _run_ids.getrandbits(62))


try:
    import langchain_core.utils.uuid as _lc_uuid  # LangChain's run ids (uuid7), used as message ids
except ImportError:
    pass
else:
    _lc_uuid._uuid_utils_uuid7 = _uuid7
"""


@contextmanager
def kernel_env() -> Iterator[None]:
    """A ``python3`` kernel spec running this interpreter, found before any system-wide one; plots drawn inline.

    The kernel runs :data:`SEEDED_IDS` first, so a notebook prints the same figures at every run.
    """
    saved = {name: os.environ.get(name) for name in ("JUPYTER_PATH", "MPLBACKEND")}
    with tempfile.TemporaryDirectory(prefix="ctxbudget-jupyter-") as root:
        spec = Path(root) / "kernels" / "python3"
        spec.mkdir(parents=True)
        startup = Path(root) / "seeded_ids.py"
        startup.write_text(SEEDED_IDS)
        argv = [
            sys.executable,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            f"--IPKernelApp.exec_files={startup}",
        ]
        spec.joinpath("kernel.json").write_text(
            json.dumps({"argv": argv, "display_name": "Python 3 (ctxbudget venv)", "language": "python"})
        )
        os.environ["JUPYTER_PATH"] = root
        os.environ.pop("MPLBACKEND", None)  # a backend from the environment (Agg) would keep plots out of the cells
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def execute(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Run every cell of ``notebook`` in place (inside :func:`kernel_env`), from the notebooks folder."""
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=TIMEOUT,
        allow_errors=False,
        record_timing=False,  # no per-cell timestamps: they would change the file at every run
        coalesce_streams=True,
        resources={"metadata": {"path": str(HERE)}},
    )
    client.execute()
    notebook.metadata.pop("widgets", None)
    return notebook


_VOLATILE = (
    (re.compile(r"\b\d[\d,]*(?:\.\d+)?\s?(?:ms|µs|us|ns)\b"), "<time>"),  # timings
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|sec|seconds)\b"), "<time>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "<timestamp>"),
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "0x<address>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),  # run and message ids
    (re.compile(re.escape(str(ROOT))), "<repo>"),
    (re.compile(re.escape(tempfile.gettempdir()) + r"/[^\s'\"]*"), "<tmp>"),
    (re.compile(re.escape(sys.prefix)), "<venv>"),
)


def normalise(text: str) -> str:
    """``text`` with what changes from run to run replaced by placeholders (see the module docstring)."""
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def outputs_of(cell: Any) -> list[tuple[str, str]]:
    """A code cell's outputs as comparable pairs: ``(kind, normalised text)``; an image is ``(mime, "<image>")``."""
    found: list[tuple[str, str]] = []
    for output in cell.get("outputs", []):
        kind = output["output_type"]
        if kind == "stream":
            text = normalise(output["text"])
            if found and found[-1][0] == f"stream:{output['name']}":  # a stream split by flushing: one text
                found[-1] = (found[-1][0], found[-1][1] + text)
            else:
                found.append((f"stream:{output['name']}", text))
        elif kind == "error":
            found.append(("error", f"{output['ename']}: {normalise(output['evalue'])}"))
        else:
            data = output.get("data", {})
            found += [(mime, "<image>") for mime in sorted(data) if mime.startswith("image/")]
            if "text/plain" in data and not any(mime.startswith("image/") for mime in data):
                found.append(("text/plain", normalise(data["text/plain"])))
    return found


def main(argv: list[str]) -> None:
    """Build, execute and write the notebooks named in ``argv`` (all by default)."""
    parser = argparse.ArgumentParser(description="Build (and execute) the example notebooks from their .py sources.")
    parser.add_argument("names", nargs="*", help=f"notebooks to build (default: all of {', '.join(NOTEBOOKS)})")
    parser.add_argument("--no-execute", action="store_true", help="write the notebooks without outputs")
    args = parser.parse_args(argv)
    names = [Path(name).with_suffix(".ipynb").name for name in args.names]  # 01_quickstart.py names its notebook too
    unknown = sorted(set(names) - set(NOTEBOOKS))
    if unknown:
        parser.error(f"unknown notebooks: {', '.join(unknown)}")
    with kernel_env():
        for name in NOTEBOOKS:
            if names and name not in names:
                continue
            built = notebook(name)
            if not args.no_execute:
                execute(built)
            nbformat.write(built, HERE / name)
            print("wrote", HERE / name, "(executed)" if not args.no_execute else "(no outputs)")


if __name__ == "__main__":
    main(sys.argv[1:])
