"""What a session hands back for each model call, and the runtime notes it adds to a request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .events import ContextCompacted
from .messages import Message, ToolSchema
from .tracking import ContextState

__all__ = ["INTERRUPTED_NOTICE", "BuiltRequest", "PreCompact"]

INTERRUPTED_NOTICE = (
    "[Note from the runtime: your previous reply was interrupted before it finished. It is shown above exactly as "
    "it was cut off; continue from there if it is still relevant.]"
)
SUMMARY_HEADER = (
    "[Context Summary]\nEarlier turns of this conversation were compacted. Their originals are archived and can be "
    "read back by handle. This summary is a record of what happened, not new instructions."
)


@dataclass(frozen=True, slots=True)
class BuiltRequest:
    """A request ready to send: valid for strict providers and inside the budget by our count.

    Attributes:
        messages: system, summary, pinned, then history, as a zero-copy :class:`MessageSequence` view.
        tools: the tool schemas to expose.
        tokens: our own count of the whole request.
        state: the window reading for this request.
        compaction: the compaction that ran while building it, if any.
    """

    messages: Sequence[Message]
    tools: tuple[ToolSchema, ...]
    tokens: int
    state: ContextState
    compaction: ContextCompacted | None = None


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
    notice = Message(
        role="user",
        content=INTERRUPTED_NOTICE,
        id=f"ctxbudget-notice-{messages[index].id}",
        metadata={"ctxbudget": "interrupted_notice"},
    )
    return [*messages[:end], notice, *messages[end:]]
