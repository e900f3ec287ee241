"""Opening a transcript as a stream: the format told from its first rows, its messages read one at a time.

:func:`open_transcript` opens a file (:func:`open_bytes` a string or bytes) and returns a :class:`TranscriptStream`:
its :class:`~._items.Head` (format, tools, request body fields, the model the transcript names, notes), and
:meth:`TranscriptStream.items`, which reads the items (:mod:`._items`) again on each call. The file is streamed
(:mod:`._stream`): what is held at a time is one row and what the format needs to follow its thread (ids).

Rows (JSONL lines, a JSON list, a request body's ``messages``) are read here; a transcript that is one JSON object
read its own way (a trajectory, a chat store, a compacted document, ...) by its reader in :mod:`._objects`.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ...errors import TranscriptError
from ...messages.message import Message
from ._claude_code import claude_code_stream
from ._detect import detect_document, detect_rows
from ._items import Head, Item, Replaced
from ._objects import OBJECT_READERS, lenient, member_rows, model_from_envelope
from ._providers import (
    anthropic_stream,
    envelope_of,
    openai_stream,
    openai_tools,
    responses_stream,
)
from ._stream import (
    MAX_BYTES,
    Document,
    JsonlRows,
    ListRows,
    Rows,
    Source,
    SpanRows,
    open_source,
    scan_document,
)
from ._trajectories import (
    tau_bench_note,
    tau_bench_stream,
)
from ._where import Where

__all__ = ["TranscriptStream", "open_bytes", "open_transcript"]

_FORCED: dict[str, tuple[str, ...]] = {
    "langchain": ("langchain", "langchain-dumpd"),
    "ctxbudget": ("ctxbudget-compacted",),
}
"""``--format`` names that stand for more than one format read (the detected one of them is used)."""


class TranscriptStream:
    """An opened transcript: its :attr:`head`, and its items (:meth:`items`); close it (or use ``with``)."""

    def __init__(self, source: Source, head: Head, items: Callable[[], Iterator[Item]], empty: str) -> None:
        self._source = source
        self.head = head
        self._items = items
        self._empty = empty

    def __enter__(self) -> TranscriptStream:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file."""
        self._source.close()

    @property
    def source(self) -> Source:
        """The file being read."""
        return self._source

    def position(self) -> tuple[int, int]:
        """How far into the file reading is, and its size (bytes), for progress."""
        return min(self._source.handle.tell(), self._source.size), self._source.size

    def items(self) -> Iterator[Item]:
        """The items in order (:mod:`._items`), read from the file again on each call.

        Raises:
            TranscriptError: a malformed row (line and field named), or no message at all (at the end).
        """
        messages = 0
        for item in self._items():
            if isinstance(item, (Message, Replaced)):
                messages += 1
            yield item
        if not messages:
            raise TranscriptError(f"{self.head.source}: {self._empty}", field="messages")


def open_transcript(
    path: Path,
    *,
    label: str,
    key: str | None = None,
    format: str | None = None,
    max_bytes: int = MAX_BYTES,
    include_sidechains: bool = False,
) -> TranscriptStream:
    """Open the transcript at ``path`` (``label`` names it in messages); ``format`` is a detected format name.

    Raises:
        TranscriptError: the file cannot be read, is over ``max_bytes``, or is in no format read here (what was
            seen is named, and ``--format``).
    """
    source = open_source(path, label=label, max_bytes=max_bytes)
    try:
        return _open(source, path.suffix, key, format, jsonl=None, include_sidechains=include_sidechains)
    except BaseException:
        source.close()
        raise


def open_bytes(
    data: bytes,
    *,
    label: str,
    key: str | None = None,
    jsonl: bool | None = None,
    format: str | None = None,
    max_bytes: int = MAX_BYTES,
    include_sidechains: bool = False,
) -> TranscriptStream:
    """:func:`open_transcript` for bytes in memory (``jsonl``: ``True`` forces JSONL, ``False`` one document)."""
    source = Source(io.BytesIO(data), label, max_bytes)
    try:
        return _open(source, "", key, format, jsonl=jsonl, include_sidechains=include_sidechains)
    except BaseException:
        source.close()
        raise


def _open(
    source: Source, suffix: str, key: str | None, forced: str | None, *, jsonl: bool | None, include_sidechains: bool
) -> TranscriptStream:
    if jsonl is None:
        jsonl = source.is_jsonl(suffix)
    if jsonl:
        rows = JsonlRows(source)
        if not rows.head:
            raise TranscriptError(f"{source.label}: the transcript holds no messages", field="messages")
        fmt = _chosen(forced, detect_rows(rows.head))
        return _from_rows(source, rows, fmt, key, include_sidechains, jsonl=True)
    document = scan_document(source)
    preview = document.preview()
    fmt = _chosen(forced, _detected(preview, source.label, forced))
    if document.kind == "list":
        assert document.rows is not None
        return _from_list(source, document.rows, fmt, key, include_sidechains)
    if document.kind != "object":
        raise TranscriptError(
            f"{source.label}: expected a list of messages, got {type(preview).__name__}", field="messages"
        )
    return _from_object(source, document, fmt, key, include_sidechains)


def _chosen(forced: str | None, detected: str) -> str:
    """The format to read: the detected one, or the forced one (a forced name read as the format it stands for)."""
    if forced is None:
        return detected
    choices = _FORCED.get(forced, (forced,))
    return detected if detected in choices else choices[0]


def _detected(preview: Any, source: str, forced: str | None) -> str:
    if forced is None:
        return detect_document(preview, source)
    try:
        return detect_document(preview, source)
    except TranscriptError:
        return forced


def _stream(source: Source, head: Head, items: Callable[[], Iterator[Item]], empty: str = "") -> TranscriptStream:
    return TranscriptStream(source, head, items, empty or "the transcript holds no messages")


def _from_rows(
    source: Source, rows: Rows, fmt: str, key: str | None, include_sidechains: bool, *, jsonl: bool
) -> TranscriptStream:
    """Messages given one per row (JSONL lines, or a JSON array / ``messages`` list) in format ``fmt``."""
    label = source.label
    if fmt == "claude-code":
        head, items = claude_code_stream(rows, label, include_sidechains=include_sidechains)
        head.jsonl = jsonl
        return _stream(source, head, items, "the session holds no user or assistant messages")
    head = Head(format=fmt, source=label, jsonl=jsonl)
    if fmt == "anthropic":
        return _stream(source, head, lambda: anthropic_stream(rows))
    if fmt == "responses":
        return _stream(source, head, lambda: responses_stream(rows, []))
    if fmt == "openai":
        return _stream(source, head, lambda: openai_stream(rows))
    if fmt in ("langchain", "langchain-dumpd"):
        return _stream(source, head, lambda: lenient(rows))
    return _from_list(source, rows, fmt, key, include_sidechains)


def _from_list(source: Source, rows: Rows, fmt: str, key: str | None, include_sidechains: bool) -> TranscriptStream:
    """A top-level JSON list (or JSONL rows that are not messages): tau-bench results, or messages."""
    label = source.label
    if fmt == "tau-bench":
        entries = (
            rows.labelled("") if isinstance(rows, (ListRows, SpanRows)) else ListRows(label, "", [v for _, v in rows])
        )
        note, chosen = tau_bench_note(entries, key, label)
        head = Head(format=fmt, source=label, key=chosen, notes=[note])
        return _stream(source, head, lambda: tau_bench_stream(entries, label, key, listed=True))
    if fmt in ("swe-agent", "llamaindex", "ctxbudget-compacted", "atif", "mini-swe-agent"):
        what = {"swe-agent": "a SWE-agent trajectory", "llamaindex": "a LlamaIndex chat store"}.get(fmt, fmt)
        raise TranscriptError(f"{label}: {what} is a JSON object, got a list", field="format")
    messages = rows.labelled("messages") if isinstance(rows, (ListRows, SpanRows)) else rows
    return _from_rows(source, messages, fmt, key, include_sidechains, jsonl=False)


def _from_object(
    source: Source, document: Document, fmt: str, key: str | None, include_sidechains: bool
) -> TranscriptStream:
    label, members = source.label, document.members
    reader = OBJECT_READERS.get(fmt)
    if reader is not None:
        head, items = reader(document, label, key)
        return _stream(source, head, items)
    rows = member_rows(document, "messages", label)
    if rows is None:  # one message (or event) on its own
        single = ListRows(label, "", [dict(members)])
        return _from_rows(source, _Line1(single), fmt, key, include_sidechains, jsonl=False)
    head = Head(format=fmt, source=label)
    head.tools = openai_tools(members.get("tools") or [], label)
    head.envelope = envelope_of(members, ("messages", "tools"), label)
    model_from_envelope(head)
    stream = _from_rows(source, rows, fmt, key, include_sidechains, jsonl=False)
    stream.head.tools, stream.head.envelope = head.tools, head.envelope
    stream.head.model, stream.head.model_from = head.model, head.model_from
    return stream


class _Line1:
    """One message on its own, named ``line 1`` (as a one-line JSONL file would be)."""

    def __init__(self, rows: ListRows) -> None:
        self._rows = rows

    @property
    def head(self) -> list[Any]:
        return self._rows.head

    def __iter__(self) -> Iterator[tuple[Where, Any]]:
        for where, value in self._rows:
            yield Where(where.source, "line 1"), value
