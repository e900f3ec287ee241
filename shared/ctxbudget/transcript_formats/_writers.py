"""Writing a compacted transcript in a provider's format, or as ctxbudget's own document.

``openai``, ``responses`` and ``anthropic`` give exactly what the client's ``create(...)`` takes besides ``model``
(``{"messages", "tools"}``, ``{"input", "tools"}``, ``{"system", "messages", "tools"}``), written by
:mod:`ctxbudget.providers`: messages read from the same format come back as they were read (``content: null``,
``arguments`` strings as spelled, thinking blocks, item ids), the session's summary is an ordinary message. When
the output format is the input's, the input's layout is kept: a bare list stays a list, JSONL stays JSONL, and a
request body keeps its other fields (``model``, ``max_tokens``, ...). ``ctxbudget`` is the ``ctxbudget.compacted/1``
document: messages with their metadata, the summary, the goal and the archive of every original.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..messages import Message, ToolSchema
from ..providers import to_anthropic_request, to_openai_request, to_responses_request
from ._providers import INSTRUCTIONS

__all__ = ["DEFAULT_OUTPUT", "OUTPUT_FORMATS", "PROVIDER_FORMATS", "render"]

OUTPUT_FORMATS = ("openai", "responses", "anthropic", "ctxbudget")
"""What ``ctxbudget compact --output-format`` writes."""
PROVIDER_FORMATS = frozenset({"openai", "responses", "anthropic"})
"""Output formats written as a provider's request (with the full document beside them, see the CLI)."""

DEFAULT_OUTPUT: dict[str, str] = {
    "openai": "openai",
    "responses": "responses",
    "anthropic": "anthropic",
    "claude-code": "anthropic",  # its messages are Anthropic Messages; the event log around them is not rebuilt
    "swe-agent": "openai",  # SWE-agent talks to the model in Chat Completions messages (function calling)
    "tau-bench": "openai",  # a tau-bench traj is Chat Completions messages
    "langchain": "ctxbudget",  # writing LangChain's own dumps would need LangChain; the core never imports it
    "langchain-dumpd": "ctxbudget",
    "llamaindex": "ctxbudget",  # likewise for LlamaIndex
    "ctxbudget-compacted": "ctxbudget",
}
"""The output format ``compact`` writes by default for each input format."""


def render(
    document: Mapping[str, Any],
    output_format: str,
    *,
    input_format: str,
    jsonl: bool = False,
    envelope: Mapping[str, Any] | None = None,
) -> str:
    """The text of ``document`` (what :func:`~ctxbudget._analysis.compact_transcript` returns) in ``output_format``.

    Args:
        document: the ``ctxbudget.compacted/1`` document.
        output_format: one of :data:`OUTPUT_FORMATS`.
        input_format: the transcript's format; when it is the output format, ``jsonl`` and ``envelope`` apply.
        jsonl: the input was JSONL (one message per line): write one per line.
        envelope: the input request body's other fields; ``None`` for a bare list.
    """
    if output_format == "ctxbudget":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    messages = [Message.model_validate(raw) for raw in document["messages"]]
    tools = [ToolSchema.model_validate(raw) for raw in document.get("tools") or []]
    key, request = _request(output_format, messages, tools)
    same = input_format == output_format
    if same and jsonl:
        rows = request[key]
        if "system" in request:  # Anthropic's system prompt as a first line, as the JSONL reader takes it
            rows = [{"role": "system", "content": request["system"]}, *rows]
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    if same and envelope is None and set(request) == {key}:
        return json.dumps(request[key], indent=2, ensure_ascii=False) + "\n"
    body = {**(envelope if same and envelope is not None else {}), **request}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


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
