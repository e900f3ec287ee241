"""LlamaIndex ``ChatMessage`` <-> ctxbudget :class:`~ctxbudget.Message`, lossless and incremental.

What is read from a ``ChatMessage``:

* the role (``developer`` -> system; ``chatbot``/``model`` -> assistant; ``function``/``tool`` -> tool);
* the text blocks (joined by newlines, as ``ChatMessage.content`` does) and other blocks as
  :class:`~ctxbudget.ContentBlock` entries sized as the provider receives them (:mod:`._blocks`: thinking, citation
  and text-document blocks by their text, inline audio, video and binary documents by their base64 payload);
* tool calls, in every shape LlamaIndex agents and LLM integrations produce (:mod:`._tool_calls`: ``ToolCallBlock``
  blocks, and ``additional_kwargs["tool_calls"]`` holding OpenAI dicts, OpenAI SDK objects, ``{"id", "name",
  "input"|"args"}`` dicts, or LlamaIndex ``ToolSelection`` objects: what agents and ``MockFunctionCallingLLM`` put
  there). Their arguments are counted;
* a tool result's ``additional_kwargs["tool_call_id"]`` (and ``name``). A result without one, or whose id is not
  a non-empty string (``["x"]``, ``5``, ``""``), answers no call, exactly like a string id that no call has: it is
  kept (in the chat store, in ``get_all()``) but never sent, as strict providers refuse it.

Nothing is lost going back: :class:`ChatMessageConverter` remembers the original ``ChatMessage`` of every message
id and hands that same object back while the message is unchanged. A message compaction changed (a bounded or
cleared tool result) comes back as a copy of its original with the new text, keeping its ``additional_kwargs``.
Messages ctxbudget made itself (system prompt, summary) become plain text ``ChatMessage`` objects.

Tool calls without an id get ``call_<index>_<tool name>`` (in :func:`tool_calls_of`), and the ``ChatMessage`` handed
back for such a message is a copy carrying those ids (:func:`with_tool_call_ids`): the call sent and its result,
real or synthesized, always name the same call.

Ids: an incoming ``additional_kwargs["ctxbudget_id"]`` is honoured. Converted messages do *not* get one added,
because several LLM integrations copy ``additional_kwargs`` verbatim into the provider request, where an unknown
key is a 400; pass ``include_id=True`` to :func:`to_chat_message` when you need the id on the LlamaIndex side.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ctxbudget.errors import InvalidMessageError
from ctxbudget.messages import ContentBlock, Message, MessageRole, ToolCall, ToolSchema, new_message_id
from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock
from llama_index.core.base.llms.types import MessageRole as LIRole
from llama_index.core.tools import BaseTool

from ._blocks import counted_block
from ._tool_calls import check_chat, lacks_tool_call_ids, tool_calls_of, with_tool_call_ids

__all__ = [
    "ID_KEY",
    "ChatMessageConverter",
    "ContentKey",
    "content_key",
    "from_chat_message",
    "given_id",
    "lacks_tool_call_ids",
    "to_chat_message",
    "tool_calls_of",
    "tool_schemas",
    "with_tool_call_ids",
]

ID_KEY = "ctxbudget_id"
"""``additional_kwargs`` key read (and, with ``include_id=True``, written) for a message's ctxbudget id."""

_ROLES: dict[str, MessageRole] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "chatbot": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
}
_ORIGINAL_ROLE = "llamaindex_role"
_NO_CALL = "ctxbudget-no-call:"
"""The ``tool_call_id`` a tool result gets when it has none, or one that is not a non-empty string (a list, a
number, ``""``): it answers no call, so like any result that answers no call it is kept (and in the chat store) but
never sent."""
_ARCHIVED = "ctxbudget_archived"  # ctxbudget.compaction.tiers.ARCHIVE_META: set on every message compaction changed


def _content_of(chat: ChatMessage) -> str | tuple[ContentBlock, ...]:
    texts: list[str] = []
    others: list[ContentBlock] = []
    for block in chat.blocks:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif not isinstance(block, ToolCallBlock):
            others.append(counted_block(block))
    if not others:
        return "\n".join(texts)
    return (*(ContentBlock(type="text", text=text) for text in texts), *others)


def from_chat_message(chat: ChatMessage, *, message_id: str | None = None) -> Message:
    """Convert one LlamaIndex ``ChatMessage`` to a ctxbudget :class:`~ctxbudget.Message`.

    Args:
        chat: the message to convert (not modified).
        message_id: the id to give it; default: ``additional_kwargs["ctxbudget_id"]`` or a fresh id.

    Raises:
        InvalidMessageError: ``chat`` is not a ``ChatMessage``.
    """
    check_chat(chat)
    kwargs = chat.additional_kwargs
    raw_role = chat.role.value if isinstance(chat.role, LIRole) else str(chat.role)
    role: MessageRole = _ROLES.get(raw_role, "user")
    metadata: dict[str, Any] = {} if raw_role == role else {_ORIGINAL_ROLE: raw_role}
    message_id = message_id or given_id(kwargs) or new_message_id()
    call_id = kwargs.get("tool_call_id")
    if role == "tool" and not (isinstance(call_id, str) and call_id):
        call_id = f"{_NO_CALL}{message_id}"  # none, or one no call has (["x"], 5, ""): answers none, never sent
    name = kwargs.get("name")
    return Message(
        role=role,
        content=_content_of(chat),
        name=name if isinstance(name, str) and name else None,
        tool_calls=tool_calls_of(chat) if role == "assistant" else (),
        tool_call_id=call_id if role == "tool" else None,
        metadata=metadata,
        id=message_id,
    )


def given_id(kwargs: Mapping[str, Any]) -> str | None:
    """The ctxbudget message id a ChatMessage carries in its ``additional_kwargs`` (under :data:`ID_KEY`), if any."""
    value = kwargs.get(ID_KEY)
    return value if isinstance(value, str) and value else None


ContentKey = tuple[object, ...]
"""What :func:`content_key` returns: hashable, equal for equal messages."""


def _block_digest(block: Any) -> str:
    try:
        dumped = block.model_dump_json()
    except Exception:  # an unserializable block: never equal to another one
        return f"{type(block).__name__}@{id(block)}"
    return hashlib.sha256(dumped.encode("utf-8")).hexdigest()


def content_key(chat: ChatMessage) -> ContentKey:
    """A stable key for what ``chat`` says: role, text, other blocks, tool calls, ``tool_call_id`` and ``name``.

    Equal copies (``model_validate(model_dump())``, a chat store's JSON round trip) have equal keys, whatever else
    ``additional_kwargs`` holds and whether tool calls are SDK objects or dicts. The ``ctxbudget_id`` is not part of
    it.
    """
    raw_role = chat.role.value if isinstance(chat.role, LIRole) else str(chat.role)
    texts: list[str] = []
    others: list[str] = []
    for block in chat.blocks:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif not isinstance(block, ToolCallBlock):
            others.append(_block_digest(block))
    kwargs = chat.additional_kwargs
    call_id, name = kwargs.get("tool_call_id"), kwargs.get("name")
    return (
        raw_role,
        tuple(texts),
        tuple(others),
        tuple((call.id, call.name, call.args_json()) for call in tool_calls_of(chat)),
        call_id if isinstance(call_id, str) else None,
        name if isinstance(name, str) else None,
    )


def is_system_key(key: ContentKey) -> bool:
    """Whether a :func:`content_key` is that of a system message."""
    return _ROLES.get(str(key[0])) == "system"


def _openai_call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.args_json()}}


def to_chat_message(message: Message, *, include_id: bool = False) -> ChatMessage:
    """Build a fresh ``ChatMessage`` from a ctxbudget message (tool calls in the OpenAI ``additional_kwargs`` shape).

    Args:
        message: the message to convert.
        include_id: also put the message id in ``additional_kwargs["ctxbudget_id"]``.

    Raises:
        InvalidMessageError: ``message`` is not a :class:`~ctxbudget.Message`.
    """
    if not isinstance(message, Message):
        raise InvalidMessageError(f"message: expected ctxbudget.Message, got {type(message).__name__}", field="message")
    kwargs: dict[str, Any] = {}
    if message.tool_calls:
        kwargs["tool_calls"] = [_openai_call(call) for call in message.tool_calls]
    if message.tool_call_id:
        kwargs["tool_call_id"] = message.tool_call_id
    if message.name:
        kwargs["name"] = message.name
    if include_id:
        kwargs[ID_KEY] = message.id
    role = message.metadata.get(_ORIGINAL_ROLE) if message.role == "user" else None
    return ChatMessage(role=role or message.role, blocks=[TextBlock(text=message.text)], additional_kwargs=kwargs)


class ChatMessageConverter:
    """Converts both ways with caches, so a growing conversation pays only for its new messages.

    Incoming ``ChatMessage`` objects are remembered by identity (the framework hands the same objects back, e.g.
    ``memory.set(chat_history)``), outgoing ones by message id. Not thread-safe on its own; the memory that owns
    it serializes access.
    """

    def __init__(self) -> None:
        self._incoming: dict[int, tuple[ChatMessage, Message]] = {}
        self._originals: dict[str, ChatMessage] = {}
        self._derived: dict[str, tuple[Message, ChatMessage]] = {}

    def __len__(self) -> int:
        return len(self._originals)

    def clear(self) -> None:
        """Forget everything (after a reset)."""
        self._incoming.clear()
        self._originals.clear()
        self._derived.clear()

    def known(self, chat: ChatMessage) -> Message | None:
        """The message ``chat`` was converted to earlier, if this exact object was seen."""
        entry = self._incoming.get(id(chat))
        return entry[1] if entry is not None and entry[0] is chat else None

    def to_message(self, chat: ChatMessage, *, message_id: str | None = None) -> Message:
        """Convert ``chat`` (cached by object identity) and remember it as the original of the result."""
        cached = self.known(chat)
        if cached is not None:
            return cached
        message = from_chat_message(chat, message_id=message_id)
        self.remember(chat, message)
        return message

    def remember(self, chat: ChatMessage, message: Message) -> None:
        """Record ``chat`` as the original of ``message`` (used when restoring a persisted session)."""
        self._incoming[id(chat)] = (chat, message)
        self._originals[message.id] = chat

    def original(self, message_id: str) -> ChatMessage | None:
        """The original ``ChatMessage`` of ``message_id``, if it came from LlamaIndex."""
        return self._originals.get(message_id)

    def to_chat(self, message: Message) -> ChatMessage:
        """The ``ChatMessage`` to send for ``message``: its original while unchanged, else a (cached) copy.

        An original with tool calls without ids is sent as a copy carrying the ids ``message`` has.
        """
        original = self._originals.get(message.id)
        changed = _ARCHIVED in message.metadata
        if original is not None and not changed and not (message.tool_calls and lacks_tool_call_ids(original)):
            return original
        cached = self._derived.get(message.id)
        if cached is not None and cached[0] is message:
            return cached[1]
        if original is None:
            chat = to_chat_message(message)
        else:  # calls without ids are sent with the ids ctxbudget gave them, which its results answer
            chat = with_tool_call_ids(original)
            chat = _with_text(chat, message.text) if changed else chat
        self._derived[message.id] = (message, chat)
        return chat

    def to_chats(self, messages: Iterable[Message]) -> list[ChatMessage]:
        """:meth:`to_chat` over ``messages``."""
        return [self.to_chat(message) for message in messages]

    def to_messages(self, chats: Sequence[ChatMessage]) -> list[Message]:
        """:meth:`to_message` over ``chats``."""
        return [self.to_message(chat) for chat in chats]


def _with_text(original: ChatMessage, text: str) -> ChatMessage:
    """A copy of ``original`` whose text is ``text`` (tool calls and ``additional_kwargs`` kept)."""
    calls = [block for block in original.blocks if isinstance(block, ToolCallBlock)]
    return original.model_copy(update={"blocks": [TextBlock(text=text), *calls]})


def tool_schemas(tools: Sequence[BaseTool | ToolSchema]) -> tuple[ToolSchema, ...]:
    """Tool schemas as the model is billed for them, from LlamaIndex tools (their OpenAI spec) or ready schemas.

    Raises:
        InvalidMessageError: ``tools`` is not a sequence of LlamaIndex tools and schemas (the item is named).
    """
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        raise InvalidMessageError(f"tools: must be a sequence of tools, got {type(tools).__name__}", field="tools")
    schemas = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, (BaseTool, ToolSchema)):
            got = type(tool).__name__
            raise InvalidMessageError(
                f"tools[{index}]: expected a LlamaIndex tool or ToolSchema, got {got}", field="tools"
            )
        schemas.append(tool if isinstance(tool, ToolSchema) else ToolSchema.from_openai(tool.metadata.to_openai_tool()))
    return tuple(schemas)
