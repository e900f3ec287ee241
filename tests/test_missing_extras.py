"""Importing an adapter without its extra fails at once with the exact ``pip install`` line.

Each case runs in a fresh interpreter whose import system pretends the framework is not installed (a
``sys.meta_path`` finder placed first refuses it, as a missing distribution would), so nothing is uninstalled and
this process's modules are untouched.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


def _import_without(package: str, blocked: str, tmp_path: Path) -> dict[str, object] | None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, package, blocked],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        timeout=300,
    )
    result: dict[str, object] | None = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize(
    ("package", "blocked", "install_line"),
    [
        ("langchain_ctxbudget", "langchain_core", 'pip install "ctxbudget[langchain]"'),
        ("langchain_ctxbudget", "langchain", 'pip install "ctxbudget[langchain]"'),
        ("langchain_ctxbudget", "langchain,langchain_core,langgraph", 'pip install "ctxbudget[langchain]"'),
        ("llamaindex_ctxbudget", "llama_index", 'pip install "ctxbudget[llamaindex]"'),
    ],
)
def test_an_adapter_without_its_extra_names_the_install_line(
    package: str, blocked: str, install_line: str, tmp_path: Path
) -> None:
    error = _import_without(package, blocked, tmp_path)

    assert error is not None, f"{package} imported with {blocked} missing"
    assert error["type"] == "ModuleNotFoundError"  # an ImportError, as before: `except ImportError` still works
    message = str(error["message"])
    assert install_line in message.splitlines()
    assert message.startswith(f"{package} needs ")
    assert str(error["name"]).split(".")[0] in blocked.split(",")  # the module that is missing, as Python names it
    assert error["cause"] is not None, "chained from the original error"
    cause_type, cause_message = error["cause"]  # type: ignore[misc]
    assert cause_type == "ModuleNotFoundError"
    assert cause_message in message  # the original error is quoted, not replaced


@pytest.mark.parametrize("package", ["ctxbudget", "ctxbudget.stores"])
def test_the_core_imports_without_any_framework(package: str, tmp_path: Path) -> None:
    assert _import_without(package, "langchain,langchain_core,langgraph,llama_index,redis,rich", tmp_path) is None
