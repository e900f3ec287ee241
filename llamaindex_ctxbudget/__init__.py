"""LlamaIndex integration for ctxbudget: budgeted memory, node postprocessing, summarizer, events, test doubles.

Imports only ``llama_index.core`` (install it with ``pip install -e ".[llamaindex]"`` from the root of a ctxbudget
clone, or ``pip install "ctxbudget[llamaindex]"`` once ctxbudget is published on PyPI; without it, importing this
package raises ``ModuleNotFoundError`` with those lines). The public API is listed once, here, in ``__all__``;
``tests/llamaindex/test_api.py`` pins it.
"""

from __future__ import annotations

try:  # fail here, with the install line, instead of deep inside a submodule with a bare module name
    import llama_index.core  # noqa: F401
except ImportError as exc:
    _kind = ModuleNotFoundError if isinstance(exc, ModuleNotFoundError) else ImportError
    raise _kind(
        f"llamaindex_ctxbudget needs LlamaIndex (llama-index-core): {exc}; install it from the root of your "
        "ctxbudget clone with:\n"
        'pip install -e ".[llamaindex]"\n'
        '(once ctxbudget is published on PyPI: pip install "ctxbudget[llamaindex]")',
        name=exc.name,
    ) from exc

from .cognitive import BINDING_METADATA_KEY, CognitiveBindingPostprocessor, CognitiveRetriever
from .convert import ChatMessageConverter, from_chat_message, to_chat_message, tool_calls_of, tool_schemas
from .errors import LlamaIndexContextOverflowError
from .instrumentation import (
    CompactionFailedEvent,
    ContextCompactedEvent,
    ContextUpdateEvent,
    CtxBudgetEvent,
    NodesBudgetedEvent,
    ToolOutputBoundedEvent,
    forward_session_events,
)
from .llm import BudgetedLLM
from .memory import BudgetedMemory
from .persistence import SNAPSHOT_SUFFIX, persist_simple_chat_store
from .postprocessor import BudgetNodePostprocessor, BudgetReport, DroppedNode
from .summarizer import LlamaIndexSummarizer
from .testing import FakeReply, FakeRequest, FakeToolCall, StrictFakeLLM
from .tools import READ_TOOL_NAME, SEARCH_TOOL_NAME, BoundedTool, archive_tools, bound_tools

__all__ = [
    "BINDING_METADATA_KEY",
    "READ_TOOL_NAME",
    "SEARCH_TOOL_NAME",
    "SNAPSHOT_SUFFIX",
    "BoundedTool",
    "BudgetNodePostprocessor",
    "BudgetReport",
    "BudgetedLLM",
    "BudgetedMemory",
    "ChatMessageConverter",
    "CognitiveBindingPostprocessor",
    "CognitiveRetriever",
    "CompactionFailedEvent",
    "ContextCompactedEvent",
    "ContextUpdateEvent",
    "CtxBudgetEvent",
    "DroppedNode",
    "FakeReply",
    "FakeRequest",
    "FakeToolCall",
    "LlamaIndexContextOverflowError",
    "LlamaIndexSummarizer",
    "NodesBudgetedEvent",
    "StrictFakeLLM",
    "ToolOutputBoundedEvent",
    "archive_tools",
    "bound_tools",
    "forward_session_events",
    "from_chat_message",
    "persist_simple_chat_store",
    "to_chat_message",
    "tool_calls_of",
    "tool_schemas",
]
