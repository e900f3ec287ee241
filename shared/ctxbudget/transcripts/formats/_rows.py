"""The rows of a transcript (messages, events or steps), read again on each iteration, one parsed at a time.

JSONL lines (:class:`JsonlRows`), the elements of a list too large to hold as byte ranges of the file
(:class:`SpanRows`), or a list in memory (:class:`ListRows`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any, Protocol

from ...errors import TranscriptError
from ._scanner import CHUNK, WHITESPACE, line_values, loads, too_big
from ._source import Source
from ._where import Where

__all__ = ["LOOK_AHEAD", "MAX_VALUE_BYTES", "IndexedRows", "JsonlRows", "ListRows", "Rows", "SpanRows"]

MAX_VALUE_BYTES = 512 << 20
"""The largest JSONL line or list element read (512 MiB): one message, event or step."""
LOOK_AHEAD = 50
"""Elements of a streamed list parsed up front, for telling the format (the readers' look-ahead)."""


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
            for value in line_values(line, where, offset):
                yield where, value


def _lines(source: Source) -> Iterator[tuple[int, int, bytes]]:
    """``(line number, file offset, bytes)`` of each non-blank line, within the size limits."""
    handle = source.handle
    pending = bytearray()
    opened = False  # the line's first byte was seen (a line not starting a JSON value is refused at once)
    number, line_start, read = 1, source.start, source.start
    while True:
        handle.seek(read)  # a caller may have read elsewhere between two lines
        chunk = handle.read(CHUNK)
        if not chunk:
            break
        chunk_start, read = read, read + len(chunk)
        if read > source.max_bytes:
            raise too_big(source.label, source.max_bytes)
        start = 0
        while (newline := chunk.find(b"\n", start)) >= 0:
            pending += chunk[start:newline]
            if pending.strip(WHITESPACE):
                yield number, line_start, bytes(pending)
            pending.clear()
            opened = False
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
        if not opened and (first := bytes(pending.lstrip(WHITESPACE)[:1])):  # once a line: its first byte
            opened = True
            if first not in (b"{", b"["):
                yield number, line_start, bytes(pending[:64])  # no JSONL line starts this way: the parser says so
                return
    if pending.strip(WHITESPACE):
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
