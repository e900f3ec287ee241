"""The summary message in LangChain's shape, and never a second user turn next to a user turn.

LangChain's own ``SummarizationMiddleware`` puts its summary in a ``HumanMessage`` marked
``additional_kwargs={"lc_source": "summarization"}``; ours has the same role and mark (plus our
``response_metadata["ctxbudget"]`` marks). A summary followed (or, failing that, preceded) by a human message is
folded into it, summary first, so no two user turns touch: providers such as Bedrock require user and assistant
turns to alternate. Folding only shortens the request (one message's overhead fewer), so the budget still holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxbudget.messages import Message
from langchain_core.messages import BaseMessage, HumanMessage

from .convert import CTXBUDGET_KEY

__all__ = ["SUMMARY_SOURCE", "fold_summary", "is_summary", "summary_message"]

SUMMARY_SOURCE = "summarization"
"""``additional_kwargs["lc_source"]`` of a summary message, as LangChain's ``SummarizationMiddleware`` sets it."""


def summary_message(text: str, message_id: str, marks: dict[str, Any] | None = None) -> HumanMessage:
    """A summary as LangChain's ``SummarizationMiddleware`` shapes it, with our marks."""
    return HumanMessage(
        content=text,
        id=message_id,
        additional_kwargs={"lc_source": SUMMARY_SOURCE},
        response_metadata={CTXBUDGET_KEY: marks or {"kind": "summary"}},
    )


def is_summary(message: BaseMessage) -> bool:
    """Whether ``message`` is a summary ctxbudget wrote (recognised by our marks, never by content)."""
    marks = message.response_metadata.get(CTXBUDGET_KEY)
    return isinstance(marks, dict) and marks.get("kind") == "summary"


def sent_summary(message: Message) -> HumanMessage | None:
    """The LangChain form of a core summary message in a request, or ``None`` for any other message."""
    if message.metadata.get("ctxbudget") != "summary":
        return None
    return summary_message(message.text, message.id)


def _joined(first: str | list[Any], second: str | list[Any]) -> str | list[Any]:
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    blocks: list[Any] = []
    for content in (first, second):
        blocks.extend([{"type": "text", "text": content}] if isinstance(content, str) else content)
    return blocks


def fold_summary(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` with the summary folded into the human message next to it (the next one, else the previous)."""
    out = list(messages)
    at = next((i for i, m in enumerate(out) if is_summary(m) and m.type == "human"), None)
    if at is None:
        return out
    summary = out[at]
    if at + 1 < len(out) and out[at + 1].type == "human":
        after = out[at + 1]
        out[at : at + 2] = [after.model_copy(update={"content": _joined(summary.content, after.content)})]
    elif at > 0 and out[at - 1].type == "human":
        before = out[at - 1]
        out[at - 1 : at + 1] = [before.model_copy(update={"content": _joined(before.content, summary.content)})]
    return out
