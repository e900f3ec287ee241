"""``compact -o`` writes regular files only: a FIFO, a standard stream or ``-`` is refused, exit 2, nothing written.

An output is written to a temporary file renamed over its target, so a FIFO (or a device node) given as ``-o``,
or as the ``.ctxbudget.json`` document beside it, used to be replaced by a regular file, exit 0; ``-o /dev/stdout``
(a link to ``/proc/self/fd/1``) into a pipe exited 1 with a raw FileNotFoundError, and redirected to a file it
replaced that file and wrote a ``stdout.ctxbudget.json`` beside the link. Every case here is refused before any
work, with one ``ctxbudget: error:`` line naming the path, and leaves the folder as it was. No test here touches
a real device file: the FIFOs are made in ``tmp_path`` and ``/dev/stdout`` is a link in ``tmp_path``.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from ctxbudget.cli import EXIT_USAGE, main

from .conftest import long_session, one_error_line, write

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
needs_proc = pytest.mark.skipif(not Path("/proc/self/fd/1").exists(), reason="needs /proc/self/fd")


def _listing(folder: Path) -> dict[str, str]:
    """Each entry of ``folder`` and its kind, hidden temporary files included."""
    kinds = ((stat.S_ISFIFO, "fifo"), (stat.S_ISLNK, "link"), (stat.S_ISREG, "file"), (stat.S_ISDIR, "dir"))
    return {entry.name: next(kind for test, kind in kinds if test(entry.lstat().st_mode)) for entry in folder.iterdir()}


@needs_fifo
def test_a_fifo_output_is_refused_and_stays_a_fifo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write(tmp_path / "long.json", long_session(40))
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    before = _listing(tmp_path)
    assert main(["compact", str(source), "-o", str(fifo), "--force"]) == EXIT_USAGE
    one_error_line(capsys, f"-o: {str(fifo)!r} is not a regular file (a FIFO)")
    assert _listing(tmp_path) == before  # still a FIFO; no sidecar, no temporary file


@needs_fifo
def test_a_fifo_where_the_document_goes_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write(tmp_path / "long.json", long_session(40))
    os.mkfifo(tmp_path / "out.ctxbudget.json")
    before = _listing(tmp_path)
    assert main(["compact", str(source), "-o", str(tmp_path / "out.json"), "--force"]) == EXIT_USAGE
    one_error_line(capsys, "-o (its .ctxbudget.json document)", "is not a regular file (a FIFO)")
    assert _listing(tmp_path) == before


@needs_fifo
def test_a_link_to_a_fifo_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write(tmp_path / "long.json", long_session(40))
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "out.json").symlink_to("pipe")
    before = _listing(tmp_path)
    assert main(["compact", str(source), "-o", str(tmp_path / "out.json"), "--force"]) == EXIT_USAGE
    one_error_line(capsys, "out.json' is not a regular file (a FIFO)")
    assert _listing(tmp_path) == before


def test_dash_is_not_standard_output_and_writes_no_file_named_dash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write(tmp_path / "long.json", long_session(40))
    monkeypatch.chdir(tmp_path)
    assert main(["compact", str(source), "-o", "-", "--force"]) == EXIT_USAGE
    one_error_line(capsys, "-o: '-' is not supported", "never standard output")
    assert _listing(tmp_path) == {"long.json": "file"}


def _compact_to_stdout_link(tmp_path: Path, stdout: int) -> subprocess.CompletedProcess[str]:
    source = write(tmp_path / "long.json", long_session(40))
    (tmp_path / "stdout").symlink_to("/proc/self/fd/1")  # what /dev/stdout is, made in tmp_path
    command = [sys.executable, "-m", "ctxbudget.cli", "compact", str(source), "-o", str(tmp_path / "stdout"), "--force"]
    return subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, text=True, check=False, cwd=tmp_path)


@needs_proc
def test_dev_stdout_into_a_pipe_is_refused_with_one_line(tmp_path: Path) -> None:
    done = _compact_to_stdout_link(tmp_path, subprocess.PIPE)
    assert done.returncode == EXIT_USAGE
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"ctxbudget: error: -o: {str(tmp_path / 'stdout')!r} is this process's standard output; compact writes "
        "files (all or nothing), never a stream: give a file path"
    ]
    assert _listing(tmp_path) == {"long.json": "file", "stdout": "link"}


@needs_proc
def test_dev_stdout_redirected_to_a_file_is_refused_and_writes_no_sidecar(tmp_path: Path) -> None:
    redirected = tmp_path / "redirected.txt"
    with redirected.open("w", encoding="utf-8") as handle:
        done = _compact_to_stdout_link(tmp_path, handle.fileno())
    assert done.returncode == EXIT_USAGE
    assert "is this process's standard output" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert redirected.read_text(encoding="utf-8") == ""
    assert _listing(tmp_path) == {"long.json": "file", "stdout": "link", "redirected.txt": "file"}
