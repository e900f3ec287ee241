r"""Read real transcripts into ctxbudget :class:`~ctxbudget.messages.Message` objects.

The format is told from the content (:mod:`ctxbudget.transcript_formats` lists them; ``format=`` forces one):
OpenAI Chat Completions (a list, a request body, or JSONL), OpenAI Responses input items, Anthropic Messages,
Claude Code session JSONL, LangChain ``messages_to_dict`` / ``dumpd`` dumps, LlamaIndex ``SimpleChatStore`` JSON,
SWE-agent ``.traj`` trajectories, tau-bench results, and the ``ctxbudget.compacted/1`` documents ``ctxbudget
compact`` writes (their summary, goal and archive in :attr:`Transcript.compacted`, so compacting again carries them
forward). Provider formats are read by :mod:`ctxbudget.providers`, so writing the same format back gives the
original; a request body's other fields (``model``, ``max_tokens``, ...) are kept in :attr:`Transcript.envelope`.

Every problem raises :class:`~ctxbudget.errors.TranscriptError` naming where (``line 7`` for JSONL, ``messages[3]``
for JSON) and the field (``role``, ``tool_calls[0].id``); invalid UTF-8 names the byte offset; content no reader
claims names what was seen (field ``format``). Text that is not valid Unicode (a lone surrogate such as a
``\ud800`` escape, anywhere in a message or a tool spec) and JSON nested more than :data:`MAX_DEPTH` levels are
rejected the same way, so nothing read here fails later when it is printed, written or sent. Messages keep the id
the transcript gave them, else get a deterministic id (``transcript-<index>``, or the format's own scheme), so two
reads agree.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .archive import ArchiveEntry
from .errors import InvalidMessageError, TranscriptError
from .messages import Message, ToolSchema
from .transcript_formats import READ_FORMATS, check_name
from .transcript_formats._claude_code import claude_code_rows
from .transcript_formats._detect import COMPACTED_FORMAT, detect_document, detect_rows
from .transcript_formats._generic import convert_all, store_entries, tools_from
from .transcript_formats._providers import (
    Read,
    anthropic_document,
    anthropic_rows,
    envelope_of,
    openai_rows,
    openai_tools,
    responses_document,
)
from .transcript_formats._trajectories import swe_agent_document, tau_bench_document
from .transcript_formats._where import MAX_DEPTH, TOO_DEEP, Where

__all__ = [
    "COMPACTED_FORMAT",
    "MAX_DEPTH",
    "CompactedState",
    "Transcript",
    "TranscriptFormat",
    "load_transcript",
    "parse_transcript",
]

TranscriptFormat = Literal[
    "openai",
    "responses",
    "anthropic",
    "claude-code",
    "langchain",
    "langchain-dumpd",
    "llamaindex",
    "swe-agent",
    "tau-bench",
    "ctxbudget-compacted",
]
"""The format a transcript was read from (``--format`` names: ``langchain`` covers both dumps, ``ctxbudget`` is
``ctxbudget-compacted``)."""

_FORCED: dict[str, tuple[str, ...]] = {
    "langchain": ("langchain", "langchain-dumpd"),
    "ctxbudget": ("ctxbudget-compacted",),
}


class CompactedState(BaseModel):
    """What a ``ctxbudget.compacted/1`` document holds besides its messages."""

    model_config = ConfigDict(frozen=True)

    summary: str | None = Field(default=None, description="The cumulative summary of everything compacted away.")
    goal: str | None = Field(default=None, description="The user's goal, when the document records it.")
    archive: tuple[ArchiveEntry, ...] = Field(default=(), description="Every original that left the messages.")


class Transcript(BaseModel):
    """A transcript read from a file or a string."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...] = Field(description="The messages, in order, with unique ids.")
    format: TranscriptFormat
    source: str = Field(description="The path (or label) the transcript was read from.")
    key: str | None = Field(
        default=None, description="The LlamaIndex chat-store key, or the tau-bench entry index, read."
    )
    tools: tuple[ToolSchema, ...] = Field(default=(), description="Tool schemas the transcript declared, if any.")
    jsonl: bool = Field(default=False, description="Read as JSONL, one message (or event) per line.")
    envelope: dict[str, Any] | None = Field(
        default=None,
        description="A request body's fields besides its messages and tools (model, max_tokens, ...); None when the "
        "transcript was a bare list of messages or JSONL.",
    )
    compacted: CompactedState | None = Field(
        default=None, description="For a document ``ctxbudget compact`` wrote: its summary, goal and archive."
    )


def load_transcript(path: str | os.PathLike[str], *, key: str | None = None, format: str | None = None) -> Transcript:
    """Read the transcript at ``path``.

    A ``.jsonl`` suffix means JSONL, unless the file is one pretty-printed JSON document (as
    ``ctxbudget compact --in-place`` leaves it); other files are detected by shape.

    Args:
        path: the file to read.
        key: for a LlamaIndex chat store, the key to read; for a tau-bench list, the entry index; ``None``: the first.
        format: one of :data:`~ctxbudget.transcript_formats.READ_FORMATS` to skip detection; ``None`` detects.

    Raises:
        TranscriptError: the file cannot be read, is not UTF-8, not JSON, in no format read here, or a message is
            malformed.
        UsageError: ``format`` is not a format name (the valid names are listed).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TranscriptError(f"path: must be a str or os.PathLike, got {type(path).__name__}", field="path")
    if format is not None:
        check_name(format, READ_FORMATS, "--format")
    file = Path(path)
    # The label is for messages and reports: a file name that is not UTF-8 is shown with \x escapes, not as
    # surrogates that could not be printed or written.
    label = os.fsencode(file).decode("utf-8", "backslashreplace")
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise TranscriptError(f"{label}: cannot read transcript: {exc.strerror or exc}", field="path") from exc
    jsonl = True if file.suffix == ".jsonl" and not _pretty_document(data) else None
    return parse_transcript(data, source=label, key=key, jsonl=jsonl, format=format)


def _pretty_document(data: bytes) -> bool:
    """Whether ``data`` opens with a line that is only ``{`` or ``[``: never a JSONL line, always a JSON document."""
    first = data.removeprefix(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0].strip()
    return first in (b"{", b"[")


def parse_transcript(
    data: bytes | str,
    *,
    source: str = "<transcript>",
    key: str | None = None,
    jsonl: bool | None = None,
    format: str | None = None,
) -> Transcript:
    """Parse transcript text (see the module docstring for the formats).

    Args:
        data: the file's bytes (must be UTF-8) or text.
        source: a label for error messages, usually the path.
        key: for a LlamaIndex chat store, the key to read; for a tau-bench list, the entry index; ``None``: the first.
        jsonl: ``True`` forces JSONL, ``False`` forces one JSON document, ``None`` detects.
        format: one of :data:`~ctxbudget.transcript_formats.READ_FORMATS` to skip detection; ``None`` detects.

    Raises:
        TranscriptError: the text is not UTF-8, not JSON, in no format read here, or a message is malformed; or an
            argument has the wrong type (the error names it).
        UsageError: ``format`` is not a format name (the valid names are listed).
    """
    _check_arguments(data, source, key, jsonl)
    forced = None if format is None else check_name(format, READ_FORMATS, "--format")
    text = _decode(data, source)
    if jsonl is None:
        jsonl = _looks_like_jsonl(text)
    if jsonl:
        return _parse_jsonl(text, source, forced)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(
            f"{source}: line {exc.lineno}: invalid JSON at column {exc.colno}: {exc.msg}", field="json"
        ) from None
    except RecursionError:
        raise TranscriptError(f"{source}: {TOO_DEEP}", field="json") from None
    return _parse_document(document, source, key, forced)


def _check_arguments(data: object, source: object, key: object, jsonl: object) -> None:
    expected = (
        ("data", data, isinstance(data, (bytes, bytearray, str)), "bytes or str"),
        ("source", source, isinstance(source, str), "a str"),
        ("key", key, key is None or isinstance(key, str), "a str or None"),
        ("jsonl", jsonl, jsonl is None or isinstance(jsonl, bool), "a bool or None"),
    )
    for name, value, ok, what in expected:
        if not ok:
            raise TranscriptError(f"{name}: must be {what}, got {type(value).__name__}", field=name)


def _decode(data: bytes | str, source: str) -> str:
    if isinstance(data, str):
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TranscriptError(
            f"{source}: invalid UTF-8 at byte offset {exc.start} (line {line}): {exc.reason}", field="encoding"
        ) from None
    return text.removeprefix("\ufeff")


def _looks_like_jsonl(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or not lines[0].lstrip().startswith("{"):
        return False
    try:
        return isinstance(json.loads(lines[0]), dict)
    except json.JSONDecodeError:
        return False
    except RecursionError:  # a deep first line that opens an object: read as JSONL, which names the line
        return True


def _parse_jsonl(text: str, source: str, forced: str | None) -> Transcript:
    raw: list[tuple[Where, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw.append((Where(source, f"line {number}"), json.loads(line)))
        except json.JSONDecodeError as exc:
            raise TranscriptError(
                f"{source}: line {number}: invalid JSON at column {exc.colno}: {exc.msg}", field="json"
            ) from None
        except RecursionError:
            raise TranscriptError(f"{source}: line {number}: {TOO_DEEP}", field="json") from None
    if not raw:
        raise TranscriptError(f"{source}: the transcript holds no messages", field="messages")
    fmt = _chosen(forced, detect_rows([row for _, row in raw]))
    return _from_rows(raw, fmt, source, jsonl=True)


def _chosen(forced: str | None, detected: str) -> str:
    """The format to read: the detected one, or the forced one (a forced name read as the format it stands for)."""
    if forced is None:
        return detected
    choices = _FORCED.get(forced, (forced,))
    return detected if detected in choices else choices[0]


def _from_rows(rows: list[tuple[Where, Any]], fmt: str, source: str, *, jsonl: bool) -> Transcript:
    """Messages given one per row (JSONL lines, or a JSON array / ``messages`` list) in format ``fmt``."""
    if fmt == "claude-code":
        messages = claude_code_rows(rows)
        if not messages:
            raise TranscriptError(f"{source}: the session holds no user or assistant messages", field="messages")
    elif fmt == "anthropic":
        messages = anthropic_rows(rows)
    elif fmt == "responses":
        read = responses_document([row for _, row in rows], source)
        messages = read.messages
    elif fmt in ("openai", "langchain", "langchain-dumpd"):
        messages = openai_rows(rows) if fmt == "openai" else convert_all(rows)
    else:
        return _parse_document([row for _, row in rows], source, None, fmt)
    return Transcript(messages=messages, format=fmt, source=source, jsonl=jsonl)


def _parse_document(document: Any, source: str, key: str | None, forced: str | None) -> Transcript:
    fmt = _chosen(forced, _detected(document, source, forced))
    if fmt == "ctxbudget-compacted":
        if not isinstance(document, Mapping):
            raise TranscriptError(f"{source}: a ctxbudget document is a JSON object", field="format")
        return _parse_compacted(document, source)
    if fmt == "llamaindex":
        store = document.get("store") if isinstance(document, Mapping) else None
        chosen, entries = store_entries(store, source, key)
        where = [(Where(source, f"store[{chosen!r}][{i}]"), entry) for i, entry in enumerate(entries)]
        return Transcript(messages=convert_all(where), format="llamaindex", source=source, key=chosen)
    if fmt in ("tau-bench", "swe-agent", "responses", "anthropic"):
        return _transcript(_read_whole(document, fmt, source, key), fmt, source)
    return _parse_messages(document, fmt, source)


def _detected(document: Any, source: str, forced: str | None) -> str:
    if forced is None:
        return detect_document(document, source)
    try:
        return detect_document(document, source)
    except TranscriptError:
        return forced


def _read_whole(document: Any, fmt: str, source: str, key: str | None) -> Read:
    if fmt == "tau-bench":
        return tau_bench_document(document, source, key)
    if fmt == "swe-agent":
        if not isinstance(document, Mapping):
            raise TranscriptError(
                f"{source}: a SWE-agent trajectory is a JSON object with 'history', got a {type(document).__name__}",
                field="history",
            )
        return swe_agent_document(document, source)
    if fmt == "responses":
        return responses_document(document, source)
    return anthropic_document(document, source)


def _transcript(read: Read, fmt: str, source: str) -> Transcript:
    if not read.messages:
        raise TranscriptError(f"{source}: the transcript holds no messages", field="messages")
    return Transcript(
        messages=read.messages,
        format=fmt,
        source=source,
        key=read.key,
        tools=read.tools,
        envelope=read.envelope,
    )


def _parse_messages(document: Any, fmt: str, source: str) -> Transcript:
    """Chat Completions, LangChain or Claude Code: one message (or event), a list, or a request body."""
    if isinstance(document, Mapping) and not isinstance(document.get("messages"), list):
        return _from_rows([(Where(source, "line 1"), document)], fmt, source, jsonl=False)
    tools: tuple[ToolSchema, ...] = ()
    envelope = None
    label = "messages"
    if isinstance(document, Mapping):
        tools = openai_tools(document.get("tools") or [], source)
        envelope = envelope_of(document, ("messages", "tools"), source)
        document = document["messages"]
    if not isinstance(document, list):
        raise TranscriptError(f"{source}: expected a list of messages, got {type(document).__name__}", field=label)
    if not document:
        raise TranscriptError(f"{source}: the transcript holds no messages", field="messages")
    rows = [(Where(source, f"{label}[{i}]"), entry) for i, entry in enumerate(document)]
    read = _from_rows(rows, fmt, source, jsonl=False)
    return read.model_copy(update={"tools": tools, "envelope": envelope})


def _parse_compacted(document: Mapping[str, Any], source: str) -> Transcript:
    """A ``ctxbudget.compacted/1`` document: messages in ctxbudget's own JSON form (metadata kept), and its state."""
    raw = document.get("messages")
    if not isinstance(raw, list) or not raw:
        raise TranscriptError(f"{source}: 'messages' must be a non-empty list of messages", field="messages")
    messages: list[Message] = []
    seen: dict[str, str] = {}
    for index, entry in enumerate(raw):
        where = Where(source, f"messages[{index}]")
        where.check_tree(entry)
        message = _validated(Message, entry, where)
        if message.id in seen:
            where.fail("id", f"id {message.id!r} is already used by {seen[message.id]}")
        seen[message.id] = where.label
        messages.append(message)
    archive = []
    entries = document.get("archive") or []
    if not isinstance(entries, list):
        raise TranscriptError(f"{source}: 'archive' must be a list of archive entries", field="archive")
    for index, entry in enumerate(entries):
        where = Where(source, f"archive[{index}]")
        where.check_tree(entry)
        archive.append(_validated(ArchiveEntry, entry, where))
    state = CompactedState(
        summary=_optional_text(document, "summary", source),
        goal=_optional_text(document, "goal", source),
        archive=tuple(archive),
    )
    tools = tools_from(document.get("tools") or [], source)
    return Transcript(
        messages=tuple(messages), format="ctxbudget-compacted", source=source, tools=tools, compacted=state
    )


def _validated(model: type[Message] | type[ArchiveEntry], entry: Any, where: Where) -> Any:
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
