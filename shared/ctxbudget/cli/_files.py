"""The files ``ctxbudget inspect`` and ``ctxbudget compact`` read and write (no rich).

Reading (:func:`open_input`) streams the transcript (:mod:`ctxbudget.transcripts.formats._open`). A provider-format
file ``compact`` wrote has its full ``ctxbudget.compacted/1`` document beside it (``<stem>.ctxbudget.json``,
:func:`document_path`): the document records a digest of every row (message, item or step) of the file it was
written with, and when the file still begins with those rows the document is read instead, with the rows appended
since (Chat Completions and LangChain files), so a second ``compact`` carries the summary and the archive forward.
A document that no longer matches its file is refused (exit 2), never silently dropped: ``--ignore-sidecar`` reads
the file alone.

Writing (:func:`write_all`) is all or nothing: each output goes to a temporary file beside its target, and only
when every one is complete are they renamed over their targets (a target replaced by an earlier rename is put
back if a later one fails). A target that is a symbolic link is written through to the file it points at (the
link stays); one that is not a regular file (a FIFO, a device, a socket) or is a standard stream (``-``,
``/dev/stdout``) is refused, exit 2, before anything is written. A new file gets the mode the umask gives
(``0666 & ~umask``), a replaced file keeps its mode. The ``ctxbudget`` document is streamed: its archive is copied
from the session's archive file entry by entry.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ..archive.store import content_digest
from ..errors import UsageError
from ..messages.message import Message
from ..transcripts.formats._items import Head, Item
from ..transcripts.formats._open import TranscriptStream, open_transcript
from ..transcripts.formats._stream import MAX_BYTES, JsonlRows, ListRows, SpanRows, open_source, scan_document
from ..transcripts.formats._writers import ROW_MEMBERS
from ..transcripts.reading import label_of
from ._archive import ArchiveSink
from ._targets import check_regular, same_file, target_of

__all__ = [
    "document_path",
    "open_input",
    "row_digests",
    "stream_document",
    "utf8",
    "write_all",
]

_SIDECAR_FORMATS = frozenset({"openai", "responses", "anthropic", "atif", "langchain", "langchain-dumpd", "llamaindex"})
_ONE_ROW_ONE_MESSAGE = frozenset({"openai", "langchain", "langchain-dumpd"})
_ARCHIVE_MARK = "\x00ctxbudget-archive\x00"


def document_path(output: Path) -> Path:
    """Where the full ``ctxbudget.compacted/1`` document goes beside a provider-format ``output``."""
    return output.with_name(f"{output.stem}.ctxbudget.json")


# -- reading -------------------------------------------------------------------------------------------------
def open_input(
    path: Path,
    *,
    key: str | None,
    format: str | None,
    max_bytes: int = MAX_BYTES,
    include_sidechains: bool = False,
    ignore_sidecar: bool = False,
) -> TranscriptStream:
    """The transcript at ``path`` as a stream; with its full document when one written for it is beside it.

    Raises:
        TranscriptError: the transcript (or the document beside it) is malformed.
        UsageError: the document beside it was written for another version of the file (``--ignore-sidecar``).
    """
    stream = open_transcript(
        path,
        label=label_of(path),
        key=key,
        format=format,
        max_bytes=max_bytes,
        include_sidechains=include_sidechains,
    )
    side = document_path(path)
    if ignore_sidecar or stream.head.format not in _SIDECAR_FORMATS or not side.is_file() or same_file(side, path):
        return stream
    try:
        return _with_document(stream, path, side, max_bytes)
    except BaseException:
        stream.close()
        raise


def _with_document(stream: TranscriptStream, path: Path, side: Path, max_bytes: int) -> TranscriptStream:
    document = open_transcript(side, label=label_of(side), format="ctxbudget", max_bytes=max_bytes)
    try:
        recorded = document.head.extra.get("output_rows")
        label = label_of(side)
        if not isinstance(recorded, list):
            raise UsageError(
                f"{label} sits beside {label_of(path)} but records no rows of it (not written by ctxbudget compact "
                "with it); move it away, or pass --ignore-sidecar to read the file alone",
                field="sidecar",
            )
        rows = row_digests(path, stream.head, max_bytes)
        if rows[: len(recorded)] != recorded or (
            len(rows) > len(recorded) and stream.head.format not in _ONE_ROW_ONE_MESSAGE
        ):
            first = next(
                (i for i, (a, b) in enumerate(zip(rows, recorded, strict=False)) if a != b),
                min(len(rows), len(recorded)),
            )
            raise UsageError(
                f"{label} sits beside {label_of(path)} but was written for another version of it (row {first} "
                f"differs; the file has {len(rows):,} rows, the document recorded {len(recorded):,}); move it away, "
                "or pass --ignore-sidecar to read the file alone",
                field="sidecar",
            )
    except BaseException:
        document.close()
        raise
    return _Joined(stream, document, skip=len(recorded), added=len(rows) - len(recorded))


class _Joined(TranscriptStream):
    """A provider-format file read through the full document beside it, plus the rows appended since."""

    def __init__(self, stream: TranscriptStream, document: TranscriptStream, *, skip: int, added: int) -> None:
        head = stream.head
        side = document.head
        joined = Head(
            format=head.format,
            source=head.source,
            jsonl=head.jsonl,
            key=head.key,
            tools=side.tools or head.tools,
            envelope=head.envelope,
            model=side.model or head.model,
            model_from=side.model_from if side.model else head.model_from,
            compacted=True,
            summary=side.summary,
            goal=side.goal,
            notes=[
                f"read with the full document beside it ({side.source}): its summary and archive carried forward"
                + (f", and the {added:,} rows added to the file since" if added else ""),
                *head.notes,
            ],
            extra=head.extra,
        )
        super().__init__(stream.source, joined, self._joined, "the transcript holds no messages")
        self._stream, self._document, self._skip, self._added = stream, document, skip, added

    def _joined(self) -> Iterator[Item]:
        yield from self._document.items()
        if not self._added:  # the file is what the document was written with: nothing more to read
            return
        skipped = added = 0
        for item in self._stream.items():  # one message per row (Chat Completions, LangChain)
            if skipped < self._skip:
                skipped += isinstance(item, Message)
                continue
            if isinstance(item, Message) and item.id.startswith("transcript-"):
                # a row without an id of its own: numbered after the document's, not by its place in the file
                item = item.model_copy(update={"id": f"added-{added}"})  # noqa: PLW2901
                added += 1
            yield item

    def close(self) -> None:
        """Close both files."""
        self._document.close()
        self._stream.close()


def row_digests(path: Path, head: Head, max_bytes: int = MAX_BYTES) -> list[str]:
    """The digest of each row (message, item or step) of a file in ``head.format``, as the document records."""
    with open_source(path, label=label_of(path), max_bytes=max_bytes) as source:
        if source.is_jsonl(path.suffix):
            return [content_digest(value) for _, value in JsonlRows(source)]
        document = scan_document(source)
        if document.kind == "list":
            assert document.rows is not None
            return [content_digest(value) for _, value in document.rows]
        rows = _rows_member(document.members, head)
        return [content_digest(value) for value in rows]


def _rows_member(members: Mapping[str, Any], head: Head) -> Iterator[Any]:
    if head.format == "llamaindex":
        store = members.get("store")
        value = store.get(head.key) if isinstance(store, Mapping) else None
    else:
        value = members.get(ROW_MEMBERS.get(head.format, "messages"))
    if isinstance(value, (SpanRows, ListRows)):
        return (v for _, v in value)
    return iter(value if isinstance(value, list) else [])


# -- writing -------------------------------------------------------------------------------------------------
def utf8(text: str, what: str) -> bytes:
    """``text`` as UTF-8; text that is not valid Unicode (a lone surrogate) is bad input, exit 2, not a traceback."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(
            f"{what} holds a lone surrogate {text[exc.start]!r}, which is not valid Unicode", field="encoding"
        ) from None


Writer = Callable[[IO[bytes]], None]


def write_all(outputs: Sequence[tuple[Path, Writer]]) -> None:
    """Write every output, all or nothing (see the module docstring).

    Each writer writes its whole content to the file it is given. Raises what a write raised (``OSError``), having
    removed every temporary file and put back every file replaced before the failure; raises ``UsageError``,
    writing nothing, when a target is not a regular file (:func:`check_regular`).
    """
    for path, _ in outputs:
        check_regular(path, "-o")  # checked again here: a rename never replaces a FIFO, a device or a stream
    mask = _umask()
    staged: list[tuple[Path, Path]] = []
    try:
        for path, writer in outputs:
            target = target_of(path)
            staged.append((target, _staged(target, writer, mask)))
    except BaseException:
        for _, temp in staged:
            temp.unlink(missing_ok=True)
        raise
    _commit(staged)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _staged(target: Path, writer: Writer, mask: int) -> Path:
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            writer(handle)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~mask
        os.chmod(temp, mode)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def _commit(staged: list[tuple[Path, Path]]) -> None:
    """Rename each temporary file over its target; on a failure, put back what was replaced and remove the rest."""
    done: list[tuple[Path, Path | None]] = []  # (target, backup of what it replaced)
    try:
        for target, temp in staged:
            backup = None
            if target.exists():
                backup = target.with_name(f".{target.name}.{os.getpid()}.bak")
                os.link(target, backup)
            done.append((target, backup))
            os.replace(temp, target)
    except BaseException:
        for target, backup in reversed(done):
            with contextlib.suppress(OSError):
                if backup is not None:
                    os.replace(backup, target)  # a no-op when the target was never replaced (the same file)
                else:
                    target.unlink()
            if backup is not None:
                backup.unlink(missing_ok=True)
        for _, temp in staged:
            temp.unlink(missing_ok=True)
        raise
    for _, backup in done:
        if backup is not None:
            backup.unlink(missing_ok=True)
    for target, _ in staged:
        _sync_directory(target.parent)


def _sync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def stream_document(document: Mapping[str, Any], sink: ArchiveSink, carried: Sequence[bytes] = ()) -> Writer:
    """A writer of ``document`` (without its archive) with the archive streamed from ``sink`` in place.

    The archive goes where the ``archive`` key would (before ``compaction``), one entry per line.
    """
    body: dict[str, Any] = {}
    for key, value in document.items():
        if key == "compaction":
            body["archive"] = _ARCHIVE_MARK
        body[key] = value
    body.setdefault("archive", _ARCHIVE_MARK)
    text = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    marker = json.dumps(_ARCHIVE_MARK)
    before, after = text.split(marker, 1)
    head, tail = utf8(before, "the document"), utf8(after, "the document")

    def write(handle: IO[bytes]) -> None:
        handle.write(head)
        first = True
        for line in itertools.chain(carried, sink.lines()):  # streamed: the archive is never held whole
            handle.write(b"[\n    " if first else b",\n    ")
            handle.write(line)
            first = False
        handle.write(b"[]" if first else b"\n  ]")
        handle.write(tail)

    return write
