"""LangChain messages and tools <-> ctxbudget's framework-neutral model, cached so each call pays for new messages.

* :class:`MessageConverter` turns ``BaseMessage`` objects into :class:`~ctxbudget.Message` (ids preserved; an id is
  assigned, in place, to a message that has none, as LangChain's own middleware does, so ``RemoveMessage`` can
  target it) and back. A tool call without an id gets ``call_<message id>_<index>`` (see :func:`with_tool_call_ids`):
  the converted message and the LangChain message handed back both carry it, so the call sent and its result (real
  or synthesized) always name the same call. Both directions are cached by message id and checked by identity
  first, so converting a history that grew by one message costs one conversion.
* :func:`tool_schemas` turns ``BaseTool`` objects, functions and dicts into :class:`~ctxbudget.ToolSchema` via
  ``convert_to_openai_tool`` (cached per tool object).
* :func:`usage_of` reads the provider-reported ``usage_metadata`` of an ``AIMessage``.

A tool output bounded by the middleware carries ``response_metadata["ctxbudget"] = {"handle": ...}`` and, until it
is persisted in the archive, the full original under ``"original"``; neither is ever sent to a provider.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from ctxbudget.compaction import ARCHIVE_META
from ctxbudget.compaction.tiers import CLEARED_META
from ctxbudget.errors import InvalidMessageError
from ctxbudget.messages import Message, MessageRole, ToolCall, ToolSchema, new_message_id
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.utils.function_calling import convert_to_openai_tool

from ._content import blocks_of, content_to_langchain

__all__ = [
    "CTXBUDGET_KEY",
    "MessageConverter",
    "content_to_langchain",
    "ensure_id",
    "from_langchain",
    "lacks_tool_call_ids",
    "role_of",
    "to_langchain",
    "tool_calls_of",
    "tool_schemas",
    "usage_of",
    "with_tool_call_ids",
]

CTXBUDGET_KEY = "ctxbudget"
"""Key under ``response_metadata`` where the adapter keeps its marks (archive handle, kind)."""

_ROLES: dict[str, MessageRole] = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
}


def ensure_id(message: BaseMessage) -> str:
    """Return ``message.id``, assigning a fresh one in place when it has none (:func:`new_message_id`, ``lc_``)."""
    if not message.id:
        message.id = new_message_id("lc_")
    return message.id


def role_of(message: BaseMessage) -> MessageRole:
    """The chat role ``message`` converts to (``InvalidMessageError`` for a type or role with none)."""
    if isinstance(message, ChatMessage):
        key = message.role.lower()
    elif isinstance(message, FunctionMessage):
        key = "tool"
    else:
        key = message.type
    role = _ROLES.get(key)
    if role is None:
        raise InvalidMessageError(
            f"message.type: cannot map a {type(message).__name__} of type/role {key!r} to a chat role "
            f"(known: {sorted(_ROLES)})",
            field="type",
        )
    return role


def _call_id(message_id: str, index: int) -> str:
    """The id a tool call without one gets: stable for the message, unique within the request."""
    return f"call_{message_id}_{index}"


def tool_calls_of(message: AIMessage, message_id: str) -> tuple[ToolCall, ...]:
    """The core form of ``message``'s tool calls; a call without an id gets ``call_<message id>_<index>``.

    Raises:
        InvalidMessageError: a call is not one a ctxbudget :class:`~ctxbudget.ToolCall` can hold (naming the field).
    """
    return tuple(
        ToolCall(id=call.get("id") or _call_id(message_id, index), name=call["name"], args=dict(call["args"]))
        for index, call in enumerate(message.tool_calls)
    )


def lacks_tool_call_ids(message: BaseMessage) -> bool:
    """Whether ``message`` is an ``AIMessage`` with a tool call whose ``id`` is missing or empty."""
    if not isinstance(message, AIMessage):
        return False
    calls = message.tool_calls
    return bool(calls) and not all(call.get("id") for call in calls)


def with_tool_call_ids(message: BaseMessage) -> BaseMessage:
    """``message`` itself, or (for tool calls without an id) a copy whose calls carry the ids ctxbudget gives them.

    The ids are the ones :func:`from_langchain` assigns (``call_<message id>_<index>``), so a result ctxbudget
    synthesizes for such a call answers the id the provider is sent. The message gets an id in place when it has
    none (:func:`ensure_id`); its tool calls are never modified in place.
    """
    if not isinstance(message, AIMessage) or not lacks_tool_call_ids(message):
        return message
    message_id = ensure_id(message)
    calls = [
        call if call.get("id") else {**call, "id": _call_id(message_id, index)}
        for index, call in enumerate(message.tool_calls)
    ]
    return message.model_copy(update={"tool_calls": calls})


_ROLE_OF_CLASS: dict[type, MessageRole] = {
    HumanMessage: "user",
    AIMessage: "assistant",
    ToolMessage: "tool",
    SystemMessage: "system",
}
"""The role of each core message class (its ``type`` is fixed); any other class goes through :func:`role_of`."""


def from_langchain(message: BaseMessage) -> Message:
    """Convert one LangChain message (an id is assigned in place when missing).

    Raises:
        InvalidMessageError: ``message`` is not a LangChain ``BaseMessage`` (``field="message"``).
    """
    if not isinstance(message, BaseMessage):
        raise InvalidMessageError(
            f"message: expected a LangChain BaseMessage, got {type(message).__name__}", field="message"
        )
    message_id = message.id or ensure_id(message)
    role = _ROLE_OF_CLASS.get(type(message)) or role_of(message)
    marks = message.response_metadata.get(CTXBUDGET_KEY)
    metadata: dict[str, Any] = {"lc_type": message.type}
    if isinstance(marks, dict):
        if isinstance(marks.get("handle"), str):
            metadata[ARCHIVE_META] = marks["handle"]
        if marks.get("cleared") is True:
            metadata[CLEARED_META] = True
    tool_call_id: str | None = None
    if role == "tool":
        tool_call_id = getattr(message, "tool_call_id", None) or message.name or message_id
    content = message.content
    return Message(
        role=role,
        content=content if isinstance(content, str) else blocks_of(content),
        name=message.name,
        tool_calls=tool_calls_of(message, message_id) if isinstance(message, AIMessage) and message.tool_calls else (),
        tool_call_id=tool_call_id,
        metadata=metadata,
        id=message_id,
    )


def _marks(message: Message) -> dict[str, Any]:
    marks: dict[str, Any] = {}
    if ARCHIVE_META in message.metadata:
        marks["handle"] = message.metadata[ARCHIVE_META]
    if message.metadata.get(CLEARED_META) is True:
        marks["cleared"] = True
    kind = message.metadata.get("ctxbudget")
    if isinstance(kind, str):
        marks["kind"] = kind
    return marks


def to_langchain(message: Message, template: BaseMessage | None = None) -> BaseMessage:
    """Convert one ctxbudget message to LangChain.

    With a ``template`` (the LangChain message it came from), the template is copied with the new content, so
    ``additional_kwargs``, ``response_metadata`` and ``usage_metadata`` survive.

    Raises:
        InvalidMessageError: ``message`` is not a ctxbudget ``Message``, or ``template`` neither ``None`` nor a
            LangChain ``BaseMessage`` (``field`` names which).
    """
    if not isinstance(message, Message):
        raise InvalidMessageError(
            f"message: expected a ctxbudget Message, got {type(message).__name__}", field="message"
        )
    if template is not None and not isinstance(template, BaseMessage):
        raise InvalidMessageError(
            f"template: expected None or the LangChain BaseMessage it came from, got {type(template).__name__}",
            field="template",
        )
    content = content_to_langchain(message.content)
    marks = _marks(message)
    if template is not None:
        response_metadata = {k: v for k, v in template.response_metadata.items() if k != CTXBUDGET_KEY}
        if marks:
            response_metadata[CTXBUDGET_KEY] = marks
        return template.model_copy(update={"content": content, "response_metadata": response_metadata})
    extra: dict[str, Any] = {"id": message.id, "name": message.name}
    if marks:
        extra["response_metadata"] = {CTXBUDGET_KEY: marks}
    if message.role == "assistant":
        calls = [{"id": c.id, "name": c.name, "args": c.args, "type": "tool_call"} for c in message.tool_calls]
        return AIMessage(content=content, tool_calls=calls, **extra)
    if message.role == "tool":
        return ToolMessage(content=content, tool_call_id=message.tool_call_id or "", **extra)
    if message.role == "system":
        return SystemMessage(content=content, **extra)
    return HumanMessage(content=content, **extra)


def _same_speaker(message: Message, origin: Message) -> bool:
    """Whether ``message`` can be ``origin`` with new content: the same role, name, call answered and calls made.

    Only then is ``origin``'s LangChain form a template for it: a template's other fields (type, name,
    ``additional_kwargs``, tool calls) are copied as they are.
    """
    return (
        message.role == origin.role
        and message.name == origin.name
        and message.tool_call_id == origin.tool_call_id
        and [call.id for call in message.tool_calls] == [call.id for call in origin.tool_calls]
    )


class MessageConverter:
    """A cached, thread-safe two-way converter keyed by message id, for the messages of ONE conversation.

    A LangChain message seen before (the same object, or an equal one after a checkpoint round trip) returns the
    same :class:`~ctxbudget.Message` object, so sessions can compare by identity; a ctxbudget message converted
    back returns the LangChain object it came from when unchanged, else a copy of it with the new content (when it
    has its role, name and tool fields; else a new message). The cache is keyed by message id alone: two
    conversations may use the same ids (``msg-0``, ``msg-1``, ...), so each needs its own converter, or one
    conversation's fields (``name``, ``additional_kwargs``) would be copied into the other's messages.

    Args:
        max_entries: messages remembered; the oldest half is forgotten when full.
        max_chars: total characters of message text remembered (the cache pins the objects it holds, so it is
            bounded by size as well as by count); the oldest entries are forgotten first.
    """

    def __init__(self, *, max_entries: int = 200_000, max_chars: int = 64_000_000) -> None:
        self._pairs: OrderedDict[str, tuple[BaseMessage, Message]] = OrderedDict()
        self._max = max_entries
        self._max_chars = max_chars
        self._chars = 0
        self._lock = threading.Lock()
        self.conversions = 0

    def __len__(self) -> int:
        return len(self._pairs)

    def _remember(self, lc: BaseMessage, message: Message) -> None:
        content = message.content
        size = len(content) if isinstance(content, str) else len(message.text)
        with self._lock:
            if len(self._pairs) >= self._max:
                for key in list(self._pairs)[: self._max // 2]:
                    self._chars -= len(self._pairs.pop(key)[1].text)
            while self._pairs and self._chars + size > self._max_chars:
                self._chars -= len(self._pairs.popitem(last=False)[1][1].text)
            previous = self._pairs.pop(message.id, None)
            if previous is not None:
                self._chars -= len(previous[1].text)
            self._pairs[message.id] = (lc, message)
            self._chars += size

    def to_message(self, lc: BaseMessage) -> Message:
        """The ctxbudget form of ``lc`` (cached)."""
        pair = self._pairs.get(lc.id) if lc.id else None
        if pair is not None and (pair[0] is lc or pair[0] == lc):
            return pair[1]
        message = from_langchain(lc)
        self.conversions += 1
        self._remember(with_tool_call_ids(lc) if isinstance(lc, AIMessage) else lc, message)
        return message

    def to_messages(self, messages: Iterable[BaseMessage]) -> list[Message]:
        """Convert many (cached)."""
        return [self.to_message(m) for m in messages]

    def to_langchain(self, message: Message) -> BaseMessage:
        """The LangChain form of ``message``: the original object when unchanged (cached)."""
        pair = self._pairs.get(message.id)
        if pair is not None and pair[1] is message:
            return pair[0]
        lc = to_langchain(message, pair[0] if pair is not None and _same_speaker(message, pair[1]) else None)
        self._remember(lc, message)
        return lc

    def adopt(self, lc: BaseMessage, message: Message) -> None:
        """Record that ``lc`` is the LangChain form of ``message``."""
        self._remember(lc, message)

    def retain(self, ids: set[str]) -> None:
        """Forget every message whose id is not in ``ids`` (those compaction archived are not converted again)."""
        with self._lock:
            kept = OrderedDict((k, v) for k, v in self._pairs.items() if k in ids)
            self._pairs = kept
            self._chars = sum(len(pair[1].text) for pair in kept.values())


_SCHEMAS: dict[int, tuple[object, ToolSchema]] = {}
_SCHEMA_LOCK = threading.Lock()


def tool_schemas(tools: Sequence[Any]) -> tuple[ToolSchema, ...]:
    """Tool schemas for ``BaseTool`` objects, functions, pydantic models or OpenAI dicts (cached per object).

    Raises:
        InvalidMessageError: ``tools`` is not a sequence, or one of them is none of those (``field="tools[i]"``).
    """
    if isinstance(tools, (str, bytes, dict)) or not isinstance(tools, Sequence):
        raise InvalidMessageError(
            f"tools: expected a sequence of tools (BaseTool, function, pydantic model or OpenAI dict), got "
            f"{type(tools).__name__}",
            field="tools",
        )
    out: list[ToolSchema] = []
    for index, tool in enumerate(tools):
        cached = _SCHEMAS.get(id(tool))
        if cached is not None and cached[0] is tool and not isinstance(tool, dict):
            out.append(cached[1])
            continue
        try:
            schema = ToolSchema.from_openai(convert_to_openai_tool(tool))
        except (ValueError, TypeError, AttributeError) as exc:  # LangChain's own refusal of what is not a tool
            raise InvalidMessageError(
                f"tools[{index}]: not a tool LangChain can describe (BaseTool, function, pydantic model or OpenAI "
                f"dict), got {type(tool).__name__}: {exc}",
                field=f"tools[{index}]",
            ) from exc
        if not isinstance(tool, dict):
            with _SCHEMA_LOCK:
                if len(_SCHEMAS) > 4096:
                    _SCHEMAS.clear()
                _SCHEMAS[id(tool)] = (tool, schema)
        out.append(schema)
    return tuple(out)


def usage_of(message: BaseMessage) -> tuple[int, int | None] | None:
    """``(input_tokens, output_tokens)`` from an ``AIMessage``'s ``usage_metadata``, or ``None``."""
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None
    prompt = usage.get("input_tokens")
    if not isinstance(prompt, int) or isinstance(prompt, bool) or prompt <= 0:
        return None
    completion = usage.get("output_tokens")
    return prompt, completion if isinstance(completion, int) and completion >= 0 else None
