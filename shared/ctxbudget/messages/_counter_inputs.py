"""What every counter does with its inputs: checks them, and keys its content cache on them.

A wrong input is a typed error, never a crash on user text; the cache keys on content, so a session that grows by one
message pays for that message only.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..errors import InvalidMessageError, UsageError
from ._token_chunks import text_digest
from ._validation import JsonValueError, _flat_ascii, check_json, check_utf8, short_repr
from .message import _ARGS_JSON, Message, ToolSchema

_ROLES = frozenset(("system", "user", "assistant", "tool"))

__all__ = [
    "DIGEST_OVER",
    "CallsKey",
    "ContentCache",
    "check_message",
    "check_tools",
    "fields_calls_key",
    "message_key",
    "not_text",
    "text_key",
    "tool_calls_key",
    "utf8_bytes",
]

DIGEST_OVER = 2048
"""Texts longer than this are cached under a digest, so the cache never holds (and pins in memory) big outputs."""

CallsKey = tuple[tuple[str, str, str], ...]
"""``(id, name, arguments JSON)`` of each tool call of a message (:func:`tool_calls_key`)."""


class ContentCache:
    """A bounded, thread-safe cache of counts keyed by content; drops the oldest half when full.

    Args:
        max_entries: how many counts to keep before dropping the oldest half.
    """

    def __init__(self, max_entries: int) -> None:
        self._data: dict[object, int] = {}
        self._max = max_entries
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: object) -> int | None:
        """The count stored under ``key``, or ``None``; tallies a hit or a miss."""
        value = self._data.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: object, value: int) -> None:
        """Store ``value`` under ``key``, first dropping the oldest half when the cache is full."""
        if len(self._data) >= self._max:  # rare: evict under the lock; a plain dict store is atomic under the GIL
            with self._lock:
                if len(self._data) >= self._max:
                    for old in list(self._data)[: self._max // 2]:
                        self._data.pop(old, None)
        self._data[key] = value


def utf8_bytes(text: str) -> int:
    """UTF-8 bytes of ``text``: no byte-level BPE encoding gives it more tokens, as every token is one byte or more.

    A lone surrogate counts the 3 bytes of the replacement character tiktoken encodes in its place.
    """
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def text_key(text: str) -> object:
    """The cache key of ``text``: the text itself, or its length and digest when over :data:`DIGEST_OVER`."""
    if len(text) <= DIGEST_OVER:
        return text
    return (len(text), text_digest(text))


def tool_calls_key(message: Message) -> CallsKey:
    """``(id, name, arguments JSON)`` of each tool call of ``message``."""
    return tuple((call.id, call.name, call.args_json()) for call in message.tool_calls) if message.tool_calls else ()


def message_key(
    message: Message, calls: CallsKey, key_of_text: Callable[[str], object] = text_key
) -> tuple[object, ...]:
    """The cache key of ``message``, whose tool calls are ``calls`` (:func:`tool_calls_key`)."""
    content: object = key_of_text(message.content) if isinstance(message.content, str) else message.content
    if not isinstance(message.content, str):  # blocks carry dicts, which do not hash: key on their JSON
        content = tuple((b.type, b.text, json.dumps(b.data, sort_keys=True, default=str)) for b in message.content)
    return (message.role, message.name, content, message.tool_call_id, calls, message.state)


def not_text(text: object, field: str = "text") -> UsageError:
    """The error for a ``text`` (or the argument ``field``) that is not a ``str``."""
    return UsageError(f"{field}: must be a str, got {type(text).__name__} {short_repr(text)}", field=field)


def check_message(message: object) -> None:
    """Raise :class:`InvalidMessageError` unless ``message`` is a :class:`Message`."""
    if not isinstance(message, Message):
        raise InvalidMessageError(
            f"message: expected ctxbudget.Message, got {type(message).__name__} {short_repr(message)}", field="message"
        )


def fields_calls_key(role: object, content: object, name: object, tool_calls: object, tool_call_id: object) -> CallsKey:
    """The :func:`tool_calls_key` of a message given by its fields (``count_fields``'s), once they are checked.

    Raises:
        UsageError: ``role`` is not a chat role, or ``content``, ``name`` or ``tool_call_id`` not a ``str``.
        InvalidMessageError: a tool call is not ``(id, name, arguments)`` as a :class:`ToolCall` holds them.
    """
    if role not in _ROLES:
        raise UsageError(f"role: must be one of {sorted(_ROLES)}, got {short_repr(role)}", field="role")
    if not isinstance(content, str):
        raise not_text(content, "content")
    for field, value in (("name", name), ("tool_call_id", tool_call_id)):
        if value is not None and not isinstance(value, str):
            raise not_text(value, field)
    if not tool_calls:
        return ()
    if not isinstance(tool_calls, (list, tuple)):
        raise InvalidMessageError(
            f"tool_calls: must be a list or tuple of (id, name, arguments), got {short_repr(tool_calls)}",
            field="tool_calls",
        )
    return tuple(_call_key(index, call) for index, call in enumerate(tool_calls))


def _call_key(index: int, call: object) -> tuple[str, str, str]:
    """``(id, name, arguments JSON)`` of one call given as ``(id, name, arguments)``; a typed error naming it else."""
    if type(call) is tuple and len(call) == 3:
        call_id, name, args = call
        if (  # the common case: ASCII id and name, flat arguments (checked from flags, see check_json)
            type(call_id) is str
            and type(name) is str
            and call_id.isascii()
            and name.isascii()
            and call_id
            and name
            and _flat_ascii(args)
        ):
            return call_id, name, _ARGS_JSON.encode(args)  # ToolCall.args_json's own encoder
    field = f"tool_calls[{index}]"
    if not (isinstance(call, tuple) and len(call) == 3):
        raise InvalidMessageError(f"{field}: must be (id, name, arguments), got {short_repr(call)}", field=field)
    call_id, name, args = call
    try:
        for part, value in (("id", call_id), ("name", name)):
            if not isinstance(value, str) or not value:
                raise JsonValueError(f"{field}: its {part} must be a non-empty str, got {short_repr(value)}")
            check_utf8(f"{field}.{part}", value)
        if not isinstance(args, dict):
            raise JsonValueError(f"{field}: its arguments must be a dict, got {short_repr(args)}")
        check_json(f"{field}.args", args)
    except JsonValueError as exc:
        raise InvalidMessageError(str(exc), field=field) from None
    return call_id, name, _ARGS_JSON.encode(args)


def check_tools(tools: object) -> Sequence[ToolSchema]:
    """``tools`` as a sequence of :class:`ToolSchema` (a set or generator is listed), else a typed error."""
    if isinstance(tools, (list, tuple)):
        listed: Sequence[Any] = tools
    elif isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        raise InvalidMessageError(
            f"tools: must be a sequence of ToolSchema, got {type(tools).__name__} {short_repr(tools)}", field="tools"
        )
    else:
        listed = list(tools)
    for index, tool in enumerate(listed):
        if not isinstance(tool, ToolSchema):
            raise InvalidMessageError(
                f"tools[{index}]: expected ctxbudget.ToolSchema, got {type(tool).__name__}", field="tools"
            )
    return listed
