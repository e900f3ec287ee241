"""A built request as the ``ChatMessage`` list a LlamaIndex memory hands back, converted incrementally.

Shape, as LlamaIndex's own memories send it:

* every system message first: the system prompt, the caller's system messages, then the summary of compacted turns
  as a **system** message (``ChatSummaryMemoryBuffer`` sends its summary as a system message, ``Memory`` puts its
  memory blocks into the system message), so a summary never makes two user turns touch;
* then pinned messages, then the live history (and any messages the request adds after it).

The last message is handed back as a copy, the same copy on every call while that message stays last:
``AgentWorkflow`` formats its ``state_prompt`` into the last message's text in place, once per run, and relies on
the memory handing the edited object back on the run's later calls (``ChatMemoryBuffer`` hands back its stored
objects). The stored history itself is never edited; :meth:`RenderedView.edit_tokens` says how many tokens such an
edit added, so the memory budgets for them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxbudget.messages import Message, MessageSequence
from ctxbudget.messages.tokens import TokenCounter
from llama_index.core.base.llms.types import ChatMessage

from .convert import ChatMessageConverter, ContentKey, content_key, from_chat_message

__all__ = ["RenderedView", "is_summary"]


def is_summary(message: Message) -> bool:
    """Whether ``message`` is the session's summary message."""
    return message.metadata.get("ctxbudget") == "summary"


def _in_head(message: Message) -> bool:
    return (
        message.role == "system"
        or message.metadata.get("ctxbudget") in {"summary", "pinned"}
        or message.metadata.get("pinned") is True
    )


def _head_order(messages: Sequence[Message]) -> list[Message]:
    """System messages and the summary first, then the rest of the head (pinned), then everything after it."""
    end = 0
    while end < len(messages) and _in_head(messages[end]):
        end += 1
    head = messages[:end]
    first = [m for m in head if m.role == "system" or is_summary(m)]
    return [*first, *(m for m in head if not (m.role == "system" or is_summary(m))), *messages[end:]]


class RenderedView:
    """Converts built requests to ``ChatMessage`` lists, reusing the conversions of an unchanged history."""

    def __init__(self) -> None:
        self._history: tuple[Sequence[Message], list[ChatMessage]] | None = None
        self._summary: tuple[Message, ChatMessage] | None = None
        # The last message handed back: (its message, the chat it was copied from, the copy handed back).
        self._handed: tuple[Message, ChatMessage, ChatMessage] | None = None
        self._edit: tuple[ContentKey, int] | None = None

    def forget(self) -> None:
        """Drop every cached conversion (after a reset)."""
        self._history = self._summary = self._handed = self._edit = None

    def _chat(self, message: Message, converter: ChatMessageConverter) -> ChatMessage:
        if not is_summary(message):
            return converter.to_chat(message)
        cached = self._summary
        if cached is None or cached[0] is not message:
            cached = self._summary = (message, ChatMessage(role="system", content=message.text))
        return cached[1]

    def _pairs(
        self, messages: Sequence[Message], converter: ChatMessageConverter
    ) -> tuple[list[ChatMessage], Message | None]:
        """The chats for ``messages`` and the message the last one stands for."""
        if not isinstance(messages, MessageSequence):
            ordered = _head_order(messages)
            return [self._chat(m, converter) for m in ordered], (ordered[-1] if ordered else None)
        head = _head_order(messages.prefix)
        history, length = messages.history_window()
        cached = self._history
        if cached is None or cached[0] is not history or len(cached[1]) > length:
            cached = self._history = (history, [])
        converted = cached[1]
        converted.extend(converter.to_chat(history[i]) for i in range(len(converted), length))
        tail = tuple(getattr(messages, "tail", ()))
        chats = [*(self._chat(m, converter) for m in head), *converted[:length], *converter.to_chats(tail)]
        last = tail[-1] if tail else history[length - 1] if length else head[-1] if head else None
        return chats, last

    def render(self, messages: Sequence[Message], converter: ChatMessageConverter) -> list[ChatMessage]:
        """The ``ChatMessage`` list for a built request's messages."""
        chats, last = self._pairs(messages, converter)
        if not chats or last is None:
            return chats
        handed = self._handed
        if handed is None or handed[0] is not last or handed[1] is not chats[-1]:
            handed = self._handed = (last, chats[-1], chats[-1].model_copy(deep=True))
        chats[-1] = handed[2]
        return chats

    def edit_tokens(self, request_messages: object, counter: TokenCounter) -> int:
        """Tokens an in-place edit of the handed-back last message added, while it is still the request's last."""
        handed = self._handed
        messages = getattr(request_messages, "messages", request_messages)
        if handed is None or not isinstance(messages, Sequence) or not messages:
            return 0
        if _last(messages) is not handed[0]:
            return 0
        key = content_key(handed[2])
        if key == content_key(handed[1]):
            return 0
        if self._edit is None or self._edit[0] != key:
            grown = counter.count_message(from_chat_message(handed[2], message_id=handed[0].id))
            self._edit = (key, max(0, grown - counter.count_message(from_chat_message(handed[1]))))
        return self._edit[1]


def _last(messages: Sequence[Message]) -> Message | None:
    if isinstance(messages, MessageSequence):
        tail = tuple(getattr(messages, "tail", ()))
        history, length = messages.history_window()
        head = _head_order(messages.prefix)
        return tail[-1] if tail else history[length - 1] if length else head[-1] if head else None
    ordered = _head_order(messages)
    return ordered[-1] if ordered else None
