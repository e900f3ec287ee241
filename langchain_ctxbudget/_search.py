"""The ``search_archive`` tool's parts: its arguments, the archive it searches, and its answer to the model.

A thread's originals live in two places: the agent state's ``ctxbudget_archive`` (persisted by the checkpointer,
so it survives restarts) and the live session's archive (the same entries, plus any not yet written back). The
search covers both: the live archive alone when it holds every stored handle (the usual case), else an archive
built from the state, cached per thread and extended by what is new, so repeated searches never re-index.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from ctxbudget.archive import Archive, ArchiveEntry
from ctxbudget.archive_search import MAX_K
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, field_validator

from .convert import CTXBUDGET_KEY

__all__ = ["SEARCH_TOOL_NAME", "SearchArchiveArgs", "StateArchives", "search_message", "search_tool"]

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


class StateArchives:
    """Archives rebuilt from agent states, one per thread, cached by the state archive's size (LRU of ``max_threads``).

    A state whose archive grew extends the cached archive with its new entries only (each is indexed once, by the
    next search); one that shrank (another branch of the thread) gets a fresh archive.
    """

    def __init__(self, max_threads: int) -> None:
        self._max = max_threads
        self._cache: OrderedDict[str, tuple[int, Archive]] = OrderedDict()
        self._lock = threading.Lock()

    def archive(self, stored: Mapping[str, Any], key: str | None) -> Archive:
        """The archive holding every entry of ``stored`` (a state's ``ctxbudget_archive``); ``key`` is the thread."""
        with self._lock:
            cached = self._cache.get(key) if key is not None else None
        if cached is not None and cached[0] == len(stored):
            return cached[1]
        archive = cached[1] if cached is not None and cached[0] < len(stored) else Archive()
        for handle, value in stored.items():
            if handle not in archive:
                archive.add(ArchiveEntry.model_validate(value))
        if key is not None:
            with self._lock:
                self._cache[key] = (len(stored), archive)
                self._cache.move_to_end(key)
                while len(self._cache) > self._max:
                    self._cache.popitem(last=False)
        return archive

    def target(self, stored: Mapping[str, Any], live: Archive | None, key: str | None) -> Archive:
        """What to search: ``live`` when it holds every stored handle, else the state's archive plus ``live``."""
        if live is not None and all(handle in live for handle in stored):
            return live
        archive = self.archive(stored, key)
        for entry in live or ():
            archive.add(entry)
        return archive


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


def search_message(call_id: str, text: str, *, error: bool = False) -> ToolMessage:
    """The tool result answering a ``search_archive`` call (``status="error"`` for bad arguments)."""
    return ToolMessage(
        content=f"Error: {text}" if error else text,
        tool_call_id=call_id,
        name=SEARCH_TOOL_NAME,
        status="error" if error else "success",
        response_metadata={CTXBUDGET_KEY: {"kind": "search"}},
    )
