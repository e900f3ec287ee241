"""Reading archived originals back: the ``read_archived_output`` and ``search_archive`` tools, and their answers.

:class:`ArchiveReader` answers both tools' calls (the tools themselves never run: their arguments are validated
here, and a bad argument, an unknown handle or a missing archive comes back as an error for the model) and the
middleware's direct :meth:`~langchain_ctxbudget.ContextBudgetMiddleware.read_archived`,
:meth:`~langchain_ctxbudget.ContextBudgetMiddleware.search_archived` and
:meth:`~langchain_ctxbudget.ContextBudgetMiddleware.archived`. What is read is the archive the state's reference
names, through the store (:mod:`langchain_ctxbudget._archives`), or, for an output bounded since the last model call,
the original its message still carries. Every answer fits one tool output of the window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ctxbudget.archive import HANDLE_PREFIX, Archive
from ctxbudget.archive.search import ArchiveHit, check_search_args, render_hits
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import ArchiveError, InvalidMessageError, InvalidPolicyError, UsageError
from ctxbudget.messages import Message
from ctxbudget.messages._validation import describe_error, to_usage_error
from ctxbudget.messages.tokens import TokenCounter
from ctxbudget.stores.base import SnapshotStore
from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, ValidationError

from ._archive_store import GraphStore
from ._archives import Archives
from ._restore import state_archive
from ._search import SEARCH_TOOL_NAME, SearchArchiveArgs, search_message
from ._thread_archive import ThreadArchive
from ._view import ThreadView
from .convert import CTXBUDGET_KEY

__all__ = [
    "READ_TOOL_NAME",
    "ArchiveReader",
    "Budget",
    "ReadArchivedArgs",
    "archived_messages",
    "read_error",
    "read_tool",
]

READ_TOOL_NAME = "read_archived_output"
"""Name of the read-back tool the middleware adds."""


class ReadArchivedArgs(BaseModel):
    """Arguments of the ``read_archived_output`` tool (validated before any read; the model fills them in)."""

    handle: str = Field(min_length=1, description="The handle shown in the marker; it starts with ctx://archive/.")
    offset: int = Field(default=0, ge=0, description="First character to return (0 = the start).")
    limit: int = Field(default=20_000, ge=1, description="Most characters to return.")


class Budget(Protocol):
    """What the reader sizes its answers by, read at every call: the middleware's policy, counter and window."""

    @property
    def policy(self) -> CompactionPolicy:
        """The compaction policy (its per-output limit bounds every answer)."""

    @property
    def counter(self) -> TokenCounter:
        """The token counter answers are measured with."""

    @property
    def max_tokens(self) -> int | None:
        """The window when the thread has no live session yet (``None``: 128,000)."""


def read_tool(read: Callable[..., str]) -> BaseTool:
    """The model-facing read-back tool; the middleware answers its calls itself (``read`` is for direct invocation)."""

    def read_archived_output(handle: str, offset: int = 0, limit: int = 20_000) -> str:
        return read(handle, offset=offset, limit=limit)

    return StructuredTool.from_function(
        read_archived_output,
        name=READ_TOOL_NAME,
        description=(
            "Read back the full text of a tool output or earlier message that was shortened or archived to save "
            "context. Pass the handle shown in the marker (it starts with ctx://archive/); use offset and limit "
            "(characters) to page through long text."
        ),
        args_schema=ReadArchivedArgs,
    )


def read_error(call_id: str, message: str) -> ToolMessage:
    """The error result answering a read-back call (``status="error"``)."""
    return ToolMessage(
        content=f"Error: {message}",
        tool_call_id=call_id,
        name=READ_TOOL_NAME,
        status="error",
        response_metadata={CTXBUDGET_KEY: {"kind": "read_back"}},
    )


class ArchiveReader:
    """Reads a state's archived originals for the read-back and search tools and the middleware's own methods.

    Args:
        budget: the middleware (its policy, counter and window bound every answer).
        archives: the archive stores the states' references name.
        lookup_view: the cached view of a call's thread (``(state, runtime) -> view or None``).
    """

    def __init__(
        self, budget: Budget, archives: Archives, lookup_view: Callable[[Any, Any], ThreadView | None]
    ) -> None:
        self.budget = budget
        self.archives = archives
        self.lookup_view = lookup_view

    # -- read-back -----------------------------------------------------------------------------------------------
    def _read_args(self, tool_call: ToolCall) -> ReadArchivedArgs | ToolMessage:
        """The read-back call's arguments, or the error answering it (the tool itself never runs: validated here)."""
        try:
            return ReadArchivedArgs.model_validate(tool_call.get("args") or {})
        except ValidationError as exc:
            details = "; ".join(describe_error(error) for error in exc.errors(include_url=False))
            return read_error(tool_call["id"] or "", f"invalid arguments for {READ_TOOL_NAME}: {details}")

    def _read_reply(
        self, tool_call: ToolCall, args: ReadArchivedArgs, full: str | None, view: ThreadView | None
    ) -> ToolMessage:
        call_id = tool_call["id"] or ""
        if full is None:
            return read_error(
                call_id, f"handle: no archived output with handle {args.handle!r}; handles start with {HANDLE_PREFIX}"
            )
        return ToolMessage(
            content=self.page(full, args.offset, args.limit, view),
            tool_call_id=call_id,
            name=READ_TOOL_NAME,
            response_metadata={CTXBUDGET_KEY: {"kind": "read_back"}},
        )

    def serve_read(self, tool_call: ToolCall, state: Any, runtime: Any) -> ToolMessage:
        """Answer a read-back call; bad arguments and unknown handles come back as an error for the model."""
        args = self._read_args(tool_call)
        if isinstance(args, ToolMessage):
            return args
        state = state if isinstance(state, Mapping) else None
        view = self.lookup_view(state, runtime)
        try:
            full = self.lookup(args.handle, state, self.archives.of_state(state, runtime, view))
        except ArchiveError as exc:
            return read_error(tool_call["id"] or "", str(exc))
        return self._read_reply(tool_call, args, full, view)

    async def aserve_read(self, tool_call: ToolCall, state: Any, runtime: Any) -> ToolMessage:
        """Async :meth:`serve_read`."""
        args = self._read_args(tool_call)
        if isinstance(args, ToolMessage):
            return args
        state = state if isinstance(state, Mapping) else None
        view = self.lookup_view(state, runtime)
        try:
            archive = await self.archives.aof_state(state, runtime, view)
            if isinstance(archive, ThreadArchive) and args.handle in archive.known:
                await archive.aget(args.handle)  # into the cache: the lookup below does no I/O
            full = self.lookup(args.handle, state, archive)
        except ArchiveError as exc:
            return read_error(tool_call["id"] or "", str(exc))
        return self._read_reply(tool_call, args, full, view)

    def read(self, handle: str, *, offset: int, limit: int, state: Mapping[str, Any] | None, runtime: Any) -> str:
        """:meth:`~langchain_ctxbudget.ContextBudgetMiddleware.read_archived` (see there)."""
        try:
            args = ReadArchivedArgs(handle=handle, offset=offset, limit=limit)
        except ValidationError as exc:
            raise to_usage_error(exc, InvalidPolicyError, READ_TOOL_NAME) from None
        view = self.lookup_view(state, runtime)
        full = self.lookup(args.handle, state, self.archives.of_state(state, runtime, view))
        if full is None:
            return f"[no archived output with handle {args.handle!r}; handles start with {HANDLE_PREFIX}]"
        return self.page(full, args.offset, args.limit, view)

    # -- search --------------------------------------------------------------------------------------------------
    def search(self, query: str, *, k: int, state: Mapping[str, Any] | None, runtime: Any) -> list[ArchiveHit]:
        """:meth:`~langchain_ctxbudget.ContextBudgetMiddleware.search_archived` (see there)."""
        try:
            args = SearchArchiveArgs(query=query, k=k)
        except ValidationError as exc:
            raise to_usage_error(exc, InvalidPolicyError, SEARCH_TOOL_NAME) from None
        check_search_args(args.query, args.k)
        archive = self.archives.of_state(state, runtime, self.lookup_view(state, runtime))
        return archive.search(args.query, args.k) if archive is not None else []

    def _search_args(self, tool_call: ToolCall) -> SearchArchiveArgs | ToolMessage:
        try:  # the tool's args_schema: the tool itself never runs, so its validation must happen here
            return SearchArchiveArgs.model_validate(tool_call.get("args") or {})
        except ValidationError as exc:
            details = "; ".join(describe_error(error) for error in exc.errors(include_url=False))
            message = f"invalid arguments for {SEARCH_TOOL_NAME}: {details}"
            return search_message(tool_call["id"] or "", message, error=True)

    def _search_reply(
        self, tool_call: ToolCall, args: SearchArchiveArgs, archive: Archive | None, view: ThreadView | None
    ) -> ToolMessage:
        """Hits that fit one tool output."""
        call_id = tool_call["id"] or ""
        try:
            check_search_args(args.query, args.k)
            hits = archive.search(args.query, args.k) if archive is not None else []
        except UsageError as exc:  # a blank query
            return search_message(call_id, f"invalid arguments for {SEARCH_TOOL_NAME}: {exc}", error=True)
        budget = self._output_budget(view)
        counter = self.budget.counter
        text = render_hits(hits, args.query, max_tokens=max(1, budget), counter=counter)
        return search_message(call_id, text, max_tokens=max(1, budget), counter=counter)

    def serve_search(self, tool_call: ToolCall, state: Any, runtime: Any) -> ToolMessage:
        """Answer a search call over the state's own archive, or an error naming the bad argument."""
        args = self._search_args(tool_call)
        if isinstance(args, ToolMessage):
            return args
        state = state if isinstance(state, Mapping) else None
        view = self.lookup_view(state, runtime)
        try:
            archive = self.archives.of_state(state, runtime, view)
        except ArchiveError as exc:
            return search_message(tool_call["id"] or "", str(exc), error=True)
        return self._search_reply(tool_call, args, archive, view)

    async def aserve_search(self, tool_call: ToolCall, state: Any, runtime: Any) -> ToolMessage:
        """Async :meth:`serve_search` (entries not yet indexed are read with the store's async twins)."""
        args = self._search_args(tool_call)
        if isinstance(args, ToolMessage):
            return args
        state = state if isinstance(state, Mapping) else None
        view = self.lookup_view(state, runtime)
        try:
            archive = await self.archives.aof_state(state, runtime, view)
            if isinstance(archive, ThreadArchive):
                await archive.aindex()
        except ArchiveError as exc:
            return search_message(tool_call["id"] or "", str(exc), error=True)
        return self._search_reply(tool_call, args, archive, view)

    # -- the originals -------------------------------------------------------------------------------------------
    def _output_budget(self, view: ThreadView | None) -> int:
        """The tokens one answer may take: the per-output limit of the thread's window, less a margin."""
        budget = self.budget
        return budget.policy.tool_output_limit(view.session.max_tokens if view else budget.max_tokens or 128_000) - 64

    def page(self, full: str, offset: int, limit: int, view: ThreadView | None) -> str:
        """``full[offset:offset + limit]``, cut to one tool output, then a line saying where the next page starts."""
        chunk = full[offset : offset + limit]
        budget = self._output_budget(view)
        while chunk and self.budget.counter.count_text(chunk) > budget:
            chunk = chunk[: int(len(chunk) * 0.8)]
        end = offset + len(chunk)
        footer = f"\n[chars {offset:,}-{end:,} of {len(full):,}" + (
            f"; continue with offset={end}]" if end < len(full) else "; end]"
        )
        return chunk + footer

    @staticmethod
    def lookup(handle: str, state: Mapping[str, Any] | None, archive: Archive | None) -> str | None:
        """The original under ``handle``: in the state's archive, else in a message bounded since the last call."""
        if archive is not None and handle in archive:
            return archive.get(handle).readable_text
        for message in reversed((state or {}).get("messages") or []):
            marks = message.response_metadata.get(CTXBUDGET_KEY)
            if isinstance(marks, dict) and marks.get("handle") == handle and "original" in marks:
                return str(marks["original"])
        return None

    def archived(self, state: Mapping[str, Any], runtime: Any) -> list[Message]:
        """:meth:`~langchain_ctxbudget.ContextBudgetMiddleware.archived` (see there)."""
        archive = self.archives.of_state(state, runtime, self.lookup_view(state, runtime))
        return archive.messages() if archive is not None else []


def archived_messages(state: Mapping[str, Any], *, store: SnapshotStore | GraphStore | None = None) -> list[Message]:
    """Every archived original of an agent state (one per message id).

    Args:
        state: the agent state (``agent.get_state(config).values``).
        store: the archive store the state's reference names: the middleware's ``archive_store`` or the agent's
            store (``create_agent(..., store=...)``); ``None``: the middleware's default, the process's in-memory
            store. Not read for a state written by an earlier version, which holds its archive inline.

    Raises:
        InvalidMessageError: ``state`` is not a mapping (``field="state"``).
        ArchiveError: the store does not hold the archive the state names (the message says which to pass).
    """
    if not isinstance(state, Mapping):
        raise InvalidMessageError(
            f"state: expected the agent state, a mapping (agent.get_state(config).values), got {type(state).__name__}",
            field="state",
        )
    ref, inline = state_archive(state)
    if ref is None:
        return Archive(inline).messages()
    return Archives(store).of_state(state, None, None).messages()  # type: ignore[union-attr]  # a state is given
