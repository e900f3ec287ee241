"""Whatever is missing, the message says how to install it, and ``make demo`` installs what the demo imports.

Importing an adapter without its extra fails at once with the exact ``pip install`` line. ctxbudget is not on PyPI
yet, so every hint (adapters, Redis store, CLI, demo driver) gives the line that works today, an editable install
from the clone (``pip install -e ".[langchain]"``), and the published form for later.

Each case runs in a fresh interpreter whose import system pretends the framework is not installed (a
``sys.meta_path`` finder placed first refuses it, as a missing distribution would), so nothing is uninstalled and
this process's modules are untouched. The demo runs the same way with every distribution outside the Makefile's
``DEMO_EXTRAS`` hidden: what ``make demo`` installs is all it needs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from ctxbudget.cli import _demo
from ctxbudget.cli import app as cli
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from langchain_ctxbudget.demo import DRIVER_NAME

ROOT = Path(__file__).resolve().parents[1]

_PROBE = textwrap.dedent(
    """
    import json, sys

    BLOCKED = set(sys.argv[2].split(","))

    class NotInstalled:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled())
    if len(sys.argv) > 3:  # a module, then the argv of its main(): run it
        sys.exit(__import__(sys.argv[1], fromlist=["main"]).main(sys.argv[3:]))
    try:
        __import__(sys.argv[1])
    except ImportError as exc:
        cause = exc.__cause__
        print(json.dumps({
            "type": type(exc).__name__,
            "message": str(exc),
            "name": exc.name,
            "cause": None if cause is None else [type(cause).__name__, str(cause)],
        }))
    else:
        print(json.dumps(None))
    """
)


def _run_without(blocked: str, tmp_path: Path, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _PROBE, argv[0], blocked, *argv[1:]],
        capture_output=True,
        text=True,
        check=check,
        cwd=tmp_path,
        timeout=300,
    )


def _import_without(package: str, blocked: str, tmp_path: Path) -> dict[str, object] | None:
    done = _run_without(blocked, tmp_path, package)
    result: dict[str, object] | None = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _clone_line(extra: str) -> str:
    return f'pip install -e ".[{extra}]"'


def _published_line(extra: str) -> str:
    return f'pip install "ctxbudget[{extra}]"'


@pytest.mark.parametrize(
    ("package", "blocked", "extra"),
    [
        ("langchain_ctxbudget", "langchain_core", "langchain"),
        ("langchain_ctxbudget", "langchain", "langchain"),
        ("langchain_ctxbudget", "langchain,langchain_core,langgraph", "langchain"),
        ("llamaindex_ctxbudget", "llama_index", "llamaindex"),
    ],
)
def test_an_adapter_without_its_extra_names_the_install_line(
    package: str, blocked: str, extra: str, tmp_path: Path
) -> None:
    error = _import_without(package, blocked, tmp_path)

    assert error is not None, f"{package} imported with {blocked} missing"
    assert error["type"] == "ModuleNotFoundError"  # an ImportError, as before: `except ImportError` still works
    message = str(error["message"])
    assert _clone_line(extra) in message.splitlines()  # a line of its own, to copy: it works from the clone today
    assert "root of your ctxbudget clone" in message
    assert _published_line(extra) in message.splitlines()[-1]  # and the form that works once published
    assert message.startswith(f"{package} needs ")
    assert str(error["name"]).split(".")[0] in blocked.split(",")  # the module that is missing, as Python names it
    assert error["cause"] is not None, "chained from the original error"
    cause_type, cause_message = error["cause"]  # type: ignore[misc]
    assert cause_type == "ModuleNotFoundError"
    assert cause_message in message  # the original error is quoted, not replaced


@pytest.mark.parametrize("package", ["ctxbudget", "ctxbudget.stores"])
def test_the_core_imports_without_any_framework(package: str, tmp_path: Path) -> None:
    assert _import_without(package, "langchain,langchain_core,langgraph,llama_index,redis,rich", tmp_path) is None


@pytest.mark.parametrize(
    ("hint", "extra"),
    [
        pytest.param(cli._INSTALL, "cli", id="cli-without-rich"),
        pytest.param(_demo._LANGCHAIN_INSTALL, "langchain", id="demo-langchain-driver"),
    ],
)
def test_every_other_hint_names_the_clone_install_and_the_published_one(hint: str, extra: str) -> None:
    assert f"{_clone_line(extra)} from the root of your ctxbudget clone" in hint
    assert f"once ctxbudget is published on PyPI: {_published_line(extra)}" in hint


# -- what `make demo` installs is what the demo imports ---------------------------------------------------------------
def _demo_extras() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(r"^DEMO_EXTRAS := (\S+)$", makefile, flags=re.MULTILINE)
    assert found is not None, "the Makefile names the extras `make demo` installs in DEMO_EXTRAS"
    assert '-e ".[$(DEMO_EXTRAS)]"' in makefile
    return set(found.group(1).split(","))


def _requirements_closure(name: str, extras: set[str]) -> set[str]:
    """The installed distributions ``pip install name[extras]`` pulls in (canonical names), ``name`` included."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(name, frozenset(extras))]
    while todo:
        current, wanted = todo.pop()
        key = (canonicalize_name(current), wanted)
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.requires(current) or []
        except metadata.PackageNotFoundError:  # not installed for this Python (a marker excludes it)
            continue
        for text in requires:
            requirement = Requirement(text)
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": extra}) for extra in wanted or {""}):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return {installed for installed, _ in seen}


def test_the_demo_runs_with_only_the_core_and_the_extras_make_demo_installs(tmp_path: Path) -> None:
    needed = _requirements_closure("ctxbudget", _demo_extras())
    hidden = sorted(
        module
        for module, distributions in metadata.packages_distributions().items()
        if module.isidentifier() and not {canonicalize_name(d) for d in distributions} & needed
    )
    for dev_only in ("pytest", "hypothesis", "mypy", "nbclient", "matplotlib", "openai", "llama_index", "redis"):
        assert dev_only in hidden  # the demo cannot lean on the dev extra or on another user extra

    argv = ["demo", "--turns", "8", "--max-tokens", "12000", "--quiet"]  # small enough to compact and bound
    done = _run_without(",".join(hidden), tmp_path, "ctxbudget.cli.app", *argv, check=False)

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert DRIVER_NAME in done.stdout  # the LangChain driver, as `make demo` runs it
    for row in ("compactions", "tool outputs bounded on arrival"):  # so what they import lazily was imported too
        line = next(line for line in done.stdout.splitlines() if line.startswith(f"│ {row} "))
        assert int(line.split("│")[-2]) > 0, line


# -- the notebooks' Setup cells ---------------------------------------------------------------------------------------
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_setup_installs_from_the_clone_and_gives_the_published_form_as_a_comment(path: Path) -> None:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    setup = next("".join(c["source"]) for c in cells if "".join(c["source"]).startswith("## Setup"))
    lines = [
        line.strip() for block in re.findall(r"```bash\n(.*?)```", setup, re.DOTALL) for line in block.splitlines()
    ]
    commands = [line.split("#")[0].strip() for line in lines if not line.startswith("#")]
    later = [line.lstrip("# ") for line in lines if line.startswith("# pip install")]

    assert commands, f"{path.name}: its Setup cell gives no install command"
    assert all(c.startswith("pip install -e ") for c in commands), commands  # works today, from the clone
    assert "# from the root of your ctxbudget clone (ctxbudget is not on PyPI yet):" in lines
    assert len(later) == len(commands)  # each with its published form, for later, never as a command to run now
    for command, published in zip(commands, later, strict=True):
        assert published.startswith(("pip install ctxbudget", 'pip install "ctxbudget['))
        assert re.findall(r"\[(.*?)\]", command) == re.findall(r"\[(.*?)\]", published)  # the same extras
        assert command.split()[4:] == published.split()[3:]  # and the same other packages
