"""Reading a transcript file as a stream, with a size limit: JSONL line by line, a document's lists element by element.

Nothing here holds the whole file. :func:`open_source` opens the file (a pipe or another stream that cannot seek is
first copied to a temporary file, up to the limit) and tells JSONL from one JSON document by its first value
(:meth:`Source.is_jsonl`). JSONL is read line by line (:class:`JsonlRows`). A JSON document is first scanned for its
structure (:func:`scan_document`, which parses nothing but the small members): a top-level list, or a list member
of a top-level object (``messages``, ``history``, ``steps``, ``archive``, ...), larger than :data:`SMALL_BYTES` is
kept as the byte ranges of its elements (:class:`SpanRows`), each element parsed when it is read; everything else
is parsed at once. Reading a list again (two-pass readers) seeks back: the file is read, never held.

Limits, each a clear :class:`~ctxbudget.errors.TranscriptError` naming the flag or the place:

* the whole transcript: ``max_bytes`` (``--max-bytes``; :data:`MAX_BYTES` by default), so an endless stream
  (``/dev/zero``, a pipe that never closes) ends with an error, not a hang;
* one JSONL line or one list element (one message, event or step): :data:`MAX_VALUE_BYTES`;
* nesting: what ``json.loads`` cannot recurse into is refused (the readers then check :data:`~._where.MAX_DEPTH`);
* numbers: a JSON integer longer than Python converts (4,300 digits) is refused, naming where.

Errors name the place as the readers do (``line 7``, ``messages[3]``); invalid UTF-8 names the byte offset.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from ...errors import TranscriptError
from ._where import TOO_DEEP, Where

__all__ = [
    "LOOK_AHEAD",
    "MAX_BYTES",
    "MAX_VALUE_BYTES",
    "SMALL_BYTES",
    "Document",
    "IndexedRows",
    "JsonlRows",
    "ListRows",
    "Rows",
    "Source",
    "SpanRows",
    "loads",
    "open_source",
    "scan_document",
]

MAX_BYTES = 4 << 30
"""The default limit on a transcript's size (4 GiB; ``--max-bytes`` changes it)."""
MAX_VALUE_BYTES = 512 << 20
"""The largest JSONL line or list element read (512 MiB): one message, event or step."""
SMALL_BYTES = 1 << 20
"""A list member larger than this is streamed element by element; smaller members are parsed at once."""
LOOK_AHEAD = 50
"""Elements of a streamed list parsed up front, for telling the format (the readers' look-ahead)."""
_CHUNK = 1 << 20
_BOM = b"\xef\xbb\xbf"
_OUTSIDE = re.compile(rb'[\[\]{},"]')
"""The bytes that matter outside a string: brackets, braces, commas and the quote that opens a string."""
_STRING_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
"""The longest run of string content (escapes included) from a position: it stops at the closing quote, at a lone
trailing backslash or at the end of the buffer, in one pass (no backtracking into the run)."""
_WHITESPACE = b" \t\r\n"


def loads(data: bytes, where: Where, offset: int = 0, source: Source | None = None) -> Any:
    """``json.loads`` of one line or element, every failure a :class:`TranscriptError` naming ``where``.

    ``offset`` is the file offset of ``data``; with ``source`` (an element of a JSON document, not a JSONL line) a
    syntax error names the file's line and column, and invalid UTF-8 its line.
    """
    try:
        return json.loads(data)
    except UnicodeDecodeError as exc:
        at = offset + exc.start
        line = source.line_of(at) if source is not None else _line_number(where)
        where.fail_source(f"invalid UTF-8 at byte offset {at} (line {line}): {exc.reason}", "encoding")
    except json.JSONDecodeError as exc:
        if source is None:
            where.fail_plain(f"invalid JSON at column {exc.colno}: {exc.msg}", "json")
        consumed = len(data.decode("utf-8", "replace")[: exc.pos].encode("utf-8"))  # pos counts characters
        line, column = source.position_of(offset + consumed)
        inside = "" if where.label.startswith("line ") else f" (in {where.label})"
        where.fail_source(f"line {line}: invalid JSON at column {column}: {exc.msg}{inside}", "json")
    except RecursionError:
        where.fail_plain(TOO_DEEP, "json")
    except ValueError as exc:  # an integer past Python's digit limit: int() refuses to convert it
        problem = "a JSON integer has more digits than Python reads (4,300)" if "digits" in str(exc) else str(exc)
        where.fail_plain(problem, "json")


def _line_number(where: Where) -> int:
    label = where.label
    return int(label.split()[-1]) if label.startswith("line ") and label.split()[-1].isdigit() else 1


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
            chunk = self.handle.read(min(_CHUNK, offset - done))
            if not chunk:
                break
            lines += chunk.count(b"\n")
            done += len(chunk)
        return lines

    def position_of(self, offset: int) -> tuple[int, int]:
        """The line and column (from 1, in bytes) of file offset ``offset``: for error messages only."""
        line = self.line_of(offset)
        before = self.read_range(max(0, offset - _CHUNK), offset)
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
            end = _Scanner(self, self.start).skip_value()
        except TranscriptError:
            return False
        return _more_after(self, end)


def too_big(label: str, max_bytes: int) -> TranscriptError:
    """The error for a transcript past the size limit."""
    return TranscriptError(
        f"{label}: the transcript is larger than {max_bytes:,} bytes, the limit; pass --max-bytes N to read more",
        field="max_bytes",
    )


def _first_line(handle: IO[bytes]) -> bytes:
    """The first non-blank line, stripped (at most a chunk of it)."""
    while True:
        line = handle.readline(_CHUNK)
        if not line:
            return b""
        if line.strip():
            return line.strip()


def _more_after(source: Source, end: int) -> bool:
    source.handle.seek(end)
    while chunk := source.handle.read(_CHUNK):
        stripped = chunk.strip(_WHITESPACE)
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
            while chunk := stream.read(_CHUNK):
                copied += len(chunk)
                if copied > max_bytes:
                    raise too_big(label, max_bytes)
                out.write(chunk)
                if copied == len(chunk) and chunk.lstrip(_WHITESPACE)[:1] not in (b"{", b"[", b""):
                    break  # no transcript starts this way (/dev/zero): stop, the reader names the problem
        stream.close()
        return Source(temp.open("rb"), label, max_bytes, temp)
    except BaseException:
        stream.close()
        temp.unlink(missing_ok=True)
        raise


class Rows(Protocol):
    """Messages (or events, or steps) of a transcript, one per row, read again on each iteration."""

    @property
    def head(self) -> list[Any]:
        """The first :data:`LOOK_AHEAD` rows, parsed (for telling the format)."""

    def __iter__(self) -> Iterator[tuple[Where, Any]]:
        """Each row with where it sits (``line 7``, ``messages[3]``)."""


class IndexedRows(Rows, Protocol):
    """Rows that can be counted and reached by index (a JSON list: in memory or as byte ranges)."""

    def __len__(self) -> int: ...

    def at(self, index: int) -> Any:
        """Row ``index``."""

    def last(self) -> Any:
        """The last row (``None`` when there is none)."""

    def labelled(self, label: str) -> IndexedRows:
        """The same rows, named ``<label>[i]``."""


class ListRows:
    """Rows already in memory: a small list member, or a list a reader built."""

    def __init__(self, source: str, label: str, values: list[Any]) -> None:
        self._source = source
        self._label = label
        self.values = values

    @property
    def head(self) -> list[Any]:
        """The first rows."""
        return self.values[:LOOK_AHEAD]

    def __len__(self) -> int:
        return len(self.values)

    def labelled(self, label: str) -> ListRows:
        """The same rows, named ``<label>[i]``."""
        return ListRows(self._source, label, self.values)

    def last(self) -> Any:
        """The last row (``None`` when there is none)."""
        return self.values[-1] if self.values else None

    def at(self, index: int) -> Any:
        """Row ``index``."""
        return self.values[index]

    def __iter__(self) -> Iterator[tuple[Where, Any]]:
        return ((Where(self._source, f"{self._label}[{i}]"), value) for i, value in enumerate(self.values))


class JsonlRows:
    """The lines of a JSONL transcript, each parsed as it is read (blank lines skipped)."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._head: list[Any] | None = None

    @property
    def head(self) -> list[Any]:
        """The first :data:`LOOK_AHEAD` lines, parsed."""
        if self._head is None:
            self._head = []
            for _, value in self:
                self._head.append(value)
                if len(self._head) >= LOOK_AHEAD:
                    break
        return self._head

    def __iter__(self) -> Iterator[tuple[Where, Any]]:
        source = self._source
        for number, offset, line in _lines(source):
            where = Where(source.label, f"line {number}")
            yield where, loads(line, where, offset)


def _lines(source: Source) -> Iterator[tuple[int, int, bytes]]:
    """``(line number, file offset, bytes)`` of each non-blank line, within the size limits."""
    handle = source.handle
    pending = bytearray()
    number, line_start, read = 1, source.start, source.start
    while True:
        handle.seek(read)  # a caller may have read elsewhere between two lines
        chunk = handle.read(_CHUNK)
        if not chunk:
            break
        chunk_start, read = read, read + len(chunk)
        if read > source.max_bytes:
            raise too_big(source.label, source.max_bytes)
        start = 0
        while (newline := chunk.find(b"\n", start)) >= 0:
            pending += chunk[start:newline]
            if pending.strip(_WHITESPACE):
                yield number, line_start, bytes(pending)
            pending.clear()
            number += 1
            start = newline + 1
            line_start = chunk_start + start
        pending += chunk[start:]
        if len(pending) > MAX_VALUE_BYTES:
            raise TranscriptError(
                f"{source.label}: line {number}: longer than {MAX_VALUE_BYTES:,} bytes, the most one line (one "
                "message or event) may hold",
                field="json",
            )
        if bytes(pending.lstrip(_WHITESPACE)[:1]) not in (b"{", b"[", b""):
            yield number, line_start, bytes(pending[:64])  # no JSONL line starts this way: the parser says so
            return
    if pending.strip(_WHITESPACE):
        yield number, line_start, bytes(pending)


class SpanRows:
    """The elements of a list too large to hold, as byte ranges of the file; each element parsed when read."""

    def __init__(self, source: Source, label: str, starts: array[int], ends: array[int]) -> None:
        self._source = source
        self._label = label
        self._starts = starts
        self._ends = ends
        self._head: list[Any] | None = None

    @property
    def head(self) -> list[Any]:
        """The first :data:`LOOK_AHEAD` elements, parsed."""
        if self._head is None:
            self._head = [value for _, (_, value) in zip(range(LOOK_AHEAD), self, strict=False)]
        return self._head

    def __len__(self) -> int:
        return len(self._starts)

    def labelled(self, label: str) -> SpanRows:
        """The same rows, named ``<label>[i]``."""
        return SpanRows(self._source, label, self._starts, self._ends)

    def last(self) -> Any:
        """The last row, parsed (``None`` when there is none)."""
        return self.at(len(self._starts) - 1) if self._starts else None

    def at(self, index: int) -> Any:
        """Row ``index``, parsed."""
        where = Where(self._source.label, f"{self._label}[{index}]")
        start = self._starts[index]
        return loads(self._source.read_range(start, self._ends[index]), where, start, self._source)

    def __iter__(self) -> Iterator[tuple[Where, Any]]:
        source = self._source
        for index, (start, end) in enumerate(zip(self._starts, self._ends, strict=True)):
            where = Where(source.label, f"{self._label}[{index}]")
            if end - start > MAX_VALUE_BYTES:
                where.fail_plain(
                    f"longer than {MAX_VALUE_BYTES:,} bytes, the most one element (one message or event) may hold",
                    "json",
                )
            yield where, loads(source.read_range(start, end), where, start, source)


@dataclass
class Document:
    """A JSON document's structure: its small members parsed, its large lists as :class:`SpanRows`.

    ``value`` is the document itself for a scalar or a small document; for a top-level list, ``rows`` holds its
    elements; for an object, ``members`` maps each key to its value (parsed) or its :class:`SpanRows`.
    """

    kind: str  # "object", "list" or "value"
    members: dict[str, Any] = field(default_factory=dict)
    rows: Rows | None = None
    value: Any = None

    def preview(self) -> Any:
        """The document with each streamed list replaced by its first rows: enough to tell the format."""
        if self.kind == "list":
            assert self.rows is not None
            return self.rows.head
        if self.kind == "object":
            return {key: value.head if isinstance(value, SpanRows) else value for key, value in self.members.items()}
        return self.value


def scan_document(source: Source) -> Document:
    """The structure of the JSON document ``source`` holds (see :class:`Document`); nothing large is parsed.

    Raises:
        TranscriptError: not one JSON value, nested too deeply, over a limit, or not valid JSON or UTF-8 (naming
            the line).
    """
    scanner = _Scanner(source, source.start)
    first = scanner.peek()
    if first == b"[":
        starts, ends, end = scanner.list_elements()
        scanner.expect_end(end)
        label = "messages"
        return Document("list", rows=_rows(source, label, starts, ends))
    if first != b"{":
        end = scanner.skip_value()
        scanner.expect_end(end)
        return Document(
            "value", value=loads(source.read_range(source.start, end), _at(source, source.start), source.start, source)
        )
    members: dict[str, Any] = {}
    for key, start, end, elements in scanner.object_members():
        if elements is not None and end - start > SMALL_BYTES:
            members[key] = SpanRows(source, key, *elements)
        else:
            members[key] = loads(source.read_range(start, end), Where(source.label, key), start, source)
    return Document("object", members=members)


def _rows(source: Source, label: str, starts: array[int], ends: array[int]) -> Rows:
    if not starts or ends[-1] - starts[0] <= SMALL_BYTES:
        values = [
            loads(source.read_range(s, e), Where(source.label, f"{label}[{i}]"), s, source)
            for i, (s, e) in enumerate(zip(starts, ends, strict=True))
        ]
        return ListRows(source.label, label, values)
    return SpanRows(source, label, starts, ends)


def _at(source: Source, offset: int) -> Where:
    return Where(source.label, f"line {source.line_of(offset)}")


class _Scanner:
    """Finds the structure of JSON bytes (value boundaries, list elements, object members) without parsing them.

    Only brackets, braces, commas and strings are looked at (strings skipped in one regex match per buffer), so a
    scan costs a fraction of a parse; what it finds is parsed later, range by range.
    """

    def __init__(self, source: Source, offset: int) -> None:
        self._source = source
        self._handle = source.handle
        self._buf = b""
        self._base = offset  # file offset of _buf[0]
        self._pos = 0

    # -- the buffer --------------------------------------------------------------------------------------------
    def _fill(self) -> bool:
        """Read the next chunk (dropping what was consumed); ``False`` at the end of the file."""
        read_at = self._base + len(self._buf)
        if read_at > self._source.max_bytes:
            raise too_big(self._source.label, self._source.max_bytes)
        self._handle.seek(read_at)
        chunk = self._handle.read(_CHUNK)
        if not chunk:
            return False
        self._base += self._pos
        self._buf = self._buf[self._pos :] + chunk
        self._pos = 0
        return True

    def offset(self) -> int:
        """The file offset of the next byte."""
        return self._base + self._pos

    def peek(self) -> bytes:
        """The next byte that is not whitespace (``b""`` at the end), not consumed."""
        while True:
            buf = self._buf
            while self._pos < len(buf) and buf[self._pos] in _WHITESPACE:
                self._pos += 1
            if self._pos < len(buf):
                return buf[self._pos : self._pos + 1]
            if not self._fill():
                return b""

    def _fail(self, problem: str, offset: int | None = None) -> TranscriptError:
        at = self.offset() if offset is None else offset
        line = self._source.line_of(at)
        return TranscriptError(f"{self._source.label}: line {line}: {problem}", field="json")

    # -- scanning ----------------------------------------------------------------------------------------------
    def _string(self) -> None:
        """Skip a string; the opening quote is at ``_pos``."""
        start = self.offset()
        self._pos += 1
        while True:
            match = _STRING_BODY.match(self._buf, self._pos)
            assert match is not None  # the pattern matches the empty string
            self._pos = match.end()
            if self._pos < len(self._buf) and self._buf[self._pos] == 0x22:  # the closing quote
                self._pos += 1
                return
            if not self._fill():
                raise self._fail("invalid JSON: a string is not closed", start)

    def skip_value(self) -> int:
        """Skip one JSON value; returns the file offset just past it."""
        first = self.peek()
        if first == b"":
            raise self._fail("invalid JSON: expected a value, found the end of the file")
        if first == b'"':
            self._string()
            return self.offset()
        if first not in (b"[", b"{"):
            return self._scalar()
        depth = 0
        while True:
            match = _OUTSIDE.search(self._buf, self._pos)
            if match is None:
                self._pos = len(self._buf)
                if not self._fill():
                    raise self._fail("invalid JSON: the document ends inside a list or object")
                continue
            self._pos = match.start()
            byte = self._buf[self._pos]
            if byte == 0x22:
                self._string()
                continue
            self._pos += 1
            if byte in (0x5B, 0x7B):  # [ {
                depth += 1  # iterative: any depth scans; json.loads refuses what is too deep for it
            elif byte in (0x5D, 0x7D):  # ] }
                depth -= 1
                if depth == 0:
                    return self.offset()

    def _scalar(self) -> int:
        """Skip a number or literal (up to the next delimiter)."""
        while True:
            buf = self._buf
            end = self._pos
            while end < len(buf) and buf[end] not in b" \t\r\n,]}":
                end += 1
            self._pos = end
            if end < len(buf) or not self._fill():
                return self.offset()

    def list_elements(self) -> tuple[array[int], array[int], int]:
        """The ``[`` at ``_pos``: the file ranges of its elements, and the offset past its ``]``."""
        starts, ends = array("q"), array("q")
        self._pos += 1
        if self.peek() == b"]":
            self._pos += 1
            return starts, ends, self.offset()
        while True:
            starts.append(self.offset())
            ends.append(self.skip_value())
            after = self.peek()
            self._pos += 1
            if after == b"]":
                return starts, ends, self.offset()
            if after != b",":
                raise self._fail(f"invalid JSON: expected ',' or ']' after a list element, found {_shown(after)}")

    def object_members(self) -> Iterator[tuple[str, int, int, tuple[array[int], array[int]] | None]]:
        """The ``{`` at ``_pos``: each member's key, value range, and element ranges when the value is a list."""
        self._pos += 1
        if self.peek() == b"}":
            self._pos += 1
            self.expect_end(self.offset())
            return
        while True:
            if self.peek() != b'"':
                raise self._fail("invalid JSON: expected a member name in double quotes")
            key_start = self.offset()
            self._string()
            key_end = self.offset()
            key = loads(
                self._source.read_range(key_start, key_end), _at(self._source, key_start), key_start, self._source
            )
            if self.peek() != b":":
                raise self._fail(f"invalid JSON: expected ':' after the member name {key!r}")
            self._pos += 1
            opening = self.peek()
            start = self.offset()
            elements = None
            if opening == b"[":
                starts, ends, end = self.list_elements()
                elements = (starts, ends)
            else:
                end = self.skip_value()
            yield str(key), start, end, elements
            after = self.peek()
            self._pos += 1
            if after == b"}":
                self.expect_end(self.offset())
                return
            if after != b",":
                raise self._fail(f"invalid JSON: expected ',' or '}}' after the member {key!r}, found {_shown(after)}")

    def expect_end(self, end: int) -> None:
        """Nothing but whitespace may follow the document."""
        self._base, self._buf, self._pos = end, b"", 0
        extra = self.peek()
        if extra:
            raise self._fail(f"invalid JSON: extra data after the document ({_shown(extra)})")


def _shown(byte: bytes) -> str:
    """A byte found where another was expected, for an error message."""
    return "the end of the file" if not byte else repr(byte.decode("latin-1"))
