"""What a session hands back for each model call, and the runtime notes it adds to a request."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..messages._own_ids import with_free_id
from ..messages.message import Message, ToolSchema
from ..providers import to_anthropic_request, to_openai_request, to_responses_request
from ..providers.anthropic import CacheControl
from .events import ContextCompacted
from .tracking import ContextState

__all__ = ["INTERRUPTED_NOTICE", "BuiltRequest", "PreCompact"]

INTERRUPTED_NOTICE = (
    "[Note from the runtime: your previous reply was interrupted before it finished. It is shown above exactly as "
    "it was cut off; continue from there if it is still relevant.]"
)
SUMMARY_HEADER = (
    "[Context Summary] A record of earlier turns, not new instructions. search_archive(query) finds their originals."
)


class BuiltRequest:
    """A request ready to send: valid for strict providers and inside the budget by our count.

    Built once per model call, so it is a plain slotted class (read-only properties) rather than a model.

    Attributes:
        messages: system, summary, pinned, then history, as a zero-copy :class:`MessageSequence` view.
        tools: the tool schemas to expose.
        tokens: our own count of the whole request.
        used_tokens: the tracker's reading (own count, reported usage and floor combined).
        max_tokens: the window.
        compaction: the compaction that ran while building it, if any.
    """

    __slots__ = ("_compaction", "_max_tokens", "_messages", "_tokens", "_tools", "_used_tokens")

    def __init__(
        self,
        *,
        messages: Sequence[Message],
        tools: tuple[ToolSchema, ...],
        tokens: int,
        used_tokens: int,
        max_tokens: int,
        compaction: ContextCompacted | None = None,
    ) -> None:
        self._messages = messages
        self._tools = tools
        self._tokens = tokens
        self._used_tokens = used_tokens
        self._max_tokens = max_tokens
        self._compaction = compaction

    @property
    def messages(self) -> Sequence[Message]:
        """System, summary, pinned, then history."""
        return self._messages

    @property
    def tools(self) -> tuple[ToolSchema, ...]:
        """The tool schemas to expose."""
        return self._tools

    @property
    def tokens(self) -> int:
        """Our own count of the whole request."""
        return self._tokens

    @property
    def compaction(self) -> ContextCompacted | None:
        """The compaction that ran while building this request, if any."""
        return self._compaction

    @property
    def state(self) -> ContextState:
        """The window reading for this request."""
        return ContextState.of(self._used_tokens, self._max_tokens)

    def to_openai(self) -> dict[str, Any]:
        """``{"messages", "tools"}`` for ``client.chat.completions.create(model=..., **request.to_openai())``.

        ``tools`` is left out when there are none (the API refuses an empty list). See
        :func:`ctxbudget.providers.to_openai_request`.
        """
        return to_openai_request(self._messages, self._tools)

    def to_responses(self) -> dict[str, Any]:
        """``{"input": [...], "tools": [...]}`` for ``client.responses.create(model=..., **request.to_responses())``."""
        return to_responses_request(self._messages, self._tools)

    def to_anthropic(self, *, cache_control: CacheControl = False) -> dict[str, Any]:
        """``{"system", "messages", "tools"}`` for ``client.messages.create(model=..., max_tokens=..., **...)``.

        System messages go to ``system``, consecutive tool results are folded into one user message, and
        ``cache_control=True`` marks prompt-cache breakpoints at the end of the system prompt, of the summary and
        pinned prefix, and at the last message, so a compaction only invalidates what it changed. See
        :func:`ctxbudget.providers.to_anthropic_request`.
        """
        return to_anthropic_request(self._messages, self._tools, cache_control=cache_control)

    def __repr__(self) -> str:
        return (
            f"BuiltRequest({len(self._messages)} messages, {len(self._tools)} tools, tokens={self._tokens:,}, "
            f"used={self._used_tokens:,}/{self._max_tokens:,}, compacted={self._compaction is not None})"
        )


class PreCompact(BaseModel):
    """What a PreCompact hook is told before a compaction starts."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    trigger: Literal["auto", "manual"]
    state: ContextState
    instructions: str | None


def insert_interrupted_notice(messages: list[Message]) -> list[Message]:
    """Insert the interrupted-reply notice after the last assistant message and its tool results."""
    index = max(i for i, m in enumerate(messages) if m.role == "assistant")
    end = index + 1
    while end < len(messages) and messages[end].role == "tool":
        end += 1
    notice = with_free_id(interrupted_notice(messages[index]), {m.id for m in messages}.__contains__)
    return [*messages[:end], notice, *messages[end:]]


def interrupted_notice(after: Message) -> Message:
    """The notice a request carries after an interrupted assistant reply (and its tool results)."""
    return Message(
        role="user",
        content=INTERRUPTED_NOTICE,
        id=f"ctxbudget-notice-{after.id}",
        metadata={"ctxbudget": "interrupted_notice"},
    )
