"""Anthropic Messages, both ways: ``system`` apart, content blocks, tool results folded as Anthropic requires.

Reading (:func:`messages_from_anthropic`): ``system`` becomes a system message; a user message's ``tool_result``
blocks become one tool message each (``is_error`` and ``cache_control`` kept in the extras), its other blocks one user
message after them: results first, wherever they stood in the message, so each call is answered by its result (a
turn with text before its results, which Anthropic refuses, is read in the order Anthropic requires); an assistant
message's ``tool_use`` blocks become its tool calls, its ``text``, ``thinking``,
``redacted_thinking`` and other blocks its content (thinking is kept, and counted, but is not text).

Writing (:func:`messages_to_anthropic`, :func:`to_anthropic_request`): system messages wherever they stand go to
``system``; consecutive tool results are folded into one user message, as Anthropic requires; messages with no
content and no tool calls are left out (Anthropic refuses empty content); other providers' reasoning blocks are
dropped and their images translated. With ``cache_control`` the stable prefix is marked as prompt-cache
breakpoints: the end of the system prompt (which caches the tools before it), the end of the session's summary,
pinned and planned context, and the last message.

The round trip is exact: ``to_anthropic_request(messages_from_anthropic(ms, system=s)) == {"system": s,
"messages": ms}`` when each user message has its ``tool_result`` blocks first, as Anthropic requires; a user message
with other blocks before a result comes back with its results first, nothing lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import InvalidMessageError, InvalidPolicyError
from ..messages._validation import short_repr
from ..messages.message import ContentBlock, Message, ToolCall, ToolSchema
from ._anthropic_cache import PREFIX_MARKS, mark_breakpoints
from ._common import (
    anthropic_image_source,
    as_dict,
    block_from_part,
    extras_of,
    image_url_of,
    invalid,
    our_messages,
    our_tool,
    our_tools,
    part_from_block,
    tool_extras,
    with_extras,
)

__all__ = [
    "ANTHROPIC",
    "CacheControl",
    "messages_from_anthropic",
    "messages_to_anthropic",
    "to_anthropic_request",
    "tool_from_anthropic",
    "tool_to_anthropic",
]

ANTHROPIC = "anthropic"
"""The provider-extras key of this format."""

CacheControl = bool | Mapping[str, Any]
"""``True`` for ``{"type": "ephemeral"}``, a mapping for your own (``{"type": "ephemeral", "ttl": "1h"}``)."""

_RESPONSE_KEYS = ("id", "type", "model", "stop_reason", "stop_sequence", "usage", "container", "context_management")
"""Fields of a response ``Message`` that a request message does not take."""
_TEXT_KEYS = ("cache_control", "citations")


# -- reading ---------------------------------------------------------------------------------------------------
def messages_from_anthropic(messages: Iterable[object], *, system: object = None) -> list[Message]:
    """Anthropic ``messages`` (dicts or SDK objects, a response ``Message`` too) and ``system`` as our messages.

    A user message's ``tool_result`` blocks are read first, one tool message each, wherever they stand in it; its
    other blocks follow as one user message.

    Raises:
        InvalidMessageError: not Anthropic messages (the message names the index and field).
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidMessageError(
            f"messages: must be a list of Anthropic messages, got {type(messages).__name__}", field="messages"
        )
    out = _system_from(system)
    results_open = False  # the previous Anthropic message was a user message ending with tool results
    for index, item in enumerate(messages):
        path = f"messages[{index}]"
        data = as_dict(item, path, response_keys=_RESPONSE_KEYS)
        converted = _message_from(data, path)
        if results_open and converted[0].role == "tool":  # would fold into the previous message: say it does not
            converted[0] = _mark(converted[0], {"new_message": True})
        out.extend(converted)
        last = converted[-1]
        results_open = last.role == "tool"
    return out


def _system_from(system: object) -> list[Message]:
    if system is None:
        return []
    if isinstance(system, str):
        return [Message(role="system", content=system)]
    if isinstance(system, list):
        blocks = tuple(block_from_part(part, f"system[{i}]") for i, part in enumerate(system))
        return [Message(role="system", content=blocks)]
    raise invalid("system", f"must be a string or a list of text blocks, got {type(system).__name__}")


def _message_from(data: dict[str, Any], path: str) -> list[Message]:
    role = data.get("role")
    if role not in ("user", "assistant"):
        raise invalid(f"{path}.role", f"must be 'user' or 'assistant' (system goes in system=), got {short_repr(role)}")
    fields = {key: value for key, value in data.items() if key not in {"role", "content"}}
    content = data.get("content")
    try:
        if isinstance(content, str):
            messages = [Message(role=role, content=content)]
        elif isinstance(content, list):
            messages = _user_from(content, path) if role == "user" else [_assistant_from(content, path)]
        else:
            raise invalid(f"{path}.content", f"must be a string or a list of blocks, got {type(content).__name__}")
    except InvalidMessageError as exc:
        if str(exc).startswith(path):
            raise
        raise InvalidMessageError(f"{path}: {exc}", field=exc.field) from None
    return [_mark(messages[0], {"fields": fields}), *messages[1:]] if fields else messages


def _mark(message: Message, extras: Mapping[str, Any]) -> Message:
    merged = {**extras_of(message, ANTHROPIC), **extras}
    return message.model_copy(update={"metadata": with_extras(ANTHROPIC, merged, message.metadata)})


def _user_from(content: list[Any], path: str) -> list[Message]:
    """Tool results one message each, in order, then the other blocks (in order) one user message after them.

    Results come first wherever they stand in ``content``, so a call is never separated from its result by the
    turn's text; the messages after the first are marked as joined (written back into one user message).
    """
    results: list[Message] = []
    others: list[ContentBlock] = []
    for index, part in enumerate(content):
        where = f"{path}.content[{index}]"
        block = as_dict(part, where)
        if block.get("type") == "tool_result":
            results.append(_result_from(block, where))
        else:
            others.append(block_from_part(block, where))
    messages = [*results, Message(role="user", content=tuple(others))] if others or not results else results
    return [messages[0], *(_mark(m, {"joined": True}) for m in messages[1:])]


def _result_from(block: dict[str, Any], path: str) -> Message:
    extras: dict[str, Any] = {}
    fields = {k: v for k, v in block.items() if k not in {"type", "tool_use_id", "content"}}
    if fields:
        extras["fields"] = fields
    content = block.get("content")
    if "content" not in block:
        extras["content"] = "absent"
        content = ""
    elif isinstance(content, list):
        content = tuple(block_from_part(part, f"{path}.content[{i}]") for i, part in enumerate(content))
    elif not isinstance(content, str):
        raise invalid(f"{path}.content", f"must be a string or a list of blocks, got {type(content).__name__}")
    return Message(
        role="tool", tool_call_id=block.get("tool_use_id"), content=content, metadata=with_extras(ANTHROPIC, extras)
    )


def _assistant_from(content: list[Any], path: str) -> Message:
    blocks: list[ContentBlock] = []
    calls: list[ToolCall] = []
    positions: list[int] = []
    call_extras: dict[str, Any] = {}
    for index, part in enumerate(content):
        where = f"{path}.content[{index}]"
        block = as_dict(part, where)
        if block.get("type") != "tool_use":
            blocks.append(block_from_part(block, where))
            continue
        positions.append(index)
        fields = {k: v for k, v in block.items() if k not in {"type", "id", "name", "input"}}
        if not isinstance(block.get("input"), Mapping):
            raise invalid(f"{where}.input", f"must be an object, got {short_repr(block.get('input'))}")
        calls.append(ToolCall(id=block.get("id"), name=block.get("name"), args=dict(block["input"])))
        if fields:
            call_extras[calls[-1].id] = fields
    extras: dict[str, Any] = {}
    if call_extras:
        extras["calls"] = call_extras
    if positions != list(range(len(blocks), len(content))):  # tool_use blocks not all at the end
        extras["tool_use_at"] = positions
    if not content:
        extras["content"] = "list"
    return Message(
        role="assistant",
        content=tuple(blocks) if blocks else "",
        tool_calls=tuple(calls),
        metadata=with_extras(ANTHROPIC, extras),
    )


def tool_from_anthropic(spec: object) -> ToolSchema:
    """An Anthropic tool (``{"name", "description", "input_schema"}``) as a :class:`~ctxbudget.ToolSchema`.

    Other keys (``cache_control``, a server tool's ``type``) are kept in its metadata.
    """
    data = as_dict(spec, "tool")
    schema = data.get("input_schema", {})
    if not isinstance(schema, Mapping):
        raise invalid("tool.input_schema", f"must be a JSON Schema object, got {type(schema).__name__}")
    extras: dict[str, Any] = {}
    fields = {k: v for k, v in data.items() if k not in {"name", "description", "input_schema"}}
    if fields:
        extras["fields"] = fields
    for key in ("description", "input_schema"):
        if key not in data:
            extras[key] = "absent"
    try:
        return ToolSchema(
            name=data.get("name"),
            description=data.get("description", ""),
            parameters=dict(schema),
            metadata=with_extras(ANTHROPIC, extras),
        )
    except InvalidMessageError as exc:
        raise InvalidMessageError(f"tool: {exc}", field=exc.field) from None


# -- writing ---------------------------------------------------------------------------------------------------
def tool_to_anthropic(tool: ToolSchema) -> dict[str, Any]:
    """A :class:`~ctxbudget.ToolSchema` as an Anthropic tool (``input_schema`` defaults to an empty object)."""
    extras = tool_extras(our_tool(tool).metadata, ANTHROPIC)
    out: dict[str, Any] = {"name": tool.name}
    if extras.get("description") != "absent" or tool.description:
        out["description"] = tool.description
    if extras.get("input_schema") != "absent" or tool.parameters:
        out["input_schema"] = tool.parameters or {"type": "object", "properties": {}}
    out.update({k: v for k, v in (extras.get("fields") or {}).items() if k not in out})
    return out


def messages_to_anthropic(messages: Iterable[Message]) -> dict[str, Any]:
    """``{"system": ..., "messages": [...]}`` for ``messages`` (``system`` left out when there is none)."""
    system: list[Message] = []
    writer = _Writer()
    for message in our_messages(messages):
        if message.role == "system":
            system.append(message)
        else:
            writer.add(message)
    request: dict[str, Any] = {}
    system_value = _system_to(system) if system else None
    if system_value:
        request["system"] = system_value
    request["messages"] = writer.out
    return request


class _Writer:
    """Appends messages in Anthropic's shape, folding tool results (and the parts of one message) together."""

    def __init__(self) -> None:
        self.out: list[dict[str, Any]] = []
        self.results_open = False  # the last entry is a user message of tool results, still open to more
        self.foldable = False  # the last entry came from the history (never fold into the session's prefix)

    def add(self, message: Message) -> None:
        extras = extras_of(message, ANTHROPIC)
        joined = bool(extras.get("joined")) and self.foldable and self.out[-1]["role"] == "user"
        if message.role == "tool":
            block = _result_to(message, extras)
            if joined or (self.results_open and not extras.get("new_message")):
                self.out[-1]["content"].append(block)
            else:
                self.out.append({"role": "user", "content": [block]})
            self.results_open, self.foldable = True, True
            return
        content = _content_to(message, extras)
        if not content and not message.tool_calls and extras.get("content") != "list":
            return  # Anthropic refuses empty content: nothing to send
        self.results_open = False
        self.foldable = message.metadata.get("ctxbudget") not in PREFIX_MARKS
        if joined and isinstance(content, list) and message.role == "user":
            self.out[-1]["content"].extend(content)
            return
        entry: dict[str, Any] = {"role": message.role, "content": content}
        entry.update({k: v for k, v in (extras.get("fields") or {}).items() if k not in entry})
        self.out.append(entry)


def _content_to(message: Message, extras: Mapping[str, Any]) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str) and not message.tool_calls:
        return [] if not message.content and extras.get("content") == "list" else message.content
    blocks = _blocks_to(message.content)
    if not message.tool_calls:
        return blocks
    call_extras = extras.get("calls") or {}
    uses = [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.args, **call_extras.get(call.id, {})}
        for call in message.tool_calls
    ]
    positions = extras.get("tool_use_at")
    if isinstance(positions, list) and _valid_positions(positions, len(blocks), len(uses)):
        by_position = dict(zip(positions, uses, strict=True))
        pending = iter(blocks)
        return [by_position[i] if i in by_position else next(pending) for i in range(len(blocks) + len(uses))]
    return [*blocks, *uses]


def _valid_positions(positions: list[Any], blocks: int, uses: int) -> bool:
    """``tool_use_at`` still fits the message: one distinct in-range index per call, in order."""
    if len(positions) != uses or not all(isinstance(p, int) and 0 <= p < blocks + uses for p in positions):
        return False
    return sorted(set(positions)) == positions


def _blocks_to(content: str | tuple[ContentBlock, ...]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for block in content:
        converted = _block_to(block)
        if converted is not None:
            blocks.append(converted)
    return blocks


def _block_to(block: ContentBlock) -> dict[str, Any] | None:
    if block.type == "reasoning":
        return None  # an OpenAI reasoning item: only OpenAI takes it back
    if block.type in {"image_url", "input_image"}:
        image = image_url_of(block)
        return {"type": "image", "source": anthropic_image_source(image[0])} if image else None
    if block.type == "text" and block.text is not None:
        return part_from_block(block, text_keys=_TEXT_KEYS) if block.text else None  # no empty text blocks
    return part_from_block(block)


def _result_to(message: Message, extras: Mapping[str, Any]) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if isinstance(message.content, tuple):
        block["content"] = _blocks_to(message.content)
    elif message.content or extras.get("content") != "absent":
        block["content"] = message.content
    block.update({k: v for k, v in (extras.get("fields") or {}).items() if k not in block})
    return block


def _system_to(system: Sequence[Message]) -> str | list[dict[str, Any]]:
    if len(system) == 1 and isinstance(system[0].content, str):
        return system[0].content
    blocks: list[dict[str, Any]] = []
    for message in system:
        blocks.extend(b for b in _blocks_to(message.content) if b.get("type") == "text")
    return blocks


# -- whole requests --------------------------------------------------------------------------------------------
def to_anthropic_request(
    messages: Iterable[Message], tools: Sequence[ToolSchema] = (), *, cache_control: CacheControl = False
) -> dict[str, Any]:
    """``{"system", "messages", "tools"}``: the arguments of ``client.messages.create`` besides the model.

    ``system`` and ``tools`` are left out when empty; pass ``model`` and ``max_tokens`` yourself.

    Args:
        messages: the request's messages (a :class:`~ctxbudget.BuiltRequest`'s, or any).
        tools: the tool schemas.
        cache_control: mark prompt-cache breakpoints on the stable prefix (see the module docstring); at most
            four breakpoints are sent, counting those the messages already carry.
    """
    listed = our_messages(messages)
    request = messages_to_anthropic(listed)
    schemas = our_tools(tools)
    if schemas:
        request["tools"] = [tool_to_anthropic(tool) for tool in schemas]
    if not isinstance(cache_control, (bool, Mapping)):
        raise InvalidPolicyError(
            "cache_control: must be a bool or a mapping such as {'type': 'ephemeral'}, got "
            f"{short_repr(cache_control)}",
            field="cache_control",
        )
    if cache_control:
        marker = dict(cache_control) if isinstance(cache_control, Mapping) else {"type": "ephemeral"}
        mark_breakpoints(request, listed, marker)
    return {key: request[key] for key in ("system", "messages", "tools") if key in request}
