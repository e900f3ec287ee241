"""Tools whose outputs are bounded before they reach an agent's scratchpad.

LlamaIndex agents keep the current run's tool calls and results in a scratchpad and hand them to the memory only
when the run ends, so a memory cannot bound a huge result the agent is about to send back to the LLM in the same
run. Wrapping the tools closes that gap::

    agent = FunctionAgent(tools=bound_tools(tools, memory), llm=llm)

Each output over the memory's per-output limit becomes a head/tail excerpt naming the archive handle of the full
text; the full text is kept in the memory's session archive (and persisted with it). Nothing is lost.

:func:`archive_tools` gives the model the way back: ``search_archive`` ranks every archived original (compacted
messages, bounded outputs) for a query and names their handles, ``read_archived_output`` reads one back::

    agent = FunctionAgent(tools=[*bound_tools(tools, memory), *archive_tools(memory)], llm=llm)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxbudget.archive import HANDLE_PREFIX
from ctxbudget.archive.search import render_hits
from ctxbudget.errors import ArchiveError, InvalidMessageError, InvalidPolicyError
from ctxbudget.messages._validation import short_repr
from llama_index.core.tools import BaseTool, FunctionTool, ToolMetadata, ToolOutput
from llama_index.core.tools.types import AsyncBaseTool, adapt_to_async_tool

if TYPE_CHECKING:
    from ctxbudget.session import ContextSession

    from .memory import BudgetedMemory

__all__ = ["READ_TOOL_NAME", "SEARCH_TOOL_NAME", "BoundedTool", "archive_tools", "bound_tools"]

READ_TOOL_NAME = "read_archived_output"
"""Name of the read-back tool :func:`archive_tools` returns."""
SEARCH_TOOL_NAME = "search_archive"
"""Name of the archive search tool :func:`archive_tools` returns."""


class BoundedTool(AsyncBaseTool):
    """Wraps a tool; outputs over the memory's limit are bounded and their full text archived.

    Args:
        tool: the tool to wrap (sync or async).
        memory: the memory whose policy, counter and archive are used.
    """

    def __init__(self, tool: BaseTool, memory: BudgetedMemory) -> None:
        self._tool = adapt_to_async_tool(tool)
        self._memory = memory

    @property
    def metadata(self) -> ToolMetadata:
        """The wrapped tool's metadata (same name, description and schema)."""
        return self._tool.metadata

    def _bound(self, output: ToolOutput) -> ToolOutput:
        text = output.content
        bounded = self._memory.bound_tool_output(text, source=self.metadata.get_name())
        if bounded is text:
            return output
        return ToolOutput(
            tool_name=output.tool_name,
            content=bounded,
            raw_input=output.raw_input,
            raw_output=output.raw_output,
            is_error=output.is_error,
        )

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        """Call the wrapped tool and bound its output."""
        return self._bound(self._tool.call(*args, **kwargs))

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        """Async :meth:`call`."""
        return self._bound(await self._tool.acall(*args, **kwargs))


def bound_tools(tools: Sequence[BaseTool], memory: BudgetedMemory) -> list[BaseTool]:
    """Wrap every tool in :class:`BoundedTool` for ``memory``.

    Raises:
        InvalidMessageError: ``tools`` is not a sequence of LlamaIndex tools (the item is named).
    """
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        got = f"{type(tools).__name__} {short_repr(tools)}"
        raise InvalidMessageError(f"tools: must be a sequence of LlamaIndex tools, got {got}", field="tools")
    listed = list(tools)
    for index, tool in enumerate(listed):
        if not isinstance(tool, BaseTool):
            raise InvalidMessageError(
                f"tools[{index}]: expected a LlamaIndex tool (BaseTool), got {type(tool).__name__}", field="tools"
            )
    return [BoundedTool(tool, memory) for tool in listed]


def archive_tools(memory: BudgetedMemory) -> list[FunctionTool]:
    """``read_archived_output`` and ``search_archive`` tools over ``memory``'s session archive.

    Their outputs already fit one tool output (the memory's per-output limit), so do not wrap them in
    :func:`bound_tools`. Bad arguments raise :class:`~ctxbudget.errors.InvalidPolicyError` naming the field (agents
    hand the message to the model as an error result); an unknown handle is answered with a message naming it.
    """

    def read_archived_output(handle: str, offset: int = 0, limit: int = 20_000) -> str:
        return _read(memory.session, handle, offset, limit)

    def search_archive(query: str, k: int = 5) -> str:
        return _search(memory.session, query, k)

    return [
        FunctionTool.from_defaults(read_archived_output, name=READ_TOOL_NAME, description=_READ_DESCRIPTION),
        FunctionTool.from_defaults(search_archive, name=SEARCH_TOOL_NAME, description=_SEARCH_DESCRIPTION),
    ]


_READ_DESCRIPTION = (
    "Read back the full text of a tool output or earlier message that was shortened or archived to save context. "
    "Pass the handle shown in the marker or search result (it starts with ctx://archive/); use offset and limit "
    "(characters) to page through long text."
)
_SEARCH_DESCRIPTION = (
    "Search everything that was archived to save context (earlier messages, tool outputs, logs, code) and return the "
    "best matches, each with its ctx://archive/ handle and an excerpt (a tool result names its call). Ask a question "
    "(why did the refund fail?) or use keywords, file paths, identifiers or ticket ids; then call read_archived_output "
    "with a handle for the full text."
)


def _budget(session: ContextSession) -> int:
    """Tokens one archive tool result may use: the per-output limit, less room for its footer."""
    return session.policy.tool_output_limit(session.max_tokens) - 64


def _read(session: ContextSession, handle: object, offset: int, limit: int) -> str:
    if not isinstance(handle, str) or not handle:
        raise InvalidPolicyError(f"handle: must be a non-empty str, got {short_repr(handle)}", field="handle")
    try:
        chunk = session.read_archived(handle, offset=offset, limit=limit)
    except ArchiveError:
        return f"[no archived output with handle {short_repr(handle)}; handles start with {HANDLE_PREFIX}]"
    total = len(session.archive.get(handle).readable_text)
    while chunk and session.counter.count_text(chunk) > _budget(session):
        chunk = chunk[: int(len(chunk) * 0.8)]
    end = offset + len(chunk)
    more = f"; continue with offset={end}]" if end < total else "; end]"
    return f"{chunk}\n[chars {offset:,}-{end:,} of {total:,}{more}"


def _search(session: ContextSession, query: str, k: int) -> str:
    """The hits for ``query`` as one tool output: at most the per-output limit, the query never echoed whole."""
    hits = session.search_archive(query, k)
    budget = max(1, _budget(session))
    return render_hits(hits, query, read_tool=READ_TOOL_NAME, max_tokens=budget, counter=session.counter)
