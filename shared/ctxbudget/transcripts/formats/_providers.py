"""Provider transcripts: OpenAI Chat Completions, OpenAI Responses and Anthropic Messages, read exactly, row by row.

Each row is read by :mod:`ctxbudget.providers`, so what a :class:`~ctxbudget.Message` has no field for is kept in
its provider extras and writing the same format back gives the original (``content: null``, the ``arguments``
string as spelled, ``is_error``, thinking blocks, item ids). A request body's other fields (``model``,
``max_tokens``, ``tool_choice``, ...) are kept apart as its *envelope*. A Chat message only the lenient reader
understands (``human``/``ai`` roles, LlamaIndex ``blocks``, ``additional_kwargs``, flat ``{id, name, args}`` calls)
is read by it (:mod:`._generic`), which also names the line and field of a malformed message. Rows are read one at
a time (:class:`~._stream.Rows`): nothing but the ids seen so far is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ...errors import InvalidMessageError, TranscriptError
from ...messages.message import Message, ToolSchema
from ...providers import (
    messages_from_anthropic,
    messages_from_responses,
    tool_from_anthropic,
    tool_from_openai,
    tool_from_responses,
)
from ...providers._common import extras_of, with_extras
from ...providers.anthropic import ANTHROPIC
from ...providers.openai_chat import message_from_openai
from ._generic import convert_one, is_langchain, tools_from
from ._spill import SpillIndex
from ._stream import Rows
from ._where import MAX_DEPTH, Where, fail_from

__all__ = [
    "INSTRUCTIONS",
    "Ids",
    "OpenAIReader",
    "anthropic_stream",
    "anthropic_tools",
    "envelope_of",
    "openai_stream",
    "openai_tools",
    "responses_lead",
    "responses_stream",
    "responses_tools",
    "tools_with",
]

INSTRUCTIONS = "responses_instructions"
"""Metadata key of the system message a Responses request's ``instructions`` were read as."""
_OPENAI_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_LENIENT_KEYS = frozenset({"blocks", "additional_kwargs"})


class Ids:
    """The ids of the messages read so far: a row's own ``id`` is kept, else ``transcript-<index>``.

    Raises (from :meth:`assign`) a :class:`~ctxbudget.errors.TranscriptError` when two messages would share an id,
    naming both places. The ids seen are a :class:`~._spill.SpillIndex`: a long transcript's spill to a temporary
    file instead of growing memory with it.
    """

    def __init__(self) -> None:
        self._seen: SpillIndex[str] = SpillIndex()
        self.index = 0

    def assign(self, message: Message, raw: Any, where: Where) -> Message:
        """``message`` with its id (the row's own, else ``transcript-<index>``), checked against the others."""
        raw_id = raw.get("id") if isinstance(raw, Mapping) else None
        message_id = raw_id if isinstance(raw_id, str) and raw_id else f"transcript-{self.index}"
        self.index += 1
        self.check(message_id, where)
        return message if message.id == message_id else message.model_copy(update={"id": message_id})

    def check(self, message_id: str, where: Where) -> None:
        """Refuse an id used before."""
        seen = self._seen.get(message_id)
        if seen is not None:
            where.fail("id", f"id {message_id!r} is already used by {seen}")
        self._seen[message_id] = where.label


def envelope_of(document: Mapping[str, Any], taken: Sequence[str], source: str) -> dict[str, Any]:
    """The request body's fields other than ``taken`` (``model``, ``max_tokens``, ...), checked like messages."""
    envelope = {key: value for key, value in document.items() if key not in taken}
    Where(source, "request").check_tree(envelope)
    return envelope


# -- OpenAI Chat Completions ---------------------------------------------------------------------------------
def openai_stream(rows: Rows) -> Iterator[Message]:
    """Chat Completions messages, each read exactly when it is one, else by the lenient reader (naming errors)."""
    reader = OpenAIReader()
    for where, entry in rows:
        yield reader.read(where, entry)


class OpenAIReader:
    """Reads Chat Completions messages one at a time, numbering them and refusing a repeated id."""

    def __init__(self) -> None:
        self._ids = Ids()

    def read(self, where: Where, entry: Any) -> Message:
        """``entry`` read exactly when it is a Chat message, else by the lenient reader (naming errors)."""
        where.check_tree(entry)
        ids = self._ids
        message = _exact_openai(entry, ids.index) if _plain_openai(entry) else None
        if message is None:
            message = convert_one(entry, where, ids.index, checked=True)
            ids.index += 1
            ids.check(message.id, where)
            return message
        return ids.assign(message, entry, where)


def _exact_openai(entry: Mapping[str, Any], index: int) -> Message | None:
    try:
        return message_from_openai(entry, path=f"messages[{index}]")
    except (InvalidMessageError, RecursionError):
        return None  # the lenient reader names the line and the field, or reads a shape only it accepts


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
def responses_lead(document: Mapping[str, Any], source: str) -> tuple[list[Message], list[str]]:
    """The system message a request's non-empty ``instructions`` become, and the fields taken from the body.

    The message is marked :data:`INSTRUCTIONS` (written back there); empty instructions stay in the envelope as given.
    """
    instructions = document.get("instructions")
    taken = ["input", "tools"]
    if isinstance(instructions, str) and instructions:
        Where(source, "instructions").check_tree(instructions, "instructions")
        taken.append("instructions")
        return [Message(role="system", content=instructions, metadata={INSTRUCTIONS: True})], taken
    return [], taken


def responses_stream(rows: Rows, lead: Sequence[Message]) -> Iterator[Message]:
    """Responses ``input`` items: consecutive assistant-side items (text, calls, reasoning) are one message."""
    ids = Ids()
    for message in lead:
        yield ids.assign(message, None, Where("", "instructions"))
    run: list[tuple[Where, Any]] = []
    for where, item in rows:
        where.check_tree(item, "input")
        if isinstance(item, Mapping) and _assistant_side(item):
            run.append((where, item))
            continue
        if run:
            yield _responses_message(run, ids)
            run = []
        yield _responses_message([(where, item)], ids)
    if run:
        yield _responses_message(run, ids)


def _assistant_side(item: Mapping[str, Any]) -> bool:
    kind = item.get("type", "message")
    if kind == "message":
        return bool(item.get("role") == "assistant")
    return bool(kind != "function_call_output")


def _responses_message(run: list[tuple[Where, Any]], ids: Ids) -> Message:
    where = run[0][0]
    try:
        converted = messages_from_responses([item for _, item in run])
    except InvalidMessageError as exc:
        fail_from(where, exc, path=("input[0].", ""))
    except RecursionError:
        where.fail("arguments", f"arguments are nested more than {MAX_DEPTH} levels deep")
    return ids.assign(converted[0], None, where)


# -- Anthropic Messages --------------------------------------------------------------------------------------
def anthropic_stream(rows: Rows, system: Any = None, *, system_where: Where | None = None) -> Iterator[Message]:
    """Anthropic messages, one per row; ``system`` (a request's) first. A JSONL ``system`` line is the prompt."""
    ids = Ids()
    if system is not None:
        where = system_where or Where("", "system")
        where.check_tree(system, "system")
        for message in _anthropic([], system, where):
            yield ids.assign(message, None, where)
    results_open = False  # the previous Anthropic message ended with tool results
    for where, entry in rows:
        where.check_tree(entry)
        if isinstance(entry, Mapping) and entry.get("role") == "system":
            converted = _anthropic([], entry.get("content"), where)
        else:
            converted = _anthropic([entry], None, where)
            if results_open and converted and converted[0].role == "tool":  # not folded into the previous one
                first = converted[0]
                extras = {**extras_of(first, ANTHROPIC), "new_message": True}
                converted[0] = first.model_copy(update={"metadata": with_extras(ANTHROPIC, extras, first.metadata)})
            results_open = bool(converted) and converted[-1].role == "tool"
        for message in converted:
            yield ids.assign(message, None, where)


def _anthropic(messages: list[Any], system: Any, where: Where) -> list[Message]:
    try:
        return messages_from_anthropic(messages, system=system)
    except InvalidMessageError as exc:
        fail_from(where, exc, path=("messages[0].", ""))


def tools_with(specs: Any, read: Callable[[object], ToolSchema], source: str) -> tuple[ToolSchema, ...]:
    """Tool specs read by a provider's converter, each checked like a message (``tools[i]`` named)."""
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


def anthropic_tools(specs: Any, source: str) -> tuple[ToolSchema, ...]:
    """Anthropic tool specs."""
    return tools_with(specs, tool_from_anthropic, source)


def responses_tools(specs: Any, source: str) -> tuple[ToolSchema, ...]:
    """Responses tool specs."""
    return tools_with(specs, tool_from_responses, source)
