"""Writing a compacted transcript in a provider's or a framework's format, or as ctxbudget's own document.

``openai``, ``responses`` and ``anthropic`` give exactly what the client's ``create(...)`` takes besides ``model``
(``{"messages", "tools"}``, ``{"input", "tools"}``, ``{"system", "messages", "tools"}``), written by
:mod:`ctxbudget.providers`: messages read from the same format come back as they were read (``content: null``,
``arguments`` strings as spelled, thinking blocks, item ids), the session's summary is an ordinary message. When
the output format is the input's, the input's layout is kept: a bare list stays a list, JSONL stays JSONL, and a
request body keeps its other fields (``model``, ``max_tokens``, ...).

``atif`` is an ATIF trajectory (:mod:`._atif`); ``langchain`` is what LangChain's ``messages_to_dict`` writes (a
list of ``{"type", "data"}``; ``dumpd`` constructors for a ``dumpd`` input) and ``llamaindex`` a ``SimpleChatStore``
JSON (the conversation under its key, the store's other conversations kept), both written without importing the
frameworks: ``messages_from_dict`` and ``SimpleChatStore`` read them back. ``ctxbudget`` is the
``ctxbudget.compacted/1`` document: messages with their metadata, the summary, the goal and the archive of every
original (streamed by the CLI, :mod:`ctxbudget.cli._files`).

:func:`render` returns the text and the rows it holds (the messages, items or steps), whose digests the full
document records so a later ``compact`` of this output can tell it is unchanged and carry the archive forward.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...messages.message import Message, ToolSchema
from ...providers import to_anthropic_request, to_openai_request, to_responses_request
from ._atif import render_atif
from ._providers import INSTRUCTIONS

__all__ = ["DEFAULT_OUTPUT", "OUTPUT_FORMATS", "PROVIDER_FORMATS", "ROW_MEMBERS", "Rendered", "render"]

OUTPUT_FORMATS = ("openai", "responses", "anthropic", "atif", "langchain", "llamaindex", "ctxbudget")
"""What ``ctxbudget compact --output-format`` writes."""
PROVIDER_FORMATS = frozenset({"openai", "responses", "anthropic", "atif", "langchain", "llamaindex"})
"""Output formats that hold only what is sent: the full ctxbudget document is written beside them (see the CLI)."""

DEFAULT_OUTPUT: dict[str, str] = {
    "openai": "openai",
    "responses": "responses",
    "anthropic": "anthropic",
    "claude-code": "anthropic",  # its messages are Anthropic Messages; the event log around them is not rebuilt
    "swe-agent": "openai",  # SWE-agent talks to the model in Chat Completions messages (function calling)
    "mini-swe-agent": "openai",  # likewise
    "tau-bench": "openai",  # a tau-bench traj is Chat Completions messages
    "atif": "atif",
    "langchain": "langchain",
    "langchain-dumpd": "langchain",
    "llamaindex": "llamaindex",
    "ctxbudget-compacted": "ctxbudget",
}
"""The output format ``compact`` writes by default for each input format."""

ROW_MEMBERS = {"openai": "messages", "anthropic": "messages", "responses": "input", "atif": "steps"}
"""The member of a request body (or trajectory) that holds one row per message, item or step."""

_LC_TYPES = {"system": "system", "user": "human", "assistant": "ai", "tool": "tool"}
_LC_CLASSES = {"system": "SystemMessage", "human": "HumanMessage", "ai": "AIMessage", "tool": "ToolMessage"}
_LLAMA_KEY = "ctxbudget"
"""The chat-store key a conversation read from another format is written under."""


class Rendered:
    """An output's text and the rows it holds (messages, items or steps), for the document's digests."""

    def __init__(self, text: str, rows: list[Any]) -> None:
        self.text = text
        self.rows = rows


def render(
    messages: Sequence[Message],
    tools: Sequence[ToolSchema],
    output_format: str,
    *,
    input_format: str,
    jsonl: bool = False,
    envelope: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    model: str | None = None,
    key: str | None = None,
) -> Rendered:
    """``messages`` (the compacted request) in ``output_format`` (any of :data:`PROVIDER_FORMATS`).

    Args:
        messages: the request to write (system messages first).
        tools: the tool schemas.
        output_format: one of :data:`PROVIDER_FORMATS`.
        input_format: the transcript's format; when it is the output format, ``jsonl``, ``envelope`` and ``extra``
            apply (the input's layout and other fields are kept).
        jsonl: the input was JSONL (one message per line): write one per line.
        envelope: the input request body's other fields; ``None`` for a bare list.
        extra: what the reader kept for writing back (a chat store's other conversations).
        model: the model counted with (an ATIF trajectory written from another format names it).
        key: the chat-store key read (``llamaindex``).
    """
    same = input_format == output_format or (output_format == "langchain" and input_format == "langchain-dumpd")
    if output_format == "langchain":
        rows = [_langchain(m, dumpd=input_format == "langchain-dumpd") for m in messages]
        return _listing(rows, jsonl=same and jsonl)
    if output_format == "llamaindex":
        return _llamaindex(messages, key if same else None, extra if same else None)
    if output_format == "atif":
        trajectory = render_atif(messages, tools, envelope if same else None, model)
        return Rendered(_dumps(trajectory), list(trajectory["steps"]))
    member, request = _request(output_format, list(messages), list(tools))
    if same and jsonl:
        rows = list(request[member])
        if "system" in request:  # Anthropic's system prompt as a first line, as the JSONL reader takes it
            rows = [{"role": "system", "content": request["system"]}, *rows]
        return Rendered("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), rows)
    if same and envelope is None and set(request) == {member}:
        return Rendered(_dumps(request[member]), list(request[member]))
    body = {**(envelope if same and envelope is not None else {}), **request}
    return Rendered(_dumps(body), list(request[member]))


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _listing(rows: list[Any], *, jsonl: bool) -> Rendered:
    if jsonl:
        return Rendered("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), rows)
    return Rendered(_dumps(rows), rows)


def _request(output_format: str, messages: list[Message], tools: list[ToolSchema]) -> tuple[str, dict[str, Any]]:
    if output_format == "openai":
        return "messages", to_openai_request(messages, tools)
    if output_format == "responses":
        instructions = [m for m in messages if m.role == "system" and m.metadata.get(INSTRUCTIONS)]
        rest = [m for m in messages if not (m.role == "system" and m.metadata.get(INSTRUCTIONS))]
        request = to_responses_request(rest, tools)
        if instructions:  # read from a request's instructions: written back there
            request = {"instructions": "\n\n".join(m.text for m in instructions), **request}
        return "input", request
    return "messages", to_anthropic_request(messages, tools)


# -- LangChain -----------------------------------------------------------------------------------------------
def _langchain(message: Message, *, dumpd: bool) -> dict[str, Any]:
    """``messages_to_dict`` (or ``dumpd``) of the LangChain message ``message`` stands for."""
    kind = _LC_TYPES[message.role]
    data: dict[str, Any] = {
        "content": message.content if isinstance(message.content, str) else _lc_content(message),
        "additional_kwargs": {},
        "response_metadata": {},
        "type": kind,
        "name": message.name,
        "id": message.id,
    }
    if kind == "ai":
        calls = [{"name": c.name, "args": dict(c.args), "id": c.id, "type": "tool_call"} for c in message.tool_calls]
        data.update(tool_calls=calls, invalid_tool_calls=[], usage_metadata=None)
    elif kind == "tool":
        data.update(tool_call_id=message.tool_call_id, artifact=None, status="success")
    elif kind == "human":
        data["example"] = False
    if dumpd:
        kwargs = {key: value for key, value in data.items() if value is not None and value != {}}
        return {
            "lc": 1,
            "type": "constructor",
            "id": ["langchain", "schema", "messages", _LC_CLASSES[kind]],
            "kwargs": kwargs,
        }
    return {"type": kind, "data": data}


def _lc_content(message: Message) -> list[Any]:
    parts: list[Any] = []
    for block in message.content:
        if isinstance(block, str):
            parts.append(block)
        elif block.type == "text":
            parts.append({"type": "text", "text": block.text or ""})
        else:
            parts.append({"type": block.type, **block.data})
    return parts


# -- LlamaIndex ----------------------------------------------------------------------------------------------
def _llamaindex(messages: Sequence[Message], key: str | None, extra: Mapping[str, Any] | None) -> Rendered:
    """A ``SimpleChatStore`` JSON holding the conversation under ``key`` (the store's other keys kept)."""
    rows = [_llama(message) for message in messages]
    store = dict((extra or {}).get("store") or {})
    body = dict((extra or {}).get("envelope") or {})
    body.setdefault("class_name", "SimpleChatStore")
    store[key or _LLAMA_KEY] = rows
    return Rendered(_dumps({"store": store, **body}), rows)


def _llama(message: Message) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if message.tool_calls:
        kwargs["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args_json()}}
            for c in message.tool_calls
        ]
    if message.role == "tool":
        kwargs["tool_call_id"] = message.tool_call_id
        if message.name:
            kwargs["name"] = message.name
    blocks: list[dict[str, Any]] = []
    if isinstance(message.content, str):
        blocks.append({"block_type": "text", "text": message.content})
    else:
        for block in message.content:
            if block.type == "text":
                blocks.append({"block_type": "text", "text": block.text or ""})
            else:
                blocks.append({"block_type": block.type, **block.data})
    return {"role": message.role, "additional_kwargs": kwargs, "blocks": blocks}
