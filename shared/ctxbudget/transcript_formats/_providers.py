"""Provider transcripts: OpenAI Chat Completions, OpenAI Responses and Anthropic Messages, read exactly.

Each is read by :mod:`ctxbudget.providers`, so what a :class:`~ctxbudget.Message` has no field for is kept in its
provider extras and writing the same format back gives the original (``content: null``, the ``arguments`` string as
spelled, ``is_error``, thinking blocks, item ids). A request body's other fields (``model``, ``max_tokens``,
``tool_choice``, ...) are kept apart as its *envelope*. Chat messages that only the lenient reader understands
(``human``/``ai`` roles, LlamaIndex ``blocks``, ``additional_kwargs``, flat ``{id, name, args}`` calls) are read by
it (:mod:`._generic`), which also names the line and field of a malformed message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidMessageError, TranscriptError
from ..messages import Message, ToolSchema
from ..providers import (
    messages_from_anthropic,
    messages_from_openai,
    messages_from_responses,
    tool_from_anthropic,
    tool_from_openai,
    tool_from_responses,
)
from ._generic import convert_all, is_langchain, tools_from
from ._where import Where, fail_from

__all__ = [
    "INSTRUCTIONS",
    "Read",
    "anthropic_document",
    "anthropic_rows",
    "envelope_of",
    "numbered",
    "openai_rows",
    "openai_tools",
    "responses_document",
]

INSTRUCTIONS = "responses_instructions"
"""Metadata key of the system message a Responses request's ``instructions`` were read as."""
_OPENAI_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_LENIENT_KEYS = frozenset({"blocks", "additional_kwargs"})


@dataclass(frozen=True)
class Read:
    """What a reader found: the messages, the tools, and the request body's other fields (``None``: a bare list)."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...] = ()
    envelope: dict[str, Any] | None = None
    key: str | None = None


def numbered(messages: Sequence[Message], given: Sequence[Any], wheres: Sequence[Where]) -> tuple[Message, ...]:
    """``messages`` with the id their source gave (a non-empty string ``id``), else ``transcript-<index>``.

    Raises:
        TranscriptError: two messages would share an id (naming both places).
    """
    seen: dict[str, str] = {}
    out = []
    for index, (message, raw) in enumerate(zip(messages, given, strict=True)):
        where = wheres[min(index, len(wheres) - 1)]
        raw_id = raw.get("id") if isinstance(raw, Mapping) else None
        message_id = raw_id if isinstance(raw_id, str) and raw_id else f"transcript-{index}"
        if message_id in seen:
            where.fail("id", f"id {message_id!r} is already used by {seen[message_id]}")
        seen[message_id] = where.label
        out.append(message.model_copy(update={"id": message_id}))
    return tuple(out)


def envelope_of(document: Mapping[str, Any], taken: Sequence[str], source: str) -> dict[str, Any]:
    """The request body's fields other than ``taken`` (``model``, ``max_tokens``, ...), checked like messages."""
    envelope = {key: value for key, value in document.items() if key not in taken}
    Where(source, "request").check_tree(envelope)
    return envelope


# -- OpenAI Chat Completions ---------------------------------------------------------------------------------
def openai_rows(entries: Sequence[tuple[Where, Any]]) -> tuple[Message, ...]:
    """Chat Completions messages, read exactly when they all are; else by the lenient reader (which names errors)."""
    for where, entry in entries:
        where.check_tree(entry)
    if not all(_plain_openai(entry) for _, entry in entries):
        return convert_all(entries)
    try:
        messages = messages_from_openai([entry for _, entry in entries])
    except InvalidMessageError:
        return convert_all(entries)  # names the line and the field, or reads a shape only it accepts
    return numbered(messages, [entry for _, entry in entries], [where for where, _ in entries])


def _plain_openai(entry: Any) -> bool:
    return (
        isinstance(entry, Mapping)
        and isinstance(entry.get("role"), str)
        and entry["role"] in _OPENAI_ROLES
        and not _LENIENT_KEYS.intersection(entry)
        and is_langchain(entry) is None
    )


def openai_tools(specs: Any, source: str) -> tuple[ToolSchema, ...]:
    """OpenAI tool specs, checked by the lenient reader (which names errors), then read exactly."""
    checked = tools_from(specs, source)
    try:
        return tuple(tool_from_openai(spec) for spec in specs)
    except InvalidMessageError:
        return checked  # a bare function spec: the lenient reader's schema


# -- OpenAI Responses ----------------------------------------------------------------------------------------
def responses_document(document: Any, source: str) -> Read:
    """A Responses request body (``{"input": [...], "instructions", "tools", ...}``) or a bare list of items.

    Non-empty ``instructions`` become a leading system message marked :data:`INSTRUCTIONS` (the model sees them
    first; writing Responses puts them back in ``instructions``); empty ones stay in
    the envelope as given.
    """
    items, envelope = document, None
    tools: tuple[ToolSchema, ...] = ()
    lead: list[Message] = []
    if isinstance(document, Mapping):
        items = document.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        tools = _tools_with(document.get("tools") or [], tool_from_responses, source)
        instructions = document.get("instructions")
        taken = ["input", "tools"]
        if isinstance(instructions, str) and instructions:
            Where(source, "instructions").check_tree(instructions, "instructions")
            lead = [Message(role="system", content=instructions, metadata={INSTRUCTIONS: True})]
            taken.append("instructions")
        envelope = envelope_of(document, taken, source)
    if not isinstance(items, list) or not items:
        raise TranscriptError(f"{source}: 'input' must be a non-empty list of Responses items", field="input")
    where = Where(source, "input")
    where.check_tree(items, "input")
    try:
        messages = [*lead, *messages_from_responses(items)]
    except InvalidMessageError as exc:
        fail_from(where, exc)
    return Read(numbered(messages, [None] * len(messages), [where]), tools=tools, envelope=envelope)


# -- Anthropic Messages --------------------------------------------------------------------------------------
def anthropic_document(document: Any, source: str) -> Read:
    """An Anthropic request body (``{"system", "messages", "tools", ...}``) or a bare list of its messages."""
    messages_value, system, envelope = document, None, None
    tools: tuple[ToolSchema, ...] = ()
    if isinstance(document, Mapping):
        messages_value, system = document.get("messages"), document.get("system")
        tools = _tools_with(document.get("tools") or [], tool_from_anthropic, source)
        envelope = envelope_of(document, ("messages", "system", "tools"), source)
    if not isinstance(messages_value, list) or not messages_value:
        raise TranscriptError(f"{source}: 'messages' must be a non-empty list of messages", field="messages")
    where = Where(source, "request")
    where.check_tree(messages_value, "messages")
    where.check_tree(system, "system")
    try:
        messages = messages_from_anthropic(messages_value, system=system)
    except InvalidMessageError as exc:
        fail_from(where, exc)
    return Read(numbered(messages, [None] * len(messages), [where]), tools=tools, envelope=envelope)


def anthropic_rows(entries: Sequence[tuple[Where, Any]]) -> tuple[Message, ...]:
    """Anthropic messages one per JSONL line (a ``system`` role line becomes the system prompt)."""
    messages: list[Message] = []
    wheres: list[Where] = []
    for where, entry in entries:
        where.check_tree(entry)
        try:
            if isinstance(entry, Mapping) and entry.get("role") == "system":
                converted = messages_from_anthropic([], system=entry.get("content"))
            else:
                converted = messages_from_anthropic([entry])
        except InvalidMessageError as exc:
            fail_from(where, exc)
        messages.extend(converted)
        wheres.extend([where] * len(converted))
    return numbered(messages, [None] * len(messages), wheres)


def _tools_with(specs: Any, read: Callable[[object], ToolSchema], source: str) -> tuple[ToolSchema, ...]:
    if not isinstance(specs, list):
        raise TranscriptError(f"{source}: 'tools' must be a list of tool specs", field="tools")
    tools = []
    for index, spec in enumerate(specs):
        where = Where(source, f"tools[{index}]")
        where.check_tree(spec)
        try:
            tools.append(read(spec))
        except InvalidMessageError as exc:
            where.fail("tools", str(exc))
    return tuple(tools)
