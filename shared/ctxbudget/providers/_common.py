"""What the provider converters share: SDK objects as dicts, the metadata slot for provider extras, typed errors.

A provider message often carries something :class:`~ctxbudget.Message` has no field for (``content: null`` rather
than ``""``, an ``is_error`` flag, a Responses item id). The converters keep it in the message's metadata under
``metadata["provider"][<format>]`` (the *extras*), so converting back to the same format gives the original
exactly; a converter for another format ignores extras that are not its own. Extras that describe the content are
checked against the message as it is now: a message the session bounded or cleared is emitted as it is now.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InvalidMessageError
from ..messages._foreign import foreign_problem
from ..messages._validation import JsonValueError, NotJsonError, parse_json, short_repr
from ..messages.message import REASONING_BLOCKS, ContentBlock, Message, ToolSchema

__all__ = [
    "PRIVATE_BLOCKS",
    "PROVIDER_META",
    "anthropic_image_source",
    "arguments_text",
    "as_dict",
    "block_from_part",
    "extras_of",
    "image_url_of",
    "invalid",
    "our_messages",
    "our_tool",
    "our_tools",
    "parse_arguments",
    "part_from_block",
    "tool_extras",
    "with_extras",
]

PROVIDER_META = "provider"
"""The metadata key under which converters keep what a provider message carries beyond our fields."""


def invalid(path: str, problem: str) -> InvalidMessageError:
    """The :class:`InvalidMessageError` to raise for ``path`` (``messages[3].content[0]``)."""
    return InvalidMessageError(f"{path}: {problem}", field=path.split("[", 1)[0].split(".", 1)[0] or None)


def as_dict(value: object, path: str, *, response_keys: Iterable[str] = ()) -> dict[str, Any]:
    """``value`` as a plain dict: a mapping as given, an OpenAI/Anthropic SDK model as its request form.

    An SDK model (a response message, an output item) is dumped with the fields it was given, without the ones
    that are ``None`` and without ``response_keys`` (fields a response has that a request may not send back).
    """
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise invalid(path, "keys must be strings")
        return dict(value)
    dump = getattr(value, "to_dict", None) or getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        dumped = dump()
        if isinstance(dumped, dict):
            skip = set(response_keys)
            return {key: item for key, item in dumped.items() if item is not None and key not in skip}
    got = f"{type(value).__name__} {short_repr(value)}"
    raise invalid(path, f"expected a dict (or an OpenAI/Anthropic SDK object), got {got}")


def our_messages(messages: object) -> list[Message]:
    """``messages`` (any iterable of :class:`~ctxbudget.Message`) as a list, for a writer; else a typed error.

    Raises:
        InvalidMessageError: ``messages`` is not an iterable of messages (naming the first item that is not one,
            and the converter for a LangChain or LlamaIndex message).
    """
    if isinstance(messages, (str, bytes, Mapping, Message)) or not isinstance(messages, Iterable):
        got = f"{type(messages).__name__} {short_repr(messages)}"
        raise InvalidMessageError(f"messages: must be a sequence of ctxbudget.Message, got {got}", field="messages")
    listed = list(messages)
    for index, message in enumerate(listed):
        if not isinstance(message, Message):
            problem = foreign_problem(message, "ctxbudget.Message") or (
                f"expected ctxbudget.Message, got {type(message).__name__}"
            )
            raise InvalidMessageError(f"messages[{index}]: {problem}", field="messages")
    return listed


def our_tool(tool: object, path: str = "tool") -> ToolSchema:
    """``tool`` itself when it is a :class:`~ctxbudget.ToolSchema`; else an :class:`InvalidMessageError`."""
    if not isinstance(tool, ToolSchema):
        got = f"{type(tool).__name__} {short_repr(tool)}"
        raise InvalidMessageError(f"{path}: expected ctxbudget.ToolSchema, got {got}", field="tools")
    return tool


def our_tools(tools: object) -> list[ToolSchema]:
    """``tools`` (any iterable of :class:`~ctxbudget.ToolSchema`) as a list; else an :class:`InvalidMessageError`."""
    if isinstance(tools, (str, bytes, Mapping, ToolSchema)) or not isinstance(tools, Iterable):
        got = f"{type(tools).__name__} {short_repr(tools)}"
        raise InvalidMessageError(f"tools: must be a sequence of ctxbudget.ToolSchema, got {got}", field="tools")
    return [our_tool(tool, f"tools[{index}]") for index, tool in enumerate(tools)]


def extras_of(message: Message, fmt: str) -> dict[str, Any]:
    """The extras ``fmt``'s converter stored on ``message`` (empty when none)."""
    slot = message.metadata.get(PROVIDER_META)
    mine = slot.get(fmt) if isinstance(slot, dict) else None
    return mine if isinstance(mine, dict) else {}


def with_extras(fmt: str, extras: Mapping[str, Any], metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Metadata holding ``extras`` for ``fmt`` (nothing added when there are none)."""
    result = dict(metadata or {})
    if extras:
        result[PROVIDER_META] = {fmt: dict(extras)}
    return result


def tool_extras(metadata: Mapping[str, Any], fmt: str) -> dict[str, Any]:
    """The extras ``fmt``'s converter stored on a tool schema's metadata."""
    slot = metadata.get(PROVIDER_META)
    mine = slot.get(fmt) if isinstance(slot, dict) else None
    return mine if isinstance(mine, dict) else {}


def block_from_part(part: object, path: str, text_types: Iterable[str] = ("text",)) -> ContentBlock:
    """One content part (``{"type": ..., ...}``) as a :class:`ContentBlock`; text parts become ``type="text"``."""
    item = as_dict(part, path)
    kind = item.get("type")
    if not isinstance(kind, str) or not kind:
        raise invalid(f"{path}.type", f"a content part needs a non-empty 'type', got {short_repr(kind)}")
    rest = {key: value for key, value in item.items() if key != "type"}
    if kind in text_types:
        text = rest.pop("text", None)
        if not isinstance(text, str):
            raise invalid(f"{path}.text", f"a {kind!r} part needs a string 'text', got {short_repr(text)}")
        return ContentBlock(type="text", text=text, data=rest)
    return ContentBlock(type=kind, data=rest)


def part_from_block(
    block: ContentBlock, text_type: str = "text", text_keys: Iterable[str] | None = None
) -> dict[str, Any]:
    """A :class:`ContentBlock` as a content part; ``text_keys`` limits what a text part carries besides its text."""
    if block.type == "text" and block.text is not None:
        data = block.data if text_keys is None else {k: v for k, v in block.data.items() if k in set(text_keys)}
        return {"type": text_type, "text": block.text, **data}
    part: dict[str, Any] = {"type": block.type, **block.data}
    if block.text is not None:
        part["text"] = block.text
    return part


def parse_arguments(raw: object, path: str) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments (a JSON string or an object) as ``(args, raw)``; ``raw`` is kept when it differs.

    ``raw`` is ``None`` when ``args`` serialises back to exactly the given string (compact JSON), so only unusual
    spellings (spaces, key order, text that is not JSON or not an object, as from a truncated reply) cost metadata.

    Raises:
        InvalidMessageError: ``raw`` is neither a string nor a mapping, or it is JSON a snapshot cannot hold
            (nested past 100 levels, an integer past 4,300 digits), named by ``path``.
    """
    if isinstance(raw, Mapping):
        return dict(raw), None
    if not isinstance(raw, str):
        raise invalid(path, f"arguments must be a JSON string, got {type(raw).__name__} {short_repr(raw)}")
    try:
        parsed = parse_json(raw, path)
    except NotJsonError:
        return {}, raw
    except JsonValueError as exc:
        raise invalid(path, str(exc).removeprefix(f"{path}: ")) from None
    if not isinstance(parsed, dict):
        return {}, raw
    compact = json.dumps(parsed, ensure_ascii=False, separators=(",", ":"))
    return parsed, None if compact == raw else raw


def arguments_text(args: Mapping[str, Any], raw: object) -> str:
    """The arguments string to send: the stored original when it still stands for ``args``, else compact JSON."""
    if isinstance(raw, str):
        try:
            value = parse_json(raw, "arguments")
        except ValueError:  # not JSON, or JSON no message could hold: it stands for no arguments we hold
            value = None
        if (isinstance(value, dict) and value == args) or (not args and not isinstance(value, dict)):
            return raw
    return json.dumps(dict(args), ensure_ascii=False, separators=(",", ":"))


PRIVATE_BLOCKS = REASONING_BLOCKS
"""Reasoning blocks only the provider that produced them accepts back: another format's converter drops them."""


def image_url_of(block: ContentBlock) -> tuple[str, str | None] | None:
    """``(url, detail)`` of an image block in any of the three formats (a data URL for base64), else ``None``."""
    data = block.data
    if block.type == "image_url" and isinstance(data.get("image_url"), Mapping):
        url, detail = data["image_url"].get("url"), data["image_url"].get("detail")
    elif block.type == "input_image":
        url, detail = data.get("image_url"), data.get("detail")
    elif block.type == "image" and isinstance(data.get("source"), Mapping):
        source, detail = data["source"], None
        if source.get("type") == "base64":
            url = f"data:{source.get('media_type')};base64,{source.get('data')}"
        else:
            url = source.get("url")
    else:
        return None
    return (url, detail if isinstance(detail, str) else None) if isinstance(url, str) else None


def anthropic_image_source(url: str) -> dict[str, Any]:
    """An Anthropic image ``source`` for ``url``: base64 for a data URL, else a URL source."""
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[5:].split(";base64,", 1)
        return {"type": "base64", "media_type": media_type, "data": data}
    return {"type": "url", "url": url}
