"""The lenient reader of role dicts, LangChain dumps and LlamaIndex chat stores (no framework imported).

Reads OpenAI-like role dicts (``human``/``ai`` roles, LlamaIndex ``blocks``, ``additional_kwargs`` tool calls, flat
``{id, name, args}`` calls), LangChain ``messages_to_dict`` and ``dumpd`` messages, and LlamaIndex ``SimpleChatStore``
entries. Every problem raises :class:`~ctxbudget.errors.TranscriptError` naming where and the field. Messages keep
the id the transcript gave them, else get a deterministic ``transcript-<index>`` id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ...errors import InvalidMessageError, TranscriptError
from ...messages.message import ContentBlock, Message, MessageRole, ToolCall, ToolSchema
from ._where import MAX_DEPTH, Where

__all__ = ["LC_TYPES", "convert_all", "convert_one", "is_langchain", "store_entries", "tools_from"]

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
LC_TYPES = frozenset({"human", "ai", "tool", "system", "chat", *(n for n in _LC_CLASSES)})


def store_entries(store: Any, source: str, key: str | None) -> tuple[str, list[Any]]:
    """The chosen key of a LlamaIndex chat store (``key``, else the first) and its entries."""
    if not isinstance(store, Mapping) or not store:
        raise TranscriptError(f"{source}: 'store' must be a non-empty object of key -> messages", field="store")
    chosen = key if key is not None else next(iter(store))
    if chosen not in store:
        raise TranscriptError(
            f"{source}: chat store has no key {chosen!r}; keys: {sorted(store)[:10]}", field="store.key"
        )
    entries = store[chosen]
    Where(source, "store").check_tree(chosen, "key")
    if not isinstance(entries, list) or not entries:
        raise TranscriptError(f"{source}: store[{chosen!r}] must be a non-empty list of messages", field="store")
    return str(chosen), entries


def tools_from(specs: Any, source: str) -> tuple[ToolSchema, ...]:
    """OpenAI tool specs (``{"type": "function", "function": {...}}`` or the bare function) as tool schemas."""
    if not isinstance(specs, list):
        raise TranscriptError(f"{source}: 'tools' must be a list of tool specs", field="tools")
    tools = []
    for index, spec in enumerate(specs):
        where = Where(source, f"tools[{index}]")
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


def _is_lc_type(value: Any) -> bool:
    """A LangChain ``messages_to_dict`` type (a string: JSON may hold any value there)."""
    return isinstance(value, str) and value in LC_TYPES


def is_langchain(entry: Any) -> str | None:
    """``"langchain-dumpd"`` or ``"langchain"`` when ``entry`` is a LangChain message dump, else ``None``."""
    if isinstance(entry, Mapping):
        if entry.get("lc") is not None and entry.get("type") == "constructor":
            return "langchain-dumpd"
        if "data" in entry and _is_lc_type(entry.get("type")):
            return "langchain"
    return None


def convert_all(entries: Sequence[tuple[Where, Any]]) -> tuple[Message, ...]:
    """Every entry as a :class:`Message` (checked, ids kept or ``transcript-<index>``, duplicates refused)."""
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


def convert_one(entry: Any, where: Where, index: int, *, checked: bool = False) -> Message:
    """One entry as a :class:`Message` (checked unless ``checked``; its id kept, else ``transcript-<index>``)."""
    if not checked:
        where.check_tree(entry)
    return _convert(entry, where, index)


def _convert(entry: Any, where: Where, index: int) -> Message:
    if not isinstance(entry, Mapping):
        where.fail("message", f"expected a JSON object, got {type(entry).__name__}")
    if entry.get("lc") is not None and entry.get("type") == "constructor":
        return _from_langchain(_lc_type_of(entry, where), entry.get("kwargs"), where, index, "kwargs")
    if "data" in entry and _is_lc_type(entry.get("type")):
        return _from_langchain(str(entry["type"]), entry["data"], where, index, "data")
    if "data" in entry and "type" in entry and "role" not in entry:
        where.fail("type", f"unsupported LangChain message type {entry['type']!r}; expected one of {sorted(LC_TYPES)}")
    return _from_role_dict(entry, where, index)


def _lc_type_of(entry: Mapping[str, Any], where: Where) -> str:
    path = entry.get("id")
    name = path[-1] if isinstance(path, list) and path else None
    if not isinstance(name, str) or name not in _LC_CLASSES:
        where.fail("id", f"unsupported LangChain class {name!r}; expected one of {sorted(_LC_CLASSES)}")
    return _LC_CLASSES[str(name)]


def _from_langchain(kind: str, data: Any, where: Where, index: int, prefix: str) -> Message:
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


def _from_role_dict(entry: Mapping[str, Any], where: Where, index: int) -> Message:
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


def _role(value: Any, where: Where, field: str) -> MessageRole:
    role = _ROLES.get(str(value).lower()) if isinstance(value, str) else None
    if role is None:
        where.fail(field, f"unsupported role {value!r}; expected one of {sorted(_ROLES)}")
    return role


def _build(
    where: Where,
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


def _content(value: Any, where: Where, field: str) -> str | tuple[ContentBlock, ...]:
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


def _llama_blocks(value: Any, where: Where) -> tuple[str | tuple[ContentBlock, ...], tuple[ToolCall, ...]]:
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


def _openai_calls(value: Any, where: Where, field: str) -> tuple[ToolCall, ...]:
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


def _lc_calls(value: Any, where: Where, field: str) -> tuple[ToolCall, ...]:
    if not isinstance(value, list):
        where.fail(field, f"expected a list of tool calls, got {type(value).__name__}")
    return tuple(_flat_call(spec, where, f"{field}[{i}]") for i, spec in enumerate(value))


def _flat_call(spec: Any, where: Where, field: str) -> ToolCall:
    if not isinstance(spec, Mapping):
        where.fail(field, f"expected an object, got {type(spec).__name__}")
    return _call(spec.get("id"), spec.get("name"), _args(spec.get("args", {}), where, f"{field}.args"), where, field)


def _args(value: Any, where: Where, field: str) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError as exc:
            where.fail(field, f"arguments are not valid JSON ({exc.msg} at column {exc.colno})")
        except RecursionError:
            where.fail(field, f"arguments are nested more than {MAX_DEPTH} levels deep")
        except ValueError:  # an integer of more digits than Python converts
            where.fail(field, "arguments hold a JSON integer with more digits than Python reads (4,300)")
        where.check_tree(value, field)
    if not isinstance(value, Mapping):
        where.fail(field, f"arguments must be a JSON object, got {type(value).__name__}")
    return dict(value)


def _call(call_id: Any, name: Any, args: dict[str, Any], where: Where, field: str) -> ToolCall:
    if not isinstance(call_id, str) or not call_id:
        where.fail(f"{field}.id", "a tool call needs a non-empty string id")
    if not isinstance(name, str) or not name:
        where.fail(f"{field}.name", "a tool call needs a non-empty string name")
    return ToolCall(id=call_id, name=name, args=args)
