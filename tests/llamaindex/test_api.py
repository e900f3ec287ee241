"""The public surface is pinned, and the adapter imports only ``llama_index.core`` from LlamaIndex."""

from __future__ import annotations

import ast
from pathlib import Path

import llamaindex_ctxbudget

PACKAGE = Path(llamaindex_ctxbudget.__file__).parent


def test_public_names_are_pinned() -> None:
    assert sorted(llamaindex_ctxbudget.__all__) == sorted(
        [
            "BINDING_METADATA_KEY",
            "READ_TOOL_NAME",
            "SEARCH_TOOL_NAME",
            "SNAPSHOT_SUFFIX",
            "BoundedTool",
            "BudgetNodePostprocessor",
            "BudgetedLLM",
            "BudgetReport",
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
    )
    for name in llamaindex_ctxbudget.__all__:
        assert getattr(llamaindex_ctxbudget, name) is not None


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def test_imports_only_llama_index_core() -> None:
    modules = set().union(*(_imports(path) for path in PACKAGE.glob("*.py")))
    llama = {m for m in modules if m.split(".")[0].startswith("llama")}
    assert llama
    assert all(m == "llama_index.core" or m.startswith("llama_index.core.") for m in llama), sorted(llama)
    assert not {m for m in modules if m.split(".")[0] in {"langchain", "langchain_core", "openai", "anthropic"}}
