"""Where ``ctxbudget compact`` may write: the checks on an output path, made before any work.

An output is written to a temporary file renamed over its target (:func:`ctxbudget.cli._files.write_all`), so a
target must be a regular file, or nothing yet: a FIFO, a device node or a socket would be replaced by a regular
file, and a standard stream (``-``, ``/dev/stdout``) cannot be renamed over. Both are refused with a
:class:`~ctxbudget.errors.UsageError` (exit 2) naming the path, as are a directory, a missing directory and one
that cannot be written.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from ..errors import UsageError

__all__ = ["check_regular", "check_writable", "same_file", "target_of"]


def same_file(output: Path, source: Path) -> bool:
    """Whether writing ``output`` would replace ``source`` (same resolved path, or the same file by a link)."""
    with contextlib.suppress(OSError):
        if output.resolve() == source.resolve():
            return True
    try:
        return output.exists() and source.exists() and output.samefile(source)
    except OSError:
        return False


def target_of(path: Path) -> Path:
    """The file writing ``path`` replaces: the target of a symbolic link (followed to the end), else ``path``."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def check_writable(path: Path, flag: str) -> None:
    """Refuse, before any work, an output that cannot be written.

    That is a stream or a special file (:func:`check_regular`), a directory, or a directory that is missing.

    Raises:
        UsageError: naming ``flag`` and the path.
    """
    check_regular(path, flag)
    target = target_of(path)
    if target.is_dir():
        raise UsageError(f"{flag}: {str(path)!r} is a directory, not a file to write", field="output")
    if not target.parent.is_dir():
        raise UsageError(f"{flag}: directory {str(target.parent)!r} does not exist", field="output")
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise UsageError(
            f"{flag}: cannot write to directory {str(target.parent)!r} (permission denied)", field="output"
        )
    if target.exists() and not os.access(target, os.W_OK) and not os.access(target.parent, os.W_OK):
        raise UsageError(f"{flag}: cannot replace {str(path)!r} (permission denied)", field="output")


_STREAM_FDS = ((0, "standard input"), (1, "standard output"), (2, "standard error"))
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISSOCK, "a socket"))


def check_regular(path: Path, flag: str) -> None:
    """Refuse ``-``, one of this process's standard streams, and any existing target that is not a regular file.

    An output is replaced by renaming a new file over it, which would turn a FIFO or a device node into a regular
    file, and outputs are never written to a stream: ``-`` and ``/dev/stdout`` (however it is spelled) are refused
    too, whatever stdout is (a pipe, a terminal, a file), as is a file the shell already opened as stdout.

    Raises:
        UsageError: naming ``flag``, the path and what it is; nothing has been written.
    """
    shown = str(path)
    if shown == "-":
        raise UsageError(
            f"{flag}: '-' is not supported: compact writes files (all or nothing), never standard output; give a "
            "file path (for a file named '-', its full path)",
            field="output",
        )
    try:
        status = os.stat(path)  # follows links to the end (/dev/stdout -> /proc/self/fd/1 -> the pipe or file)
    except OSError:
        return  # nothing there (yet): a new regular file is written; a broken path is refused by the caller
    for fd, name in _STREAM_FDS:
        with contextlib.suppress(OSError):
            stream = os.fstat(fd)
            if (stream.st_dev, stream.st_ino) == (status.st_dev, status.st_ino):
                raise UsageError(
                    f"{flag}: {shown!r} is this process's {name}; compact writes files (all or nothing), never a "
                    "stream: give a file path",
                    field="output",
                )
    if not stat.S_ISREG(status.st_mode) and not stat.S_ISDIR(status.st_mode):
        kind = next((what for test, what in _KINDS if test(status.st_mode)), "a special file")
        raise UsageError(
            f"{flag}: {shown!r} is not a regular file ({kind}); compact replaces its output with a new file, so "
            "it writes only to regular files",
            field="output",
        )
