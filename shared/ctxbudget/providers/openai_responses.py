"""OpenAI Responses API input items, both ways.

Reading (:func:`messages_from_responses`): a ``message`` item (typed or the easy ``{"role", "content"}`` form)
becomes a message of its role (``developer`` a system message); a ``function_call_output`` a tool message; a run
of consecutive assistant-side items (``reasoning``, assistant ``message``, ``function_call``, and any other output
item such as ``web_search_call``) becomes *one* assistant message, so parallel calls share the message their
results answer. ``input_text``/``output_text`` parts become text blocks, reasoning items ``reasoning`` blocks (kept,
counted, never shown as text). Item ids, statuses and the run's item layout are kept in the extras.

Writing (:func:`messages_to_responses`) rebuilds the items exactly for messages read here, and the canonical items
for any other message. ``to_responses_request`` gives ``client.responses.create`` its ``input`` and ``tools``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import InvalidMessageError
from ..messages._validation import short_repr
from ..messages.message import ContentBlock, Message, ToolCall, ToolSchema
from ._common import (
    arguments_text,
    as_dict,
    block_from_part,
    extras_of,
    image_url_of,
    invalid,
    our_messages,
    our_tool,
    our_tools,
    parse_arguments,
    part_from_block,
    tool_extras,
    with_extras,
)

__all__ = [
    "OPENAI_RESPONSES",
    "is_responses_item",
    "messages_from_responses",
    "messages_to_responses",
    "to_responses_request",
    "tool_from_responses",
    "tool_to_responses",
]

OPENAI_RESPONSES = "openai_responses"
"""The provider-extras key of this format."""

_TEXT_TYPES = ("input_text", "output_text")
_ROLES = {"user": "user", "system": "system", "developer": "system", "assistant": "assistant"}


# -- reading ---------------------------------------------------------------------------------------------------
def is_responses_item(item: object) -> bool:
    """``item`` is a Responses item (it has a ``type``), not a Chat Completions message (which never does)."""
    kind = item.get("type") if isinstance(item, Mapping) else getattr(item, "type", None)
    return isinstance(kind, str)


def messages_from_responses(items: Iterable[object]) -> list[Message]:
    """Responses ``input`` items (dicts, or a response's ``output`` items) as our messages.

    Raises:
        InvalidMessageError: not Responses items (the message names the index and field).
    """
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise InvalidMessageError(
            f"input: must be a list of Responses input items, got {type(items).__name__}", field="input"
        )
    messages: list[Message] = []
    run: list[tuple[str, dict[str, Any]]] = []  # the assistant-side items not yet made a message
    for index, item in enumerate(items):
        path = f"input[{index}]"
        data = as_dict(item, path)
        if _assistant_side(data):
            run.append((path, data))
            continue
        if run:
            messages.append(_assistant_from(run))
            run = []
        messages.append(_other_from(data, path))
    if run:
        messages.append(_assistant_from(run))
    return messages


def _assistant_side(item: Mapping[str, Any]) -> bool:
    kind = item.get("type", "message")
    if kind == "message":
        return bool(item.get("role") == "assistant")
    return bool(kind != "function_call_output")


def _other_from(item: dict[str, Any], path: str) -> Message:
    kind = item.get("type")
    try:
        if kind == "function_call_output":
            return _output_from(item, path)
        return _message_from(item, path)
    except InvalidMessageError as exc:
        if str(exc).startswith(path):
            raise
        raise InvalidMessageError(f"{path}: {exc}", field=exc.field) from None


def _message_from(item: dict[str, Any], path: str) -> Message:
    role = item.get("role")
    if not isinstance(role, str) or role not in _ROLES:
        raise invalid(f"{path}.role", f"must be one of {sorted(_ROLES)}, got {short_repr(role)}")
    extras: dict[str, Any] = {}
    if role == "developer":
        extras["role"] = "developer"
    if "type" not in item:
        extras["untyped"] = True
    content, types = _content_from(item.get("content"), f"{path}.content", "input_text")
    if types:
        extras["types"] = types
    fields = {k: v for k, v in item.items() if k not in {"type", "role", "content"}}
    if fields:
        extras["fields"] = fields
    return Message(role=_ROLES[role], content=content, metadata=with_extras(OPENAI_RESPONSES, extras))


def _content_from(content: object, path: str, text_type: str) -> tuple[str | tuple[ContentBlock, ...], dict[str, str]]:
    """Content and the text parts whose type is not the role's usual one (``{index: type}``)."""
    if isinstance(content, str):
        return content, {}
    if not isinstance(content, list):
        raise invalid(path, f"must be a string or a list of parts, got {type(content).__name__}")
    blocks: list[ContentBlock] = []
    types: dict[str, str] = {}
    for index, part in enumerate(content):
        block = block_from_part(part, f"{path}[{index}]", _TEXT_TYPES)
        original = as_dict(part, path).get("type")
        if block.type == "text" and original != text_type:
            types[str(index)] = str(original)
        blocks.append(block)
    return tuple(blocks), types


def _output_from(item: dict[str, Any], path: str) -> Message:
    extras: dict[str, Any] = {}
    content, types = _content_from(item.get("output"), f"{path}.output", "input_text")
    if types:
        extras["types"] = types
    fields = {k: v for k, v in item.items() if k not in {"type", "call_id", "output"}}
    if fields:
        extras["fields"] = fields
    return Message(
        role="tool",
        tool_call_id=item.get("call_id"),
        content=content,
        metadata=with_extras(OPENAI_RESPONSES, extras),
    )


def _assistant_from(run: list[tuple[str, dict[str, Any]]]) -> Message:
    """One assistant message from a run of items; ``items`` records each item's layout for the way back."""
    blocks: list[ContentBlock] = []
    calls: list[ToolCall] = []
    layout: list[dict[str, Any]] = []
    for path, item in run:
        kind = item.get("type", "message")
        entry: dict[str, Any] = {"type": kind} if "type" in item else {"untyped": True}
        if kind == "message":
            content, types = _content_from(item.get("content"), f"{path}.content", "output_text")
            parts = [ContentBlock(type="text", text=content)] if isinstance(content, str) else list(content)
            entry.update(parts=len(parts), string=isinstance(content, str), types=types)
            entry["fields"] = {k: v for k, v in item.items() if k not in {"type", "role", "content"}}
            blocks.extend(parts)
        elif kind == "function_call":
            args, raw = parse_arguments(item.get("arguments", "{}"), f"{path}.arguments")
            try:
                calls.append(ToolCall(id=item.get("call_id"), name=item.get("name"), args=args))
            except InvalidMessageError as exc:
                raise InvalidMessageError(f"{path}: {exc}", field=exc.field) from None
            entry.update(arguments=raw, fields={k: v for k, v in item.items() if k not in _CALL_KEYS})
        else:  # reasoning, or another output item: kept whole as one block
            blocks.append(ContentBlock(type=kind, data={k: v for k, v in item.items() if k != "type"}))
        layout.append(entry)
    return Message(
        role="assistant",
        content=tuple(blocks) if blocks else "",
        tool_calls=tuple(calls),
        metadata=with_extras(OPENAI_RESPONSES, {"items": layout}),
    )


_CALL_KEYS = {"type", "call_id", "name", "arguments"}


def tool_from_responses(spec: object) -> ToolSchema:
    """A Responses function tool (``{"type": "function", "name", "description", "parameters"}``) as a schema."""
    data = as_dict(spec, "tool")
    if data.get("type") != "function":
        raise invalid("tool.type", f"only function tools convert to a ToolSchema, got {short_repr(data.get('type'))}")
    extras: dict[str, Any] = {}
    fields = {k: v for k, v in data.items() if k not in {"type", "name", "description", "parameters"}}
    if fields:
        extras["fields"] = fields
    for key in ("description", "parameters"):
        if key not in data or data[key] is None:
            extras[key] = "absent" if key not in data else "null"
    try:
        return ToolSchema(
            name=data.get("name"),
            description=data.get("description") or "",
            parameters=_schema(data.get("parameters")),
            metadata=with_extras(OPENAI_RESPONSES, extras),
        )
    except InvalidMessageError as exc:
        raise InvalidMessageError(f"tool: {exc}", field=exc.field) from None


def _schema(value: object) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise invalid("tool.parameters", f"must be a JSON Schema object, got {type(value).__name__}")
    return dict(value)


# -- writing ---------------------------------------------------------------------------------------------------
def tool_to_responses(tool: ToolSchema) -> dict[str, Any]:
    """A :class:`~ctxbudget.ToolSchema` as a Responses function tool."""
    extras = tool_extras(our_tool(tool).metadata, OPENAI_RESPONSES)
    out: dict[str, Any] = {"type": "function", "name": tool.name}
    for key, value in (("description", tool.description), ("parameters", tool.parameters)):
        marker = extras.get(key)
        if value or marker is None:
            out[key] = value
        elif marker == "null":
            out[key] = None
    out.update({k: v for k, v in (extras.get("fields") or {}).items() if k not in out})
    return out


def messages_to_responses(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Our messages as Responses ``input`` items."""
    items: list[dict[str, Any]] = []
    for message in our_messages(messages):
        extras = extras_of(message, OPENAI_RESPONSES)
        if message.role == "assistant":
            items.extend(_assistant_to(message, extras))
        elif message.role == "tool":
            items.append(_output_to(message, extras))
        else:
            items.append(_message_to(message, extras))
    return items


def _parts_to(content: str | tuple[ContentBlock, ...], text_type: str, types: object) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    overrides = types if isinstance(types, Mapping) else {}
    parts: list[dict[str, Any]] = []
    for index, block in enumerate(content):
        part = _part_to(block, str(overrides.get(str(index), text_type)))
        if part is not None:
            parts.append(part)
    return parts


def _part_to(block: ContentBlock, text_type: str) -> dict[str, Any] | None:
    if block.type in {"thinking", "redacted_thinking", "reasoning"}:
        return None  # reasoning belongs in reasoning items, another provider's not at all
    if block.type in {"image_url", "image"}:
        image = image_url_of(block)
        if image is not None:
            url, detail = image
            return {"type": "input_image", "image_url": url, "detail": detail or "auto"}
    if block.type == "text" and block.text is not None:
        keys = ("annotations", "logprobs") if text_type == "output_text" else ()
        return part_from_block(block, text_type=text_type, text_keys=keys)
    return part_from_block(block)


def _message_to(message: Message, extras: Mapping[str, Any]) -> dict[str, Any]:
    role = "developer" if message.role == "system" and extras.get("role") == "developer" else message.role
    item: dict[str, Any] = {} if extras.get("untyped") else {"type": "message"}
    item.update(role=role, content=_parts_to(message.content, "input_text", extras.get("types")))
    item.update({k: v for k, v in (extras.get("fields") or {}).items() if k not in item})
    return item


def _output_to(message: Message, extras: Mapping[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "function_call_output", "call_id": message.tool_call_id}
    item["output"] = _parts_to(message.content, "input_text", extras.get("types"))
    item.update({k: v for k, v in (extras.get("fields") or {}).items() if k not in item})
    return item


def _call_to(call: ToolCall, raw: object = None, fields: Mapping[str, Any] | None = None) -> dict[str, Any]:
    item = {"type": "function_call", "call_id": call.id, "name": call.name}
    item["arguments"] = arguments_text(call.args, raw)
    item.update({k: v for k, v in (fields or {}).items() if k not in item})
    return item


def _assistant_to(message: Message, extras: Mapping[str, Any]) -> list[dict[str, Any]]:
    blocks = list(message.content) if isinstance(message.content, tuple) else []
    layout = extras.get("items")
    if isinstance(layout, list) and _fits(layout, message, blocks):
        return _rebuild(layout, blocks, list(message.tool_calls))
    items: list[dict[str, Any]] = []
    texts: list[ContentBlock] = []
    for block in blocks:
        if block.type == "reasoning":
            items.append({"type": "reasoning", **block.data})
        elif block.type not in {"thinking", "redacted_thinking"}:
            texts.append(block)
    if isinstance(message.content, str) and message.content:
        items.append({"type": "message", "role": "assistant", "content": message.content})
    elif texts:
        items.append({"type": "message", "role": "assistant", "content": _parts_to(tuple(texts), "output_text", {})})
    items.extend(_call_to(call) for call in message.tool_calls)
    return items


def _fits(layout: list[Any], message: Message, blocks: list[ContentBlock]) -> bool:
    """The stored layout still describes the message (a bounded or edited message falls back to canonical)."""
    if isinstance(message.content, str) and message.content:
        return False
    if not all(isinstance(entry, Mapping) for entry in layout):
        return False
    kinds = [entry.get("type", "message") for entry in layout]
    wanted = sum(_parts_of(entry) for entry, kind in zip(layout, kinds, strict=True) if kind == "message")
    wanted += sum(1 for kind in kinds if kind not in {"message", "function_call"})
    return wanted == len(blocks) and kinds.count("function_call") == len(message.tool_calls)


def _parts_of(entry: Mapping[str, Any]) -> int:
    parts = entry.get("parts", 0)
    return parts if isinstance(parts, int) and not isinstance(parts, bool) and parts >= 0 else -1


def _rebuild(
    layout: list[Mapping[str, Any]], blocks: list[ContentBlock], calls: list[ToolCall]
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    next_block, next_call = 0, 0
    for entry in layout:
        kind = entry.get("type", "message")
        typed = {} if entry.get("untyped") else {"type": kind}
        if kind == "message":
            parts = tuple(blocks[next_block : next_block + _parts_of(entry)])
            next_block += len(parts)
            string = entry.get("string") and len(parts) == 1 and parts[0].text is not None
            content = parts[0].text if string else _parts_to(parts, "output_text", entry.get("types"))
            items.append({**typed, "role": "assistant", "content": content, **(entry.get("fields") or {})})
        elif kind == "function_call":
            items.append(_call_to(calls[next_call], entry.get("arguments"), entry.get("fields")))
            next_call += 1
        else:
            block = blocks[next_block]
            next_block += 1
            items.append({**typed, **block.data})
    return items


def to_responses_request(messages: Iterable[Message], tools: Sequence[ToolSchema] = ()) -> dict[str, Any]:
    """``{"input": [...], "tools": [...]}``: ``client.responses.create`` arguments besides ``model``."""
    request: dict[str, Any] = {"input": messages_to_responses(messages)}
    listed = our_tools(tools)
    if listed:
        request["tools"] = [tool_to_responses(tool) for tool in listed]
    return request
