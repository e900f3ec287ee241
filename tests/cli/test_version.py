"""``ctxbudget --version`` answers without importing the commands (they cost half a second to import)."""

from __future__ import annotations

import subprocess
import sys

import ctxbudget
import pytest
from ctxbudget.cli import main


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"ctxbudget {ctxbudget.__version__}\n"


def test_version_imports_no_command_module() -> None:
    code = (
        "import sys; from ctxbudget.cli import main; main(['--version']); "
        "faces = {'ctxbudget.cli', 'ctxbudget.messages', 'ctxbudget.messages._lazy'}; "  # the face and its loader
        "loaded = sorted(m for m in sys.modules if m.startswith('ctxbudget.') and m not in faces); "
        "assert not loaded, loaded"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"ctxbudget {ctxbudget.__version__}\n"


def test_anything_else_runs_the_commands() -> None:
    assert main(["inspect", "--help"]) == 0
