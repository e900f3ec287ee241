"""JSON bytes read without holding them: one value parsed at a time, and the structure scanned without parsing.

:func:`loads` parses one line or element, every failure a :class:`~ctxbudget.errors.TranscriptError` naming the
place; :class:`Scanner` finds value boundaries, list elements and object members by looking only at brackets, braces,
commas and strings. Both read through a :class:`ByteSource` (a :class:`~._source.Source`).
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterator
from typing import IO, Any, Protocol

from ...errors import TranscriptError
from ._where import TOO_DEEP, Where

__all__ = ["CHUNK", "WHITESPACE", "ByteSource", "Scanner", "at_line", "line_values", "loads", "too_big"]

CHUNK = 1 << 20
"""How much of the file is read at a time."""
WHITESPACE = b" \t\r\n"
"""JSON's whitespace bytes."""
_OUTSIDE = re.compile(rb'[\[\]{},"]')
"""The bytes that matter outside a string: brackets, braces, commas and the quote that opens a string."""

_BLANK = re.compile(r"[ \t\r\n]*")
"""JSON's whitespace, as text (it always matches: the empty run too)."""
_STRING_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
"""The longest run of string content (escapes included) from a position: it stops at the closing quote, at a lone
trailing backslash or at the end of the buffer, in one pass (no backtracking into the run)."""


class ByteSource(Protocol):
    """What the scanner and :func:`loads` read: a seekable file with its label and size limit."""

    @property
    def handle(self) -> IO[bytes]:
        """The open file."""

    @property
    def label(self) -> str:
        """The name errors give the file."""

    @property
    def max_bytes(self) -> int:
        """The size limit."""

    def read_range(self, start: int, end: int) -> bytes:
        """The bytes from ``start`` to ``end`` (file offsets)."""

    def line_of(self, offset: int) -> int:
        """The line (from 1) of file offset ``offset``."""

    def position_of(self, offset: int) -> tuple[int, int]:
        """The line and column (from 1) of file offset ``offset``."""


def loads(data: bytes, where: Where, offset: int = 0, source: ByteSource | None = None) -> Any:
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


def line_values(data: bytes, where: Where, offset: int = 0) -> list[Any]:
    """The JSON values of one JSONL line: one, or the records a writer ran together on it.

    A line can hold two records without the newline between them (``{...,"type":"assistant"}{"type":
    "file-history-snapshot",...}``: a Claude Code session whose writer lost one): each is read, in order, when every
    one is a JSON object. Anything else fails as :func:`loads` says.
    """
    try:
        return [json.loads(data)]
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and (records := _run_together(data)) is not None:
            return records
    except (UnicodeDecodeError, RecursionError, ValueError):
        pass
    return [loads(data, where, offset)]  # fails, naming the place


def _run_together(data: bytes) -> list[Any] | None:
    """The JSON objects of ``data`` written one after another (whitespace between them allowed), else ``None``."""
    text = data.decode("utf-8")
    decoder = json.JSONDecoder()
    records: list[Any] = []
    position = 0
    try:
        while (position := _BLANK.match(text, position).end()) < len(text):  # type: ignore[union-attr]
            record, position = decoder.raw_decode(text, position)
            if not isinstance(record, dict):
                return None
            records.append(record)
    except (json.JSONDecodeError, RecursionError, ValueError):
        return None
    return records


def _line_number(where: Where) -> int:
    label = where.label
    return int(label.split()[-1]) if label.startswith("line ") and label.split()[-1].isdigit() else 1


def too_big(label: str, max_bytes: int) -> TranscriptError:
    """The error for a transcript past the size limit."""
    return TranscriptError(
        f"{label}: the transcript is larger than {max_bytes:,} bytes, the limit; pass --max-bytes N to read more",
        field="max_bytes",
    )


def at_line(source: ByteSource, offset: int) -> Where:
    """Where file offset ``offset`` is, named by its line (``line 7``)."""
    return Where(source.label, f"line {source.line_of(offset)}")


class Scanner:
    """Finds the structure of JSON bytes (value boundaries, list elements, object members) without parsing them.

    Only brackets, braces, commas and strings are looked at (strings skipped in one regex match per buffer), so a
    scan costs a fraction of a parse; what it finds is parsed later, range by range.
    """

    def __init__(self, source: ByteSource, offset: int) -> None:
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
        chunk = self._handle.read(CHUNK)
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
            while self._pos < len(buf) and buf[self._pos] in WHITESPACE:
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
                self._source.read_range(key_start, key_end), at_line(self._source, key_start), key_start, self._source
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
