"""OpenAI Chat Completions messages and tools, both ways.

``messages_from_openai`` reads what ``client.chat.completions.create(messages=...)`` takes (dicts, or the SDK's
``ChatCompletionMessage`` from a response); ``messages_to_openai`` writes it back. The round trip is exact for
everything the format carries: ``content`` as a string, ``null``, absent or a list of parts; ``tool_calls`` with
their ``arguments`` string as spelled; ``name``; the ``developer`` role (a system message here); any other field
(``refusal``, ``audio``) in the message's provider extras (see :mod:`ctxbudget.providers._common`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import InvalidMessageError
from ..messages._validation import short_repr
from ..messages.message import ContentBlock, Message, ToolCall, ToolSchema
from ._common import (
    PRIVATE_BLOCKS,
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
    "OPENAI_CHAT",
    "message_from_openai",
    "message_to_openai",
    "messages_from_openai",
    "messages_to_openai",
    "to_openai_request",
    "tool_from_openai",
    "tool_to_openai",
]

OPENAI_CHAT = "openai_chat"
"""The provider-extras key of this format."""

_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}
_KNOWN_KEYS = {"role", "content", "name", "tool_calls", "tool_call_id"}
_RESPONSE_KEYS = ("annotations",)
"""Fields of a response's ``ChatCompletionMessage`` that a request does not take back."""


def message_from_openai(message: object, *, path: str = "message") -> Message:
    """One Chat Completions message (a dict or an SDK object) as a :class:`~ctxbudget.Message`.

    Raises:
        InvalidMessageError: not a message of this format (the message names the field).
    """
    data = as_dict(message, path, response_keys=_RESPONSE_KEYS)
    role = data.get("role")
    if role == "function":
        raise invalid(f"{path}.role", "the legacy 'function' role is not supported; send tool results as role 'tool'")
    if not isinstance(role, str) or role not in _ROLES:
        raise invalid(f"{path}.role", f"must be one of {sorted(_ROLES)}, got {short_repr(role)}")
    extras: dict[str, Any] = {}
    if role == "developer":
        extras["role"] = "developer"
    content = _content_from(data, path, extras)
    fields = {key: value for key, value in data.items() if key not in _KNOWN_KEYS}
    if fields:
        extras["fields"] = fields
    calls = _calls_from(data.get("tool_calls"), f"{path}.tool_calls", extras) if "tool_calls" in data else ()
    if "tool_calls" in data and not calls:
        extras["tool_calls"] = data["tool_calls"]  # an empty list (or null) given explicitly
    try:
        return Message(
            role=_ROLES[role],
            content=content,
            name=data.get("name"),
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            metadata=with_extras(OPENAI_CHAT, extras),
        )
    except InvalidMessageError as exc:
        raise InvalidMessageError(f"{path}: {exc}", field=exc.field) from None


def _content_from(data: Mapping[str, Any], path: str, extras: dict[str, Any]) -> str | tuple[ContentBlock, ...]:
    if "content" not in data:
        extras["content"] = "absent"
        return ""
    content = data["content"]
    if content is None:
        extras["content"] = "null"
        return ""
    if isinstance(content, str):
        if not content and data.get("tool_calls"):
            extras["content"] = "string"  # "" beside tool calls (null is the usual spelling)
        return content
    if isinstance(content, list):
        return tuple(block_from_part(part, f"{path}.content[{i}]") for i, part in enumerate(content))
    raise invalid(f"{path}.content", f"must be a string, null or a list of parts, got {type(content).__name__}")


def _calls_from(value: object, path: str, extras: dict[str, Any]) -> tuple[ToolCall, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise invalid(path, f"must be a list of tool calls, got {type(value).__name__}")
    calls: list[ToolCall] = []
    call_extras: dict[str, Any] = {}
    for index, item in enumerate(value):
        call, extra = _call_from(item, f"{path}[{index}]")
        calls.append(call)
        if extra:
            call_extras[call.id] = extra
    if call_extras:
        extras["calls"] = call_extras
    return tuple(calls)


def _call_from(item: object, path: str) -> tuple[ToolCall, dict[str, Any]]:
    call = as_dict(item, path)
    if call.get("type", "function") != "function":
        raise invalid(f"{path}.type", f"only 'function' tool calls are supported, got {short_repr(call.get('type'))}")
    function = as_dict(call.get("function"), f"{path}.function")
    args, raw = parse_arguments(function.get("arguments", "{}"), f"{path}.function.arguments")
    extra: dict[str, Any] = {}
    if raw is not None:
        extra["arguments"] = raw
    if "type" not in call:
        extra["type"] = "absent"
    more = {k: v for k, v in call.items() if k not in {"id", "type", "function"}}
    more_function = {k: v for k, v in function.items() if k not in {"name", "arguments"}}
    if more:
        extra["fields"] = more
    if more_function:
        extra["function"] = more_function
    try:
        return ToolCall(id=call.get("id"), name=function.get("name"), args=args), extra
    except InvalidMessageError as exc:
        raise InvalidMessageError(f"{path}: {exc}", field=exc.field) from None


def messages_from_openai(messages: Iterable[object]) -> list[Message]:
    """A Chat Completions ``messages`` list as :class:`~ctxbudget.Message` objects (see :func:`message_from_openai`)."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidMessageError(
            f"messages: must be a list of Chat Completions messages, got {type(messages).__name__}", field="messages"
        )
    return [message_from_openai(item, path=f"messages[{i}]") for i, item in enumerate(messages)]


def message_to_openai(message: Message) -> dict[str, Any]:
    """A :class:`~ctxbudget.Message` as a Chat Completions message dict (exactly the original, for one read here)."""
    (message,) = our_messages([message])
    extras = extras_of(message, OPENAI_CHAT)
    role = "developer" if message.role == "system" and extras.get("role") == "developer" else message.role
    out: dict[str, Any] = {"role": role}
    content = _content_to(message, extras)
    if content is not _ABSENT:
        out["content"] = content
    if message.name is not None:
        out["name"] = message.name
    if message.tool_calls:
        out["tool_calls"] = [_call_to(call, extras.get("calls", {}).get(call.id, {})) for call in message.tool_calls]
    elif "tool_calls" in extras:
        out["tool_calls"] = extras["tool_calls"]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    for key, value in (extras.get("fields") or {}).items():
        out.setdefault(key, value)
    return out


_ABSENT = object()


def _content_to(message: Message, extras: Mapping[str, Any]) -> object:
    if isinstance(message.content, tuple):
        parts = [part for part in map(_part_to, message.content) if part is not None]
        if parts or not message.content:
            return parts
        return None if message.tool_calls else ""
    if message.content == "":
        marker = extras.get("content")
        if marker == "absent":
            return _ABSENT
        if marker == "null" or (message.tool_calls and marker != "string"):
            return None
    return message.content


def _part_to(block: ContentBlock) -> dict[str, Any] | None:
    if block.type in PRIVATE_BLOCKS:
        return None  # another provider's reasoning: only that provider takes it back
    if block.type in {"image", "input_image"}:
        image = image_url_of(block)
        if image is not None:
            url, detail = image
            return {"type": "image_url", "image_url": {"url": url, **({"detail": detail} if detail else {})}}
    return part_from_block(block, text_keys=() if block.type == "text" else None)


def _call_to(call: ToolCall, extra: Mapping[str, Any]) -> dict[str, Any]:
    function = {"name": call.name, "arguments": arguments_text(call.args, extra.get("arguments"))}
    function.update({k: v for k, v in (extra.get("function") or {}).items() if k not in function})
    out: dict[str, Any] = {"id": call.id, "type": "function", "function": function}
    if extra.get("type") == "absent":
        del out["type"]
    out.update({k: v for k, v in (extra.get("fields") or {}).items() if k not in out})
    return out


def messages_to_openai(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """:class:`~ctxbudget.Message` objects as a Chat Completions ``messages`` list."""
    return [message_to_openai(message) for message in our_messages(messages)]


def tool_from_openai(spec: object) -> ToolSchema:
    """An OpenAI function tool (``{"type": "function", "function": {...}}``) as a :class:`~ctxbudget.ToolSchema`.

    What the schema has no field for (``strict``, an absent ``description``) is kept in its metadata, so
    :func:`tool_to_openai` gives the spec back exactly.
    """
    data = as_dict(spec, "tool")
    if data.get("type", "function") != "function" or not isinstance(data.get("function"), Mapping):
        expected = "an OpenAI function tool {'type': 'function', 'function': {...}}"
        raise invalid("tool", f"expected {expected}, got {short_repr(data)}")
    function = as_dict(data["function"], "tool.function")
    extras: dict[str, Any] = {}
    more = {k: v for k, v in function.items() if k not in {"name", "description", "parameters"}}
    top = {k: v for k, v in data.items() if k not in {"type", "function"}}
    for key, value in (("function", more), ("fields", top)):
        if value:
            extras[key] = value
    for key in ("description", "parameters"):
        if key not in function:
            extras[key] = "absent"
    base = ToolSchema.from_openai(function)
    return base.model_copy(update={"metadata": with_extras(OPENAI_CHAT, extras)}) if extras else base


def tool_to_openai(tool: ToolSchema) -> dict[str, Any]:
    """A :class:`~ctxbudget.ToolSchema` as an OpenAI function tool."""
    extras = tool_extras(our_tool(tool).metadata, OPENAI_CHAT)
    function: dict[str, Any] = {"name": tool.name}
    if extras.get("description") != "absent" or tool.description:
        function["description"] = tool.description
    if extras.get("parameters") != "absent" or tool.parameters:
        function["parameters"] = tool.parameters
    function.update({k: v for k, v in (extras.get("function") or {}).items() if k not in function})
    return {"type": "function", "function": function, **(extras.get("fields") or {})}


def to_openai_request(messages: Iterable[Message], tools: Sequence[ToolSchema] = ()) -> dict[str, Any]:
    """``{"messages": [...], "tools": [...]}``: the arguments of ``client.chat.completions.create`` besides ``model``.

    ``tools`` is left out when there are none (the API refuses an empty list).
    """
    request: dict[str, Any] = {"messages": messages_to_openai(messages)}
    listed = our_tools(tools)
    if listed:
        request["tools"] = [tool_to_openai(tool) for tool in listed]
    return request
