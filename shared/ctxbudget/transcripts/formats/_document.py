"""A JSON document's structure, scanned without parsing it whole: small members parsed, large lists as rows."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from ._rows import ListRows, Rows, SpanRows
from ._scanner import Scanner, at_line, loads
from ._source import Source
from ._where import Where

__all__ = ["SMALL_BYTES", "Document", "scan_document"]

SMALL_BYTES = 1 << 20
"""A list member larger than this is streamed element by element; smaller members are parsed at once."""


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
    scanner = Scanner(source, source.start)
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
            "value",
            value=loads(source.read_range(source.start, end), at_line(source, source.start), source.start, source),
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
