"""Which format a parsed transcript is in, told from its content (never from the file name).

A JSON document is tried in this order: a ``ctxbudget.compacted/1`` document, a LlamaIndex chat store
(``store``), an ATIF trajectory (``schema_version`` ``ATIF-...`` with ``steps``), a mini-swe-agent trajectory
(``messages`` with its ``trajectory_format``), a tau-bench result or list of them (``traj``), a SWE-agent
trajectory (``history`` / ``trajectory``), a Responses request (``input``) or list of Responses items (a ``type``
such as ``function_call``), an Anthropic request (``system`` beside ``messages``, or ``tool_use`` / ``tool_result``
/ ``thinking`` blocks), a Chat Completions request or list (``role`` dicts), LangChain dumps. JSONL lines are tried
the same way, Claude Code session events (``type`` + ``uuid``/``sessionId``) first. What matches nothing raises
:class:`~ctxbudget.errors.TranscriptError` (field ``format``) describing what was seen and listing the formats,
with ``--format`` as the way to force one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...errors import TranscriptError
from ._atif import is_atif
from ._claude_code import is_claude_code_event
from ._generic import is_langchain
from ._trajectories import is_mini_swe_agent, is_swe_agent, is_tau_bench

__all__ = ["COMPACTED_FORMAT", "READ_FORMATS", "detect_document", "detect_rows", "unknown_format"]

COMPACTED_FORMAT = "ctxbudget.compacted/1"
"""The ``format`` field of a file ``ctxbudget compact`` writes."""
READ_FORMATS = (
    "openai",
    "responses",
    "anthropic",
    "claude-code",
    "langchain",
    "llamaindex",
    "swe-agent",
    "mini-swe-agent",
    "tau-bench",
    "atif",
    "ctxbudget",
)
"""The names ``--format`` takes (each detected from the content when not given)."""

_RESPONSES_TYPES = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "item_reference", "compaction"}
)
_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result"}
)
_RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file"})
_LOOK_AHEAD = 50  # rows inspected to tell a format


def detect_document(document: Any, source: str) -> str:
    """The format of a whole JSON document (see the module docstring)."""
    if isinstance(document, Mapping):
        return _detect_object(document, source)
    if isinstance(document, list):
        if not document:
            return "openai"  # reported as an empty transcript
        if is_tau_bench(document):
            return "tau-bench"
        return detect_rows(document)
    raise unknown_format(source, f"a JSON {_kind(document)}")


_OBJECT_FORMATS: tuple[tuple[str, Callable[[Mapping[str, Any]], bool]], ...] = (
    ("ctxbudget-compacted", lambda document: document.get("format") == COMPACTED_FORMAT),
    ("llamaindex", lambda document: "store" in document),
    ("atif", is_atif),
    ("mini-swe-agent", is_mini_swe_agent),
    ("tau-bench", is_tau_bench),
    ("swe-agent", is_swe_agent),
    ("responses", lambda document: "input" in document and document.get("messages") is None),
)


def _detect_object(document: Mapping[str, Any], source: str) -> str:
    for name, matches in _OBJECT_FORMATS:
        if matches(document):
            return name
    messages = document.get("messages")
    if "input" in document and messages is None:
        return "responses"
    if isinstance(messages, list):
        if "system" in document or _anthropic(messages):
            return "anthropic"
        return detect_rows(messages) if messages else "openai"
    if "role" in document or ("type" in document and "data" in document) or is_claude_code_event(document):
        return detect_rows([document])
    keys = ", ".join(repr(k) for k in list(document)[:12])
    raise unknown_format(source, f"a JSON object with keys [{keys}]")


def detect_rows(rows: Sequence[Any]) -> str:
    """The format of a list of messages or events (JSONL lines, or a JSON array); lenient Chat reading by default.

    Rows no reader claims fall to the lenient Chat reader, which names the line and field that is wrong.
    """
    head = rows[:_LOOK_AHEAD]
    if any(is_claude_code_event(row) for row in head):
        return "claude-code"
    langchain = is_langchain(rows[0])
    if langchain is not None:
        return langchain
    if any(_responses_item(row) for row in head):
        return "responses"
    if _anthropic(head):
        return "anthropic"
    return "openai"


def _responses_item(row: Any) -> bool:
    if not isinstance(row, Mapping) or "data" in row or "message" in row:
        return False
    kind = row.get("type")
    if isinstance(kind, str) and (kind in _RESPONSES_TYPES or kind.endswith(("_call", "_call_output"))):
        return True
    content = row.get("content")
    return isinstance(content, list) and any(
        isinstance(part, Mapping) and isinstance(part.get("type"), str) and part["type"] in _RESPONSES_PARTS
        for part in content
    )


def _anthropic(messages: Sequence[Any]) -> bool:
    for message in messages[:_LOOK_AHEAD]:
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if isinstance(kind, str) and (
                kind in _ANTHROPIC_BLOCKS or (kind in ("image", "document") and "source" in block)
            ):
                return True
    return False


def _kind(value: Any) -> str:
    names = {str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def unknown_format(source: str, seen: str) -> TranscriptError:
    """The error for a transcript no reader claims: what was seen, the formats, and ``--format``."""
    return TranscriptError(
        f"{source}: cannot tell the transcript's format: found {seen}; expected one of "
        f"{', '.join(READ_FORMATS)} (force one with --format NAME)",
        field="format",
    )
