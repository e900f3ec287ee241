"""``make demo`` installs the core and the demo's extras only; ``make test`` adds the dev extra to the same venv.

Read from ``make -n`` (what make would run, nothing run) against a venv path of the test's own, in every state a
clone goes through: fresh, after ``make demo``, after ``make test``, and after ``pyproject.toml`` changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make")
DEMO_INSTALL = 'pip install --quiet -e ".[langchain,cli]"'
DEV_INSTALL = 'pip install --quiet -e ".[dev]"'

pytestmark = pytest.mark.skipif(MAKE is None, reason="needs make")


def _would_run(target: str, venv: Path) -> list[str]:
    done = subprocess.run(
        [str(MAKE), "-n", "--no-print-directory", f"VENV={venv}", target],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=60,
    )
    return done.stdout.splitlines()


def _installed(venv: Path, *stamps: str) -> None:
    """A venv as a finished install leaves it: its python, and stamps newer than pyproject.toml."""
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    (venv / "bin" / "python").touch()
    later = max(time.time(), (ROOT / "pyproject.toml").stat().st_mtime) + 60
    for stamp in stamps:
        (venv / stamp).touch()
        os.utime(venv / stamp, (later, later))


def test_on_a_fresh_clone_make_demo_creates_the_venv_and_installs_no_dev_tool(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    lines = _would_run("demo", venv)

    assert lines[0].endswith(f"-m venv {venv}")
    assert [line for line in lines if "pip install" in line and "--upgrade pip" not in line] == [
        f"{venv}/bin/python -m {DEMO_INSTALL}"
    ]
    assert lines[-1] == f"{venv}/bin/ctxbudget demo"


def test_make_test_after_make_demo_adds_the_dev_extra_to_the_same_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _installed(venv, ".installed-demo")
    lines = _would_run("test", venv)

    assert not [line for line in lines if "-m venv" in line]
    assert f"{venv}/bin/python -m {DEV_INSTALL}" in lines
    assert f"touch {venv}/.installed {venv}/.installed-demo" in lines  # the dev extra holds the demo's extras
    assert not [line for line in lines if DEMO_INSTALL in line]
    assert f"{venv}/bin/mypy" in lines


def test_make_demo_after_make_test_installs_nothing(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _installed(venv, ".installed-demo", ".installed")
    assert _would_run("demo", venv) == [f"{venv}/bin/ctxbudget demo"]
    assert not [line for line in _would_run("test", venv) if "pip install" in line]


def test_a_changed_pyproject_reinstalls_what_the_target_needs(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _installed(venv)  # stamps older than pyproject.toml: it changed since the last install
    for stamp in (".installed-demo", ".installed"):
        (venv / stamp).touch()
        os.utime(venv / stamp, (0, 0))

    assert f"{venv}/bin/python -m {DEMO_INSTALL}" in _would_run("demo", venv)
    assert f"{venv}/bin/python -m {DEV_INSTALL}" in _would_run("test", venv)
