"""Tool-call pairing: the invariant every provider enforces and every trimmer must keep.

An assistant message that requests tool calls must be followed, before any other kind of message, by one tool
message per call id; a tool message must answer a call made by the assistant message just before its run. Breaking
either gets a 400 from OpenAI, Anthropic and most others. This module finds problems, repairs a history, and finds
the places a history may be cut without separating a call from its result (parallel calls included).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..errors import InvalidMessageError
from ._own_ids import with_free_id
from .message import Message

__all__ = [
    "MISSING_RESULT_TEXT",
    "ToolPairProblem",
    "find_tool_pair_problems",
    "not_run",
    "repair_tool_pairs",
    "safe_cut_points",
    "validate_tool_sequence",
]

MISSING_RESULT_TEXT = "[no result: this tool call was interrupted or its result was lost]"
"""Content of the synthetic result :func:`repair_tool_pairs` adds for a call that was never answered."""
_NOT_RUN = re.compile(r"^\s*(?:<tool_use_error>)?\s*Sibling tool call errored\s*(?:</tool_use_error>)?\s*$")
"""Claude Code's result for a parallel call it cancelled because another call of the turn failed: it never ran."""


def not_run(result: Message) -> bool:
    """The result says its call never ran (a harness cancelled it when a parallel call failed): not a failure."""
    return len(result.text) < 120 and _NOT_RUN.match(result.text) is not None


class ToolPairProblem(BaseModel):
    """One pairing problem: an unanswered call, an orphaned result, or a result out of place."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["unanswered_call", "orphaned_result", "duplicate_result"]
    index: int
    message_id: str
    call_id: str

    def describe(self) -> str:
        """A one-line human description."""
        what = {
            "unanswered_call": "tool call has no result right after it",
            "orphaned_result": "tool result answers no call in the assistant message before it",
            "duplicate_result": "tool call answered twice",
        }[self.kind]
        return f"message {self.index} ({self.message_id}): {what} (call id {self.call_id!r})"


def _checked(messages: Sequence[Message]) -> Sequence[Message]:
    """``messages`` if it is a sequence of :class:`Message`, else an :class:`InvalidMessageError` naming it."""
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise InvalidMessageError(
            f"messages: must be a sequence of ctxbudget.Message, got {type(messages).__name__}", field="messages"
        )
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            raise InvalidMessageError(
                f"messages[{index}]: expected ctxbudget.Message, got {type(message).__name__}", field="messages"
            )
    return messages


def find_tool_pair_problems(messages: Sequence[Message]) -> list[ToolPairProblem]:
    """Return every pairing problem in ``messages`` under the strict provider rule, in order.

    Raises:
        InvalidMessageError: ``messages`` is not a sequence of :class:`~ctxbudget.Message`.
    """
    messages = _checked(messages)
    problems: list[ToolPairProblem] = []
    open_calls: dict[str, int] = {}  # call id -> index of the assistant message in the current run
    answered: set[str] = set()
    for index, message in enumerate(messages):
        if message.role == "tool":
            call_id = message.tool_call_id or ""
            if call_id in open_calls:
                del open_calls[call_id]
                answered.add(call_id)
            elif call_id in answered:
                problems.append(
                    ToolPairProblem(kind="duplicate_result", index=index, message_id=message.id, call_id=call_id)
                )
            else:
                problems.append(
                    ToolPairProblem(kind="orphaned_result", index=index, message_id=message.id, call_id=call_id)
                )
            continue
        problems.extend(_close_run(messages, open_calls))
        answered = set()
        if message.role == "assistant":
            open_calls = {call.id: index for call in message.tool_calls}
    problems.extend(_close_run(messages, open_calls))
    return sorted(problems, key=lambda p: p.index)


def _close_run(messages: Sequence[Message], open_calls: dict[str, int]) -> list[ToolPairProblem]:
    found = [
        ToolPairProblem(kind="unanswered_call", index=index, message_id=messages[index].id, call_id=call_id)
        for call_id, index in open_calls.items()
    ]
    open_calls.clear()
    return found


def validate_tool_sequence(messages: Sequence[Message]) -> None:
    """Raise :class:`InvalidMessageError` describing the first problems, if the sequence would be rejected."""
    problems = find_tool_pair_problems(messages)
    if problems:
        listed = "; ".join(p.describe() for p in problems[:5])
        more = f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""
        raise InvalidMessageError(
            f"messages: {len(problems)} tool pairing problem(s): {listed}{more}", field="messages"
        )


def repair_tool_pairs(messages: Sequence[Message]) -> list[Message]:
    """Return a copy of ``messages`` that every strict provider accepts.

    Orphaned and duplicate tool results are left out (the caller still holds them; a session archives them), and
    every unanswered call gets a synthetic result saying so, placed right after its run of results (its id is
    ``ctxbudget-missing-<call id>``, or that plus ``~2``... when another message has it). A valid sequence comes
    back unchanged (same message objects).

    Raises:
        InvalidMessageError: ``messages`` is not a sequence of :class:`~ctxbudget.Message`.
    """
    problems = find_tool_pair_problems(messages)
    if not problems:
        return list(messages)
    drop = {p.index for p in problems if p.kind != "unanswered_call"}
    missing: dict[int, list[str]] = {}
    for p in problems:
        if p.kind == "unanswered_call":
            missing.setdefault(p.index, []).append(p.call_id)
    repaired: list[Message] = []
    pending: list[Message] = []
    taken = {message.id for message in messages} if missing else set()
    for index, message in enumerate(messages):
        if index in drop:
            continue
        if message.role != "tool" and pending:
            repaired.extend(pending)
            pending = []
        repaired.append(message)
        for call_id in missing.get(index, []):
            pending.append(own_result(call_id, taken.__contains__))
            taken.add(pending[-1].id)
    repaired.extend(pending)
    return repaired


def missing_result(call_id: str) -> Message:
    """The synthetic result :func:`repair_tool_pairs` sends for a tool call that was never answered."""
    return Message(
        role="tool",
        tool_call_id=call_id,
        content=MISSING_RESULT_TEXT,
        id=f"ctxbudget-missing-{call_id}",
        metadata={"ctxbudget": "synthetic_result"},
    )


def own_result(call_id: str, taken: Callable[[str], bool]) -> Message:
    """:func:`missing_result` with an id no other message of its request has (``taken``: whether one has an id).

    The caller then counts this id as taken: two unanswered calls with one id (reused turn after turn) get two.
    """
    return with_free_id(missing_result(call_id), taken)


def safe_cut_points(messages: Sequence[Message]) -> list[bool]:
    """``result[i]`` is True when the history may be cut before message ``i`` (kept tail = ``messages[i:]``).

    A cut is safe when no tool call made before ``i`` has its result at ``i`` or later; a call that is never
    answered anywhere does not block (it is unanswered either way). ``result[0]`` and ``result[len]`` are True.

    Raises:
        InvalidMessageError: ``messages`` is not a sequence of :class:`~ctxbudget.Message`.
    """
    messages = _checked(messages)
    result_index: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message.role == "tool" and message.tool_call_id:
            result_index.setdefault(message.tool_call_id, index)
    safe = [True] * (len(messages) + 1)
    reach = -1  # the furthest result index of any call made so far
    for index, message in enumerate(messages):
        safe[index] = reach < index
        for call in message.tool_calls:
            reach = max(reach, result_index.get(call.id, -1))
    return safe
