"""Tools whose outputs are bounded before they reach an agent's scratchpad.

LlamaIndex agents keep the current run's tool calls and results in a scratchpad and hand them to the memory only
when the run ends, so a memory cannot bound a huge result the agent is about to send back to the LLM in the same
run. Wrapping the tools closes that gap::

    agent = FunctionAgent(tools=bound_tools(tools, memory), llm=llm)

Each output over the memory's per-output limit becomes a head/tail excerpt naming the archive handle of the full
text; the full text is kept in the memory's session archive (and persisted with it). Nothing is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from llama_index.core.tools import BaseTool, ToolMetadata, ToolOutput
from llama_index.core.tools.types import AsyncBaseTool, adapt_to_async_tool

if TYPE_CHECKING:
    from .memory import BudgetedMemory

__all__ = ["BoundedTool", "bound_tools"]


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
    """Wrap every tool in :class:`BoundedTool` for ``memory``."""
    return [BoundedTool(tool, memory) for tool in tools]
