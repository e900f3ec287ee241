r"""Read real transcripts into ctxbudget :class:`~ctxbudget.messages.Message` objects.

Formats, detected from the file's shape (the core parses their JSON; it never imports a framework):

* **OpenAI chat** JSON: a list of messages, or ``{"messages": [...], "tools": [...]}``.
* **JSONL**: one message per line, in any of the message shapes below (blank lines are skipped).
* **LangChain** ``messages_to_dict`` dumps (``{"type": "human", "data": {...}}``) and ``dumpd`` lc-serialized
  messages (``{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"], "kwargs": {...}}``).
* **LlamaIndex** ``SimpleChatStore`` JSON (``{"store": {key: [ChatMessage, ...]}}``): the chosen key, else the first.
* **ctxbudget compacted** documents (``{"format": "ctxbudget.compacted/1", ...}``, what ``ctxbudget compact``
  writes): the messages as sent, metadata included, plus :attr:`Transcript.compacted`: the summary, the goal and
  the archive of every original that left, so compacting again carries them forward.

Every problem raises :class:`~ctxbudget.errors.TranscriptError` naming where (``line 7`` for JSONL, ``messages[3]``
for JSON) and the field (``role``, ``tool_calls[0].id``); invalid UTF-8 names the byte offset. Text that is not
valid Unicode (a lone surrogate such as a ``\ud800`` escape, anywhere in a message or a tool spec) and JSON nested
more than :data:`MAX_DEPTH` levels are rejected the same way, so nothing read here fails later when it is printed,
written or sent. Messages keep the id the transcript gave them, else get a deterministic ``transcript-<index>`` id,
so two reads agree.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .archive import ArchiveEntry
from .errors import InvalidMessageError, TranscriptError
from .messages import ContentBlock, Message, MessageRole, ToolCall, ToolSchema

__all__ = [
    "COMPACTED_FORMAT",
    "MAX_DEPTH",
    "CompactedState",
    "Transcript",
    "TranscriptFormat",
    "load_transcript",
    "parse_transcript",
]

COMPACTED_FORMAT = "ctxbudget.compacted/1"
"""The ``format`` field of a file ``ctxbudget compact`` writes."""

MAX_DEPTH = 128
"""How deeply a message (or a tool spec, or a tool call's arguments) may nest JSON arrays and objects."""
_TOO_DEEP = f"JSON is nested too deeply to read (a message may nest at most {MAX_DEPTH} levels)"

TranscriptFormat = Literal["openai", "jsonl", "langchain", "langchain-dumpd", "llamaindex", "ctxbudget-compacted"]
"""The shape a transcript was read from."""

_ROLES: dict[str, MessageRole] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "chatbot": "assistant",
    "model": "assistant",
    "tool": "tool",
}
_LC_CLASSES: dict[str, str] = {
    "HumanMessage": "human",
    "AIMessage": "ai",
    "ToolMessage": "tool",
    "SystemMessage": "system",
    "ChatMessage": "chat",
    "HumanMessageChunk": "human",
    "AIMessageChunk": "ai",
    "ToolMessageChunk": "tool",
    "SystemMessageChunk": "system",
    "ChatMessageChunk": "chat",
}
_LC_TYPES = frozenset({"human", "ai", "tool", "system", "chat", *(n for n in _LC_CLASSES)})


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
    key: str | None = Field(default=None, description="The LlamaIndex chat-store key read, when there was one.")
    tools: tuple[ToolSchema, ...] = Field(default=(), description="Tool schemas the transcript declared, if any.")
    compacted: CompactedState | None = Field(
        default=None, description="For a document ``ctxbudget compact`` wrote: its summary, goal and archive."
    )


class _Where:
    """Where a message sits, for error messages: ``line 7`` (JSONL) or ``messages[3]`` (JSON)."""

    def __init__(self, source: str, label: str) -> None:
        self.source = source
        self.label = label

    def fail(self, field: str, problem: str) -> NoReturn:
        raise TranscriptError(f"{self.source}: {self.label}: field {field!r}: {problem}", field=field)

    def check_tree(self, value: Any, field: str = "") -> None:
        r"""Fail on text that is not valid Unicode (a lone surrogate) or nesting deeper than :data:`MAX_DEPTH`.

        ``json.loads`` turns a ``\ud800`` escape into a lone surrogate, which cannot be encoded as UTF-8: the
        transcript would read, then fail when it is printed, written or sent. Iterative, so no depth overflows it.
        """
        stack: list[tuple[Any, str, int]] = [(value, field, 0)]
        while stack:
            item, path, depth = stack.pop()
            if isinstance(item, str):
                _check_text(self, item, path or "message")
            elif isinstance(item, (Mapping, list, tuple)):
                if depth >= MAX_DEPTH:
                    shown = path if len(path) <= 80 else f"{path[:60]}...{path[-17:]}"
                    self.fail(shown or "message", f"nested more than {MAX_DEPTH} levels deep")
                if isinstance(item, Mapping):
                    for key, child in item.items():
                        name = str(key)
                        if isinstance(key, str):
                            _check_text(self, key, f"{path}.{name}" if path else name, "key")
                        stack.append((child, f"{path}.{name}" if path else name, depth + 1))
                else:
                    stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))


def _check_text(where: _Where, text: str, field: str, what: str = "text") -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        where.fail(
            field,
            f"{what} holds a lone surrogate {text[exc.start]!r} at index {exc.start}, which is not valid Unicode",
        )


def load_transcript(path: str | os.PathLike[str], *, key: str | None = None) -> Transcript:
    """Read the transcript at ``path``.

    A ``.jsonl`` suffix means JSONL, unless the file is one pretty-printed JSON document (as
    ``ctxbudget compact --in-place`` leaves it); other files are detected by shape.

    Args:
        path: the file to read.
        key: for a LlamaIndex chat store, the key to read; ``None`` reads the first.

    Raises:
        TranscriptError: the file cannot be read, is not UTF-8, not JSON, or a message is malformed.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TranscriptError(f"path: must be a str or os.PathLike, got {type(path).__name__}", field="path")
    file = Path(path)
    # The label is for messages and reports: a file name that is not UTF-8 is shown with \x escapes, not as
    # surrogates that could not be printed or written.
    label = os.fsencode(file).decode("utf-8", "backslashreplace")
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise TranscriptError(f"{label}: cannot read transcript: {exc.strerror or exc}", field="path") from exc
    jsonl = True if file.suffix == ".jsonl" and not _pretty_document(data) else None
    return parse_transcript(data, source=label, key=key, jsonl=jsonl)


def _pretty_document(data: bytes) -> bool:
    """Whether ``data`` opens with a line that is only ``{`` or ``[``: never a JSONL line, always a JSON document."""
    first = data.removeprefix(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0].strip()
    return first in (b"{", b"[")


def parse_transcript(
    data: bytes | str, *, source: str = "<transcript>", key: str | None = None, jsonl: bool | None = None
) -> Transcript:
    """Parse transcript text (see the module docstring for the formats).

    Args:
        data: the file's bytes (must be UTF-8) or text.
        source: a label for error messages, usually the path.
        key: for a LlamaIndex chat store, the key to read; ``None`` reads the first.
        jsonl: ``True`` forces JSONL, ``False`` forces one JSON document, ``None`` detects.

    Raises:
        TranscriptError: the text is not UTF-8, not JSON, or a message is malformed; or an argument has the wrong
            type (the error names it).
    """
    _check_arguments(data, source, key, jsonl)
    text = _decode(data, source)
    if jsonl is None:
        jsonl = _looks_like_jsonl(text)
    if jsonl:
        return _parse_jsonl(text, source)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(
            f"{source}: line {exc.lineno}: invalid JSON at column {exc.colno}: {exc.msg}", field="json"
        ) from None
    except RecursionError:
        raise TranscriptError(f"{source}: {_TOO_DEEP}", field="json") from None
    return _parse_document(document, source, key)


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


def _parse_jsonl(text: str, source: str) -> Transcript:
    raw: list[tuple[_Where, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw.append((_Where(source, f"line {number}"), json.loads(line)))
        except json.JSONDecodeError as exc:
            raise TranscriptError(
                f"{source}: line {number}: invalid JSON at column {exc.colno}: {exc.msg}", field="json"
            ) from None
        except RecursionError:
            raise TranscriptError(f"{source}: line {number}: {_TOO_DEEP}", field="json") from None
    if not raw:
        raise TranscriptError(f"{source}: the transcript holds no messages", field="messages")
    return Transcript(messages=_convert_all(raw), format="jsonl", source=source)


def _parse_document(document: Any, source: str, key: str | None) -> Transcript:
    if isinstance(document, Mapping) and document.get("format") == COMPACTED_FORMAT:
        return _parse_compacted(document, source)
    if isinstance(document, Mapping) and "store" in document:
        chosen, entries = _store_entries(document["store"], source, key)
        where = [(_Where(source, f"store[{chosen!r}][{i}]"), entry) for i, entry in enumerate(entries)]
        return Transcript(messages=_convert_all(where), format="llamaindex", source=source, key=chosen)
    tools: tuple[ToolSchema, ...] = ()
    label = ""
    single = isinstance(document, Mapping) and ("role" in document or ("type" in document and "data" in document))
    if single or (isinstance(document, Mapping) and _format_of(document) != "openai"):
        return Transcript(messages=_convert_all([(_Where(source, "line 1"), document)]), format="jsonl", source=source)
    if isinstance(document, Mapping) and "messages" in document:
        tools = _tools(document.get("tools") or [], source)
        document, label = document["messages"], "messages"
    if not isinstance(document, list):
        raise TranscriptError(
            f"{source}: expected a list of messages, {{'messages': [...]}} or a chat store "
            f"{{'store': {{...}}}}, got {type(document).__name__}",
            field=label or "messages",
        )
    if not document:
        raise TranscriptError(f"{source}: the transcript holds no messages", field="messages")
    where = [(_Where(source, f"{label or 'messages'}[{i}]"), entry) for i, entry in enumerate(document)]
    return Transcript(messages=_convert_all(where), format=_format_of(document[0]), source=source, tools=tools)


def _parse_compacted(document: Mapping[str, Any], source: str) -> Transcript:
    """A ``ctxbudget.compacted/1`` document: messages in ctxbudget's own JSON form (metadata kept), and its state."""
    raw = document.get("messages")
    if not isinstance(raw, list) or not raw:
        raise TranscriptError(f"{source}: 'messages' must be a non-empty list of messages", field="messages")
    messages: list[Message] = []
    seen: dict[str, str] = {}
    for index, entry in enumerate(raw):
        where = _Where(source, f"messages[{index}]")
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
        where = _Where(source, f"archive[{index}]")
        where.check_tree(entry)
        archive.append(_validated(ArchiveEntry, entry, where))
    state = CompactedState(
        summary=_optional_text(document, "summary", source),
        goal=_optional_text(document, "goal", source),
        archive=tuple(archive),
    )
    tools = _tools(document.get("tools") or [], source)
    return Transcript(
        messages=tuple(messages), format="ctxbudget-compacted", source=source, tools=tools, compacted=state
    )


def _validated(model: type[Message] | type[ArchiveEntry], entry: Any, where: _Where) -> Any:
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
        _Where(source, field).check_tree(value, field)
    return value


def _store_entries(store: Any, source: str, key: str | None) -> tuple[str, list[Any]]:
    if not isinstance(store, Mapping) or not store:
        raise TranscriptError(f"{source}: 'store' must be a non-empty object of key -> messages", field="store")
    chosen = key if key is not None else next(iter(store))
    if chosen not in store:
        raise TranscriptError(
            f"{source}: chat store has no key {chosen!r}; keys: {sorted(store)[:10]}", field="store.key"
        )
    entries = store[chosen]
    _Where(source, "store").check_tree(chosen, "key")
    if not isinstance(entries, list) or not entries:
        raise TranscriptError(f"{source}: store[{chosen!r}] must be a non-empty list of messages", field="store")
    return str(chosen), entries


def _tools(specs: Any, source: str) -> tuple[ToolSchema, ...]:
    if not isinstance(specs, list):
        raise TranscriptError(f"{source}: 'tools' must be a list of tool specs", field="tools")
    tools = []
    for index, spec in enumerate(specs):
        where = _Where(source, f"tools[{index}]")
        if not isinstance(spec, Mapping):
            where.fail("tools", f"not an OpenAI tool spec: expected an object, got {type(spec).__name__}")
        where.check_tree(spec)
        function = spec.get("function", spec)
        prefix = "function." if "function" in spec else ""
        if not isinstance(function, Mapping):
            where.fail("function", f"expected an object, got {type(function).__name__}")
        parameters = function.get("parameters")
        if parameters is not None and not isinstance(parameters, Mapping):
            where.fail(f"{prefix}parameters", f"expected a JSON Schema object, got {type(parameters).__name__}")
        try:
            tools.append(ToolSchema.from_openai(spec))
        except (KeyError, TypeError, AttributeError, ValueError, ValidationError) as exc:
            # ValueError covers InvalidMessageError (a UsageError) and dict() of a malformed value.
            raise TranscriptError(f"{source}: tools[{index}]: not an OpenAI tool spec ({exc})", field="tools") from None
    return tuple(tools)


def _format_of(entry: Any) -> TranscriptFormat:
    if isinstance(entry, Mapping):
        if entry.get("lc") is not None and entry.get("type") == "constructor":
            return "langchain-dumpd"
        if "data" in entry and _is_lc_type(entry.get("type")):
            return "langchain"
    return "openai"


def _is_lc_type(value: Any) -> bool:
    """A LangChain ``messages_to_dict`` type (a string: JSON may hold any value there)."""
    return isinstance(value, str) and value in _LC_TYPES


def _convert_all(entries: Sequence[tuple[_Where, Any]]) -> tuple[Message, ...]:
    messages: list[Message] = []
    seen: dict[str, str] = {}
    for index, (where, entry) in enumerate(entries):
        where.check_tree(entry)
        message = _convert(entry, where, index)
        if message.id in seen:
            where.fail("id", f"id {message.id!r} is already used by {seen[message.id]}")
        seen[message.id] = where.label
        messages.append(message)
    return tuple(messages)


def _convert(entry: Any, where: _Where, index: int) -> Message:
    if not isinstance(entry, Mapping):
        where.fail("message", f"expected a JSON object, got {type(entry).__name__}")
    if entry.get("lc") is not None and entry.get("type") == "constructor":
        return _from_langchain(_lc_type_of(entry, where), entry.get("kwargs"), where, index, "kwargs")
    if "data" in entry and _is_lc_type(entry.get("type")):
        return _from_langchain(str(entry["type"]), entry["data"], where, index, "data")
    if "data" in entry and "type" in entry and "role" not in entry:
        where.fail("type", f"unsupported LangChain message type {entry['type']!r}; expected one of {sorted(_LC_TYPES)}")
    return _from_role_dict(entry, where, index)


def _lc_type_of(entry: Mapping[str, Any], where: _Where) -> str:
    path = entry.get("id")
    name = path[-1] if isinstance(path, list) and path else None
    if not isinstance(name, str) or name not in _LC_CLASSES:
        where.fail("id", f"unsupported LangChain class {name!r}; expected one of {sorted(_LC_CLASSES)}")
    return _LC_CLASSES[str(name)]


def _from_langchain(kind: str, data: Any, where: _Where, index: int, prefix: str) -> Message:
    if not isinstance(data, Mapping):
        where.fail(prefix, f"expected an object, got {type(data).__name__}")
    kind = _LC_CLASSES.get(kind, kind)
    role_name = str(data.get("role", "")) if kind == "chat" else kind
    role = _role(role_name, where, f"{prefix}.role" if kind == "chat" else "type")
    extra = data.get("additional_kwargs") or {}
    calls: tuple[ToolCall, ...] = ()
    if role == "assistant":
        if data.get("tool_calls"):
            calls = _lc_calls(data["tool_calls"], where, f"{prefix}.tool_calls")
        elif isinstance(extra, Mapping) and extra.get("tool_calls"):
            calls = _openai_calls(extra["tool_calls"], where, f"{prefix}.additional_kwargs.tool_calls")
    call_id = data.get("tool_call_id") if role == "tool" else None
    return _build(
        where,
        index,
        role=role,
        content=_content(data.get("content", ""), where, f"{prefix}.content"),
        name=data.get("name"),
        tool_calls=calls,
        tool_call_id=call_id,
        given_id=data.get("id"),
        id_field=f"{prefix}.tool_call_id",
    )


def _from_role_dict(entry: Mapping[str, Any], where: _Where, index: int) -> Message:
    if "role" not in entry:
        where.fail("role", "missing; every message needs a role (system, user, assistant or tool)")
    role = _role(entry["role"], where, "role")
    extra = entry.get("additional_kwargs") or {}
    if not isinstance(extra, Mapping):
        where.fail("additional_kwargs", f"expected an object, got {type(extra).__name__}")
    if "blocks" in entry:
        content, block_calls = _llama_blocks(entry["blocks"], where)
    else:
        content, block_calls = _content(entry.get("content"), where, "content"), ()
    calls: tuple[ToolCall, ...] = ()
    if role == "assistant":
        calls = block_calls
        if entry.get("tool_calls"):
            calls = _openai_calls(entry["tool_calls"], where, "tool_calls")
        elif extra.get("tool_calls") and not calls:
            calls = _openai_calls(extra["tool_calls"], where, "additional_kwargs.tool_calls")
    call_id = (entry.get("tool_call_id") or extra.get("tool_call_id")) if role == "tool" else None
    return _build(
        where,
        index,
        role=role,
        content=content,
        name=entry.get("name") or (extra.get("name") if role == "tool" else None),
        tool_calls=calls,
        tool_call_id=call_id,
        given_id=entry.get("id"),
        id_field="tool_call_id",
    )


def _role(value: Any, where: _Where, field: str) -> MessageRole:
    role = _ROLES.get(str(value).lower()) if isinstance(value, str) else None
    if role is None:
        where.fail(field, f"unsupported role {value!r}; expected one of {sorted(_ROLES)}")
    return role


def _build(
    where: _Where,
    index: int,
    *,
    role: MessageRole,
    content: str | tuple[ContentBlock, ...],
    name: Any,
    tool_calls: tuple[ToolCall, ...],
    tool_call_id: Any,
    given_id: Any,
    id_field: str,
) -> Message:
    if role == "tool" and not (isinstance(tool_call_id, str) and tool_call_id):
        where.fail(id_field, "a tool message must name the call it answers")
    if name is not None and not isinstance(name, str):
        where.fail("name", f"expected a string, got {type(name).__name__}")
    message_id = given_id if isinstance(given_id, str) and given_id else f"transcript-{index}"
    try:
        return Message(
            role=role,
            content=content,
            name=name or None,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id if role == "tool" else None,
            id=message_id,
        )
    except InvalidMessageError as exc:
        where.fail(exc.field or "message", str(exc))
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "message"
        where.fail(field, str(first["msg"]))


def _content(value: Any, where: _Where, field: str) -> str | tuple[ContentBlock, ...]:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        where.fail(field, f"expected a string or a list of content parts, got {type(value).__name__}")
    blocks = []
    for i, part in enumerate(value):
        if isinstance(part, str):
            blocks.append(ContentBlock(type="text", text=part))
        elif isinstance(part, Mapping) and isinstance(part.get("type"), str) and part["type"]:
            text = part.get("text") if part["type"] == "text" else None
            if part["type"] == "text" and not isinstance(text, str):
                where.fail(f"{field}[{i}].text", "a text part needs a string 'text'")
            data = {k: v for k, v in part.items() if k not in ("type", "text")}
            blocks.append(ContentBlock(type=part["type"], text=text, data=data))
        else:
            where.fail(f"{field}[{i}]", "expected a string or an object with a 'type'")
    return _flatten(blocks)


def _flatten(blocks: list[ContentBlock]) -> str | tuple[ContentBlock, ...]:
    """Text-only content becomes one string (counted the same: Message.text joins text blocks with newlines)."""
    if all(block.type == "text" and not block.data for block in blocks):
        return "\n".join(block.text or "" for block in blocks)
    return tuple(blocks)


def _llama_blocks(value: Any, where: _Where) -> tuple[str | tuple[ContentBlock, ...], tuple[ToolCall, ...]]:
    if not isinstance(value, list):
        where.fail("blocks", f"expected a list of blocks, got {type(value).__name__}")
    blocks: list[ContentBlock] = []
    calls: list[ToolCall] = []
    for i, block in enumerate(value):
        kind = block.get("block_type") if isinstance(block, Mapping) else None
        if not isinstance(kind, str) or not kind:
            where.fail(f"blocks[{i}].block_type", "missing; every LlamaIndex block names its block_type")
        if kind == "tool_call":
            args = _args(block.get("tool_kwargs", {}), where, f"blocks[{i}].tool_kwargs")
            calls.append(_call(block.get("tool_call_id"), block.get("tool_name"), args, where, f"blocks[{i}]"))
        elif kind == "text":
            if not isinstance(block.get("text"), str):
                where.fail(f"blocks[{i}].text", "a text block needs a string 'text'")
            blocks.append(ContentBlock(type="text", text=block["text"]))
        else:
            blocks.append(ContentBlock(type=kind, data={k: v for k, v in block.items() if k != "block_type"}))
    return _flatten(blocks), tuple(calls)


def _openai_calls(value: Any, where: _Where, field: str) -> tuple[ToolCall, ...]:
    if not isinstance(value, list):
        where.fail(field, f"expected a list of tool calls, got {type(value).__name__}")
    calls = []
    for i, spec in enumerate(value):
        if isinstance(spec, Mapping) and "function" not in spec and "name" in spec:
            calls.append(_flat_call(spec, where, f"{field}[{i}]"))  # flat {id, name, args}: ctxbudget, LangChain
            continue
        function = spec.get("function") if isinstance(spec, Mapping) else None
        if not isinstance(function, Mapping):
            where.fail(f"{field}[{i}].function", "missing; an OpenAI tool call is {id, type, function: {...}}")
        args = _args(function.get("arguments", "{}"), where, f"{field}[{i}].function.arguments")
        calls.append(_call(spec.get("id"), function.get("name"), args, where, f"{field}[{i}]"))
    return tuple(calls)


def _lc_calls(value: Any, where: _Where, field: str) -> tuple[ToolCall, ...]:
    if not isinstance(value, list):
        where.fail(field, f"expected a list of tool calls, got {type(value).__name__}")
    return tuple(_flat_call(spec, where, f"{field}[{i}]") for i, spec in enumerate(value))


def _flat_call(spec: Any, where: _Where, field: str) -> ToolCall:
    if not isinstance(spec, Mapping):
        where.fail(field, f"expected an object, got {type(spec).__name__}")
    return _call(spec.get("id"), spec.get("name"), _args(spec.get("args", {}), where, f"{field}.args"), where, field)


def _args(value: Any, where: _Where, field: str) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError as exc:
            where.fail(field, f"arguments are not valid JSON ({exc.msg} at column {exc.colno})")
        except RecursionError:
            where.fail(field, f"arguments are nested more than {MAX_DEPTH} levels deep")
        where.check_tree(value, field)
    if not isinstance(value, Mapping):
        where.fail(field, f"arguments must be a JSON object, got {type(value).__name__}")
    return dict(value)


def _call(call_id: Any, name: Any, args: dict[str, Any], where: _Where, field: str) -> ToolCall:
    if not isinstance(call_id, str) or not call_id:
        where.fail(f"{field}.id", "a tool call needs a non-empty string id")
    if not isinstance(name, str) or not name:
        where.fail(f"{field}.name", "a tool call needs a non-empty string name")
    return ToolCall(id=call_id, name=name, args=args)
