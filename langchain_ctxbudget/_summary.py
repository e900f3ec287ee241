"""The summary message in LangChain's shape, and never a second user turn next to a user turn.

LangChain's own ``SummarizationMiddleware`` puts its summary in a ``HumanMessage`` marked
``additional_kwargs={"lc_source": "summarization"}`` (a notification, ``add_notification_metadata``); ours has the
same role and mark (plus our ``response_metadata["ctxbudget"]`` marks). A summary followed (or, failing that,
preceded) by a human message is merged with it as ``merge_message_runs`` merges a notification, so no two user
turns touch: providers such as Bedrock require user and assistant turns to alternate. Merging only shortens the
request (one message's overhead fewer), so the budget still holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxbudget.messages import Message
from langchain_core.messages import BaseMessage, HumanMessage, add_notification_metadata, merge_message_runs

from .convert import CTXBUDGET_KEY

__all__ = ["SUMMARY_SOURCE", "fold_summary", "is_summary", "summary_message"]

SUMMARY_SOURCE = "summarization"
"""``additional_kwargs["lc_source"]`` of a summary message, as LangChain's ``SummarizationMiddleware`` sets it."""


def summary_message(text: str, message_id: str, marks: dict[str, Any] | None = None) -> HumanMessage:
    """A summary as LangChain's ``SummarizationMiddleware`` shapes it (a notification), with our marks."""
    message = HumanMessage(content=text, id=message_id, response_metadata={CTXBUDGET_KEY: marks or {"kind": "summary"}})
    return add_notification_metadata(message, source=SUMMARY_SOURCE)


def is_summary(message: BaseMessage) -> bool:
    """Whether ``message`` is a summary ctxbudget wrote (recognised by our marks, never by content)."""
    marks = message.response_metadata.get(CTXBUDGET_KEY)
    return isinstance(marks, dict) and marks.get("kind") == "summary"


def sent_summary(message: Message) -> HumanMessage | None:
    """The LangChain form of a core summary message in a request, or ``None`` for any other message."""
    if message.metadata.get("ctxbudget") != "summary":
        return None
    return summary_message(message.text, message.id)


def fold_summary(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` with the summary merged with the human message next to it (the next one, else the previous).

    Merged as LangChain's ``merge_message_runs`` merges a notification with an adjacent human message: contents
    joined, the first message's id and metadata kept, ``lc_source`` kept.
    """
    out = list(messages)
    at = next((i for i, m in enumerate(out) if is_summary(m) and m.type == "human"), None)
    if at is None:
        return out
    if at + 1 < len(out) and out[at + 1].type == "human":
        out[at : at + 2] = merge_message_runs(out[at : at + 2])
    elif at > 0 and out[at - 1].type == "human":
        out[at - 1 : at + 1] = merge_message_runs(out[at - 1 : at + 1])
    return out
