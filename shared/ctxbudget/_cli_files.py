"""The files ``ctxbudget inspect`` and ``ctxbudget compact`` read and write (no rich).

Reading reports its progress (``reading`` bytes, then ``parsing`` messages) and takes ``--format``. ``compact``
writes its output in the chosen format (:mod:`ctxbudget.transcript_formats`) atomically: a temporary file beside the
target, renamed over it, so a failure leaves nothing behind. A provider format (``openai``, ``responses``,
``anthropic``) holds only what the client sends; the full ``ctxbudget.compacted/1`` document (messages with their
metadata, the summary, the goal and the archive of every original) is written beside it as
``<OUT stem>.ctxbudget.json`` (:func:`document_path`), and compacting that document again carries everything forward.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._progress import Progress
from .errors import UsageError
from .transcript_formats import OUTPUT_FORMATS, PROVIDER_FORMATS, check_name, default_output_format, render
from .transcripts import Transcript, load_transcript

__all__ = ["document_path", "read", "same_file", "utf8", "write_atomic", "write_compacted"]

_READ_CHUNK = 1 << 20  # bytes read between two progress reports


def read(path: Path, *, key: str | None, format: str | None, progress: Progress) -> Transcript:
    """:func:`~ctxbudget.transcripts.load_transcript`, reporting the bytes read, then the messages parsed.

    The file is streamed once for the byte count (nothing kept) and read again by ``load_transcript`` from the
    page cache, so every error is exactly ``load_transcript``'s.
    """
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            done = 0
            progress("reading", 0, size)
            while chunk := handle.read(_READ_CHUNK):
                done += len(chunk)
                progress("reading", done, max(size, done))
    except OSError:
        pass  # load_transcript reports it, naming the file
    progress("parsing", 0, None)
    transcript = load_transcript(path, key=key, format=format)
    count = len(transcript.messages)
    progress("parsing", count, count)
    return transcript


def document_path(output: Path) -> Path:
    """Where the full ``ctxbudget.compacted/1`` document goes beside a provider-format ``output``."""
    return output.with_name(f"{output.stem}.ctxbudget.json")


def write_compacted(
    output: Path, document: Mapping[str, Any], transcript: Transcript, output_format: str | None
) -> tuple[str, Path | None]:
    """Write ``document`` to ``output`` in ``output_format`` (default: the input's); returns it and the side file.

    Raises:
        UsageError: an unknown ``output_format`` (the valid names listed).
    """
    chosen = default_output_format(transcript.format) if output_format is None else output_format
    chosen = check_name(chosen, OUTPUT_FORMATS, "--output-format")
    text = render(
        document, chosen, input_format=transcript.format, jsonl=transcript.jsonl, envelope=transcript.envelope
    )
    side = document_path(output) if chosen in PROVIDER_FORMATS else None
    full = render(document, "ctxbudget", input_format=transcript.format) if side is not None else ""
    data = utf8(text, f"the output for {output}")
    side_data = utf8(full, f"the output for {side}") if side is not None else b""
    write_atomic(output, data)
    if side is not None:
        write_atomic(side, side_data)
    return chosen, side


def same_file(output: Path, source: Path) -> bool:
    """Whether writing ``output`` would replace ``source`` (same resolved path, or the same file by a link)."""
    with contextlib.suppress(OSError):
        if output.resolve() == source.resolve():
            return True
    try:
        return output.exists() and source.exists() and output.samefile(source)
    except OSError:
        return False


def utf8(text: str, what: str) -> bytes:
    """``text`` as UTF-8; text that is not valid Unicode (a lone surrogate) is bad input, exit 2, not a traceback."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(
            f"{what} holds a lone surrogate {text[exc.start]!r}, which is not valid Unicode", field="encoding"
        ) from None


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``; nothing is left on failure."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
