"""The ``search_archive`` tool's parts: its arguments, the archive it searches, and its answer to the model.

What is searched is the archive the agent state's reference names, in the archive store (see ``_archives``): the
state's own entries, never another branch's or another agent's; each entry is indexed once per cached archive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxbudget.archive.search import MAX_K, fit_text
from ctxbudget.messages.tokens import TokenCounter
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, field_validator

from .convert import CTXBUDGET_KEY

__all__ = ["SEARCH_TOOL_NAME", "SearchArchiveArgs", "search_message", "search_tool"]

SEARCH_TOOL_NAME = "search_archive"
"""Name of the archive search tool the middleware adds beside the read-back tool."""


class SearchArchiveArgs(BaseModel):
    """Arguments of the ``search_archive`` tool (validated before any search; the model fills them in)."""

    query: str = Field(min_length=1, description="Keywords, identifiers, file paths or ticket ids to look for.")
    k: int = Field(default=5, ge=1, le=MAX_K, description="Most hits to return, best first.")

    @field_validator("k", mode="before")
    @classmethod
    def _no_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"must be an int in 1..{MAX_K}, got {value!r}")  # pydantic reports a ValueError
        return value


def search_tool(search: Callable[[str, int], str]) -> BaseTool:
    """The model-facing tool; the middleware answers its calls itself (``search`` is for direct invocation)."""

    def search_archive(query: str, k: int = 5) -> str:
        return search(query, k)

    return StructuredTool.from_function(
        search_archive,
        name=SEARCH_TOOL_NAME,
        description=(
            "Search everything that was archived to save context (earlier messages, tool outputs, logs, code) and "
            "return the best matches, each with its ctx://archive/ handle and an excerpt. Use exact keywords, file "
            "paths, identifiers or ticket ids; then call read_archived_output with a handle for the full text."
        ),
        args_schema=SearchArchiveArgs,
    )


def search_message(
    call_id: str,
    text: str,
    *,
    error: bool = False,
    max_tokens: int | None = None,
    counter: TokenCounter | None = None,
) -> ToolMessage:
    """The tool result answering a ``search_archive`` call (``status="error"`` for bad arguments).

    With ``max_tokens`` and ``counter`` (the per-output limit), a text over the limit is cut at its end (marked ``…``)
    so the result is bounded like any other tool output; render hits with :func:`~ctxbudget.render_hits` and the same
    limit first, so whole hits are dropped before any is cut.
    """
    content = f"Error: {text}" if error else text
    if max_tokens is not None and counter is not None:
        content = fit_text(content, max(1, max_tokens), counter)
    return ToolMessage(
        content=content,
        tool_call_id=call_id,
        name=SEARCH_TOOL_NAME,
        status="error" if error else "success",
        response_metadata={CTXBUDGET_KEY: {"kind": "search"}},
    )
