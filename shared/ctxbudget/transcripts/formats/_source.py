"""A transcript file opened for streaming, with its size limit: a pipe or device is first copied to a temporary file.

:func:`open_source` opens the file; :meth:`Source.is_jsonl` tells JSONL from one JSON document by its first value.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import IO

from ...errors import TranscriptError
from ._scanner import CHUNK, WHITESPACE, Scanner, too_big

__all__ = ["MAX_BYTES", "Source", "open_source"]

MAX_BYTES = 4 << 30
"""The default limit on a transcript's size (4 GiB; ``--max-bytes`` changes it)."""
_BOM = b"\xef\xbb\xbf"


class Source:
    """A transcript file opened for streaming: seekable, with its size limit (see the module docstring).

    Use as a context manager; a stream that cannot seek was copied to a temporary file, removed on close.
    """

    def __init__(self, handle: IO[bytes], label: str, max_bytes: int, temp: Path | None = None) -> None:
        self.handle = handle
        self.label = label
        self.max_bytes = max_bytes
        self._temp = temp
        self.size = handle.seek(0, os.SEEK_END)
        handle.seek(0)
        head = handle.read(len(_BOM))
        self.start = len(_BOM) if head == _BOM else 0
        if self.size > max_bytes:
            raise too_big(label, max_bytes)

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file (and remove the temporary copy of a stream)."""
        self.handle.close()
        if self._temp is not None:
            self._temp.unlink(missing_ok=True)

    def read_range(self, start: int, end: int) -> bytes:
        """The bytes from ``start`` to ``end`` (file offsets)."""
        self.handle.seek(start)
        return self.handle.read(end - start)

    def line_of(self, offset: int) -> int:
        """The line (from 1) of file offset ``offset``: for error messages only (reads the file up to it)."""
        self.handle.seek(0)
        lines, done = 1, 0
        while done < offset:
            chunk = self.handle.read(min(CHUNK, offset - done))
            if not chunk:
                break
            lines += chunk.count(b"\n")
            done += len(chunk)
        return lines

    def position_of(self, offset: int) -> tuple[int, int]:
        """The line and column (from 1, in bytes) of file offset ``offset``: for error messages only."""
        line = self.line_of(offset)
        before = self.read_range(max(0, offset - CHUNK), offset)
        newline = before.rfind(b"\n")
        column = len(before) - newline if newline >= 0 else offset + 1
        return line, column

    def is_jsonl(self, suffix: str) -> bool:
        """One value per line (JSONL), else one JSON document.

        A first line that is only ``{`` or ``[`` opens a pretty-printed document; else a ``.jsonl`` file is JSONL;
        else the first value is scanned: more values after it mean JSONL (a first value that does not scan: a
        document, whose reader names the place).
        """
        self.handle.seek(self.start)
        first = _first_line(self.handle)
        if first in (b"{", b"["):
            return False
        if suffix == ".jsonl":
            return first != b""
        if not first.startswith(b"{"):
            return False
        try:
            end = Scanner(self, self.start).skip_value()
        except TranscriptError:
            return False
        return _more_after(self, end)


def _first_line(handle: IO[bytes]) -> bytes:
    """The first non-blank line, stripped (at most a chunk of it)."""
    while True:
        line = handle.readline(CHUNK)
        if not line:
            return b""
        if line.strip():
            return line.strip()


def _more_after(source: Source, end: int) -> bool:
    source.handle.seek(end)
    while chunk := source.handle.read(CHUNK):
        stripped = chunk.strip(WHITESPACE)
        if stripped:
            return True
    return False


def open_source(path: Path, *, label: str, max_bytes: int = MAX_BYTES) -> Source:
    """Open ``path`` for streaming (see :class:`Source`).

    Raises:
        TranscriptError: the file cannot be read, or is larger than ``max_bytes`` (field ``max_bytes``).
    """
    try:
        handle = path.open("rb")  # the Source owns and closes it
    except OSError as exc:
        raise TranscriptError(f"{label}: cannot read transcript: {exc.strerror or exc}", field="path") from exc
    try:
        mode = os.fstat(handle.fileno()).st_mode
        if stat.S_ISREG(mode):
            return Source(handle, label, max_bytes)
        if stat.S_ISDIR(mode):
            raise TranscriptError(f"{label}: cannot read transcript: it is a directory", field="path")
        return _spooled(handle, label, max_bytes)
    except BaseException:
        handle.close()
        raise


def _spooled(stream: IO[bytes], label: str, max_bytes: int) -> Source:
    """A stream that cannot seek (a pipe, a device), copied to a temporary file up to ``max_bytes``."""
    fd, name = tempfile.mkstemp(prefix="ctxbudget-transcript-", suffix=".tmp")
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            copied = 0
            while chunk := stream.read(CHUNK):
                copied += len(chunk)
                if copied > max_bytes:
                    raise too_big(label, max_bytes)
                out.write(chunk)
                if copied == len(chunk) and chunk.lstrip(WHITESPACE)[:1] not in (b"{", b"[", b""):
                    break  # no transcript starts this way (/dev/zero): stop, the reader names the problem
        stream.close()
        return Source(temp.open("rb"), label, max_bytes, temp)
    except BaseException:
        stream.close()
        temp.unlink(missing_ok=True)
        raise
