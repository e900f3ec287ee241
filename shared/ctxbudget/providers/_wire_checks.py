"""What the fake servers refuse, checked on the JSON a client sent (never through our own converters).

Each check returns ``None`` for a request the provider accepts, else ``(kind, message)``: ``kind`` is
``"orphaned"`` for a broken tool pair, ``"malformed"`` for anything else the provider refuses; the message follows
the provider's wording. The Anthropic check is stricter than Anthropic in one way: consecutive messages of one role
are not merged first, so a tool result that needed folding into the previous message is reported as orphaned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._anthropic_cache import MAX_BREAKPOINTS, count_breakpoints

__all__ = ["Problem", "anthropic_problem", "openai_chat_problem", "responses_problem"]

Problem = tuple[str, str] | None
"""``None``, or ``(kind, message)`` with kind ``"orphaned"`` or ``"malformed"``."""


def openai_chat_problem(body: Mapping[str, Any]) -> Problem:
    """Chat Completions: every call answered by tool messages right after it, no tool message without a call."""
    for key in ("messages", "tools"):
        value = body.get(key)
        if (key in body or key == "messages") and (not isinstance(value, list) or not value):
            return "malformed", f"Invalid '{key}': empty array. Expected an array with minimum length 1."
    messages: list[Any] = body["messages"]
    open_ids: list[Any] = []
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, Mapping) else None
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_ids:
                return "orphaned", (
                    f"Invalid parameter: messages[{index}]: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'."
                )
            open_ids.remove(call_id)
            continue
        if open_ids:
            return "orphaned", _unanswered(open_ids)
        if role not in ("system", "developer", "user", "assistant"):
            return "malformed", f"Invalid value: '{role}'. Supported values are: 'system', 'user', 'assistant' ..."
        if message.get("content") is None and not (role == "assistant" and message.get("tool_calls")):
            return "malformed", f"Invalid value for 'messages[{index}].content': expected a string, got null."
        calls = message.get("tool_calls") or []
        open_ids = [call.get("id") for call in calls if isinstance(call, Mapping)]
    return ("orphaned", _unanswered(open_ids)) if open_ids else None


def _unanswered(ids: list[Any]) -> str:
    return (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(map(str, ids))}"
    )


def responses_problem(body: Mapping[str, Any]) -> Problem:
    """Responses: every ``function_call_output`` answers an earlier ``function_call``, and every call is answered."""
    items = body.get("input")
    if isinstance(items, str):
        return None
    if not isinstance(items, list):
        return "malformed", "Invalid 'input': expected a string or an array."
    calls: set[str] = set()
    answered: set[str] = set()
    for item in items:
        kind = item.get("type") if isinstance(item, Mapping) else None
        if kind == "function_call":
            calls.add(str(item.get("call_id")))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in calls:
                return "orphaned", f"No tool call found for function call output with call_id {call_id}."
            answered.add(call_id)
    missing = sorted(calls - answered)
    return ("orphaned", f"No tool output found for function call {missing[0]}.") if missing else None


def anthropic_problem(body: Mapping[str, Any]) -> Problem:
    """Messages: roles, non-empty content, tool pairs between adjacent messages, at most 4 cache breakpoints."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "malformed", "messages: at least one message is required"
    for index, message in enumerate(messages):
        problem = _anthropic_message_problem(messages, index, message)
        if problem is not None:
            return problem
    found = count_breakpoints(body)
    if found > MAX_BREAKPOINTS:
        return (
            "malformed",
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {found}.",
        )
    return None


def _anthropic_message_problem(messages: list[Any], index: int, message: Any) -> Problem:
    role = message.get("role") if isinstance(message, Mapping) else None
    if role not in ("user", "assistant"):
        return "malformed", (
            f'messages.{index}: Unexpected role "{role}". The Messages API accepts a top-level `system` parameter, '
            'not "system" as an input message role.'
        )
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    last = index == len(messages) - 1 and role == "assistant"
    if not content and not last:
        return (
            "malformed",
            f"messages.{index}: all messages must have non-empty content except for the optional final assistant "
            "message",
        )
    if any(isinstance(b, Mapping) and b.get("type") == "text" and not b.get("text") for b in blocks):
        return "malformed", "messages: text content blocks must be non-empty"
    uses = [b.get("id") for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use"]
    if uses:
        following = messages[index + 1] if index + 1 < len(messages) else {}
        answered = {b.get("tool_use_id") for b in _blocks(following) if b.get("type") == "tool_result"}
        missing = [u for u in uses if u not in answered]
        if missing:
            return "orphaned", (
                f"messages.{index + 1}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(map(str, missing))}. Each `tool_use` block must have a corresponding `tool_result` block "
                "in the next message."
            )
    previous = messages[index - 1] if index > 0 else {}
    made = {b.get("id") for b in _blocks(previous) if b.get("type") == "tool_use"}
    for position, block in enumerate(blocks):
        if isinstance(block, Mapping) and block.get("type") == "tool_result" and block.get("tool_use_id") not in made:
            return "orphaned", (
                f"messages.{index}.content.{position}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` block in "
                "the previous message."
            )
    return None


def _blocks(message: object) -> list[Mapping[str, Any]]:
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []
