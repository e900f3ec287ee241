"""Opening a transcript as a stream: the format told from its first rows, its messages read one at a time.

:func:`open_transcript` opens a file (:func:`open_bytes` a string or bytes) and returns a :class:`TranscriptStream`:
its :class:`~._items.Head` (format, tools, request body fields, the model the transcript names, notes), and
:meth:`TranscriptStream.items`, which reads the items (:mod:`._items`) again on each call. The file is streamed
(:mod:`._stream`): what is held at a time is one row and what the format needs to follow its thread (ids).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ...archive.store import ArchiveEntry
from ...errors import TranscriptError
from ...messages.message import Message
from ._atif import atif_model, atif_stream, check_agent
from ._claude_code import claude_code_stream
from ._detect import COMPACTED_FORMAT, detect_document, detect_rows
from ._generic import convert_one, store_entries, tools_from
from ._items import Head, Item, Replaced
from ._providers import (
    Ids,
    anthropic_stream,
    anthropic_tools,
    envelope_of,
    openai_stream,
    openai_tools,
    responses_lead,
    responses_stream,
    responses_tools,
)
from ._stream import (
    MAX_BYTES,
    Document,
    IndexedRows,
    JsonlRows,
    ListRows,
    Rows,
    Source,
    SpanRows,
    open_source,
    scan_document,
)
from ._trajectories import (
    mini_swe_agent_model,
    mini_swe_agent_stream,
    swe_agent_model,
    swe_agent_stream,
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
        return _stream(source, head, lambda: _lenient(rows))
    return _from_list(source, rows, fmt, key, include_sidechains)


def _lenient(rows: Rows) -> Iterator[Message]:
    ids = Ids()
    for where, entry in rows:
        message = convert_one(entry, where, ids.index)
        ids.index += 1
        ids.check(message.id, where)
        yield message


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


def _member_rows(document: Document, name: str, label: str) -> IndexedRows | None:
    value = document.members.get(name)
    if isinstance(value, SpanRows):
        return value
    if isinstance(value, list):
        return ListRows(label, name, value)
    return None


def _from_object(
    source: Source, document: Document, fmt: str, key: str | None, include_sidechains: bool
) -> TranscriptStream:
    label, members = source.label, document.members
    readers: dict[str, Callable[[Source, Document, str | None], TranscriptStream]] = {
        "ctxbudget-compacted": _compacted,
        "llamaindex": _llamaindex,
        "tau-bench": _tau_single,
        "swe-agent": _swe_agent,
        "mini-swe-agent": _mini_swe_agent,
        "atif": _atif,
        "responses": _responses,
        "anthropic": _anthropic,
    }
    if fmt in readers:
        return readers[fmt](source, document, key)
    rows = _member_rows(document, "messages", label)
    if rows is None:  # one message (or event) on its own
        single = ListRows(label, "", [dict(members)])
        return _from_rows(source, _Line1(single), fmt, key, include_sidechains, jsonl=False)
    head = Head(format=fmt, source=label)
    head.tools = openai_tools(members.get("tools") or [], label)
    head.envelope = envelope_of(members, ("messages", "tools"), label)
    _model_from_envelope(head)
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


def _model_from_envelope(head: Head) -> None:
    model = head.envelope.get("model") if head.envelope is not None else None
    if isinstance(model, str) and model:
        head.model, head.model_from = model, "the request's model"


def _responses(source: Source, document: Document, _key: str | None) -> TranscriptStream:
    label, members = source.label, document.members
    items = members.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    rows = (
        items if isinstance(items, SpanRows) else ListRows(label, "input", items) if isinstance(items, list) else None
    )
    if rows is None or not rows.head:
        raise TranscriptError(f"{label}: 'input' must be a non-empty list of Responses items", field="input")
    lead, taken = responses_lead(members, label)
    head = Head(format="responses", source=label, tools=responses_tools(members.get("tools") or [], label))
    head.envelope = envelope_of(members, taken, label)
    _model_from_envelope(head)
    return _stream(source, head, lambda: responses_stream(rows, lead))


def _anthropic(source: Source, document: Document, _key: str | None) -> TranscriptStream:
    label, members = source.label, document.members
    rows = _member_rows(document, "messages", label)
    if rows is None or not rows.head:
        raise TranscriptError(f"{label}: 'messages' must be a non-empty list of messages", field="messages")
    head = Head(format="anthropic", source=label, tools=anthropic_tools(members.get("tools") or [], label))
    head.envelope = envelope_of(members, ("messages", "system", "tools"), label)
    _model_from_envelope(head)
    system = members.get("system")
    return _stream(source, head, lambda: anthropic_stream(rows, system, system_where=Where(label, "system")))


def _tau_single(source: Source, document: Document, key: str | None) -> TranscriptStream:
    label = source.label
    entries = ListRows(label, "", [dict(document.preview())])
    traj = document.members.get("traj")
    if isinstance(traj, SpanRows):  # a single result with a long trajectory
        entries = ListRows(label, "", [{**document.preview(), "traj": [v for _, v in traj]}])
    head = Head(format="tau-bench", source=label)
    return _stream(source, head, lambda: tau_bench_stream(entries, label, key, listed=False))


def _swe_agent(source: Source, document: Document, _key: str | None) -> TranscriptStream:
    label = source.label
    history = _member_rows(document, "history", label)
    steps = _member_rows(document, "trajectory", label)
    head = Head(format="swe-agent", source=label)
    model = swe_agent_model(document.members)
    if model is not None:
        head.model, head.model_from = model, "replay_config agent.model.name"
    return _stream(source, head, lambda: swe_agent_stream(history, steps, label))


def _mini_swe_agent(source: Source, document: Document, _key: str | None) -> TranscriptStream:
    label = source.label
    rows = _member_rows(document, "messages", label)
    if rows is None or not rows.head:
        raise TranscriptError(f"{label}: 'messages' must be a non-empty list of messages", field="messages")
    head = Head(format="mini-swe-agent", source=label)
    model = mini_swe_agent_model(document.members)
    if model is not None:
        head.model, head.model_from = model, "info.config.model.model_name"
    return _stream(source, head, lambda: mini_swe_agent_stream(rows))


def _atif(source: Source, document: Document, _key: str | None) -> TranscriptStream:
    label, members = source.label, document.members
    steps = _member_rows(document, "steps", label)
    if steps is None or not steps.head:
        raise TranscriptError(f"{label}: 'steps' must be a non-empty list of ATIF steps", field="steps")
    agent = members.get("agent")
    check_agent(agent, label)
    head = Head(format="atif", source=label)
    head.model, head.model_from = atif_model(agent, steps)
    definitions = agent.get("tool_definitions") if isinstance(agent, Mapping) else None
    head.tools = openai_tools(definitions or [], label)
    head.envelope = envelope_of(members, ("steps",), label)
    subagents = members.get("subagent_trajectories")
    if isinstance(subagents, list) and subagents:
        head.notes.append(f"{len(subagents):,} embedded subagent trajectories are not read (written back as they are)")
    return _stream(source, head, lambda: atif_stream(steps, label))


def _llamaindex(source: Source, document: Document, key: str | None) -> TranscriptStream:
    label = source.label
    store = document.members.get("store")
    chosen, entries = store_entries(store, label, key)
    rows = ListRows(label, f"store[{chosen!r}]", entries)
    head = Head(format="llamaindex", source=label, key=chosen)
    assert isinstance(store, Mapping)
    head.extra = {
        "store": {k: v for k, v in store.items() if k != chosen},
        "envelope": {k: v for k, v in document.members.items() if k != "store"},
    }
    if len(store) > 1:
        head.notes.append(f"read key {chosen!r} of the {len(store):,} in the chat store; --key NAME reads another")
    return _stream(source, head, lambda: _lenient(rows))


def _compacted(source: Source, document: Document, _key: str | None) -> TranscriptStream:
    """A ``ctxbudget.compacted/1`` document: its archive first (the originals), then its messages."""
    label, members = source.label, document.members
    if members.get("format") != COMPACTED_FORMAT:
        raise TranscriptError(
            f"{label}: a ctxbudget document is a JSON object with format {COMPACTED_FORMAT!r}", field="format"
        )
    messages = _member_rows(document, "messages", label)
    if messages is None or not messages.head:
        raise TranscriptError(f"{label}: 'messages' must be a non-empty list of messages", field="messages")
    archive = _member_rows(document, "archive", label)
    if members.get("archive") is not None and archive is None:
        raise TranscriptError(f"{label}: 'archive' must be a list of archive entries", field="archive")
    head = Head(format="ctxbudget-compacted", source=label, compacted=True)
    head.summary = _optional_text(members, "summary", label)
    head.goal = _optional_text(members, "goal", label)
    head.tools = tools_from(members.get("tools") or [], label)
    output = members.get("output")
    rows = output.get("rows") if isinstance(output, Mapping) else None
    if isinstance(rows, list) and all(isinstance(row, str) for row in rows):
        head.extra["output_rows"] = rows
    model = members.get("model")
    if isinstance(model, str) and model:
        head.model, head.model_from = model, "the document's model"
    return _stream(source, head, lambda: _compacted_items(archive, messages))


def _compacted_items(archive: Rows | None, messages: Rows) -> Iterator[Item]:
    for where, entry in archive or ():
        where.check_tree(entry)
        yield _validated(ArchiveEntry, entry, where)
    ids = Ids()
    for where, entry in messages:
        where.check_tree(entry)
        message = _validated(Message, entry, where)
        ids.check(message.id, where)
        yield message


def _validated(model: type[Message] | type[ArchiveEntry], entry: Any, where: Where) -> Any:
    from pydantic import ValidationError  # noqa: PLC0415 - pydantic is imported by the models already

    from ...errors import InvalidMessageError  # noqa: PLC0415

    if not isinstance(entry, Mapping):
        where.fail("message" if model is Message else "archive", f"expected an object, got {type(entry).__name__}")
    try:
        return model(**entry) if model is Message else model.model_validate(entry)
    except InvalidMessageError as exc:
        where.fail(exc.field or "message", str(exc))
    except ValidationError as exc:
        first = exc.errors()[0]
        error = (first.get("ctx") or {}).get("error")
        field = ".".join(str(p) for p in first["loc"])
        if isinstance(error, InvalidMessageError) and error.field:  # a nested message's own check names its field
            field = f"{field}.{error.field}" if field else error.field
        where.fail(field or "archive", str(first["msg"]).removeprefix("Value error, "))


def _optional_text(document: Mapping[str, Any], field: str, source: str) -> str | None:
    value = document.get(field)
    if value is not None and not isinstance(value, str):
        raise TranscriptError(f"{source}: {field!r} must be a string or null, got {type(value).__name__}", field=field)
    if value is not None:
        Where(source, field).check_tree(value, field)
    return value
