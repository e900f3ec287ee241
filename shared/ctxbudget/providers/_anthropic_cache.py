"""Prompt-cache breakpoints for an Anthropic request: where to mark them, and how many a request has."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..messages.message import Message

__all__ = ["MAX_BREAKPOINTS", "PREFIX_MARKS", "count_breakpoints", "mark_breakpoints"]

PREFIX_MARKS = frozenset({"summary", "pinned", "context"})
"""``metadata["ctxbudget"]`` of the session's own prefix messages (after the system prompt)."""
MAX_BREAKPOINTS = 4
"""Anthropic accepts at most four ``cache_control`` blocks per request."""


def mark_breakpoints(request: dict[str, Any], messages: Sequence[Message], marker: dict[str, Any]) -> None:
    """Mark the end of the system prompt (or tools), of the session's prefix, and the last message."""
    targets: list[dict[str, Any]] = []
    if "system" in request:
        if isinstance(request["system"], str):
            request["system"] = [{"type": "text", "text": request["system"]}]
        if request["system"]:
            targets.append(request["system"][-1])
    elif request.get("tools"):
        targets.append(request["tools"][-1])
    sent = request["messages"]
    prefix = _prefix_length(messages)
    if 0 < prefix < len(sent):
        targets.append(_last_block(sent[prefix - 1]))
    if sent:
        targets.append(_last_block(sent[-1]))
    room = MAX_BREAKPOINTS - count_breakpoints(request)
    for target in _unique(targets)[: max(0, room)]:
        target.setdefault("cache_control", dict(marker))


def _prefix_length(messages: Sequence[Message]) -> int:
    """How many sent messages (system messages are not) the session's summary/pinned/context prefix spans."""
    count = 0
    for message in messages:
        if message.role == "system":
            continue
        if message.metadata.get("ctxbudget") not in PREFIX_MARKS:
            break
        count += 1
    return count


def _last_block(entry: dict[str, Any]) -> dict[str, Any]:
    if isinstance(entry["content"], str):
        entry["content"] = [{"type": "text", "text": entry["content"]}]
    return entry["content"][-1] if entry["content"] else entry


def _unique(targets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    unique: list[dict[str, Any]] = []
    for target in targets:
        if all(target is not seen for seen in unique):
            unique.append(target)
    return unique


def count_breakpoints(request: Mapping[str, Any]) -> int:
    """``cache_control`` marks already in the system blocks, tools, message blocks and tool results' blocks."""
    found = 0
    stack: list[Any] = [request.get("system"), request.get("tools"), request.get("messages")]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, Mapping):
            found += "cache_control" in item
            if isinstance(item.get("content"), list):
                stack.append(item["content"])
    return found
