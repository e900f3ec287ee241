"""The adapter's public surface, its imports, the converters and the shipped strict fake model."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from ctxbudget.compaction import ARCHIVE_META
from langchain_core.exceptions import ContextOverflowError, ModelInvalidRequestError
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

import langchain_ctxbudget
from langchain_ctxbudget import MessageConverter, StrictFakeChatModel, StrictProviderError, from_langchain, usage_of

from .conftest import lookup

PACKAGE = Path(langchain_ctxbudget.__file__).parent

EXPECTED = {
    "ARCHIVE_KEY", "EVENT_PREFIX", "META_KEY", "NOSTREAM_TAG", "READ_TOOL_NAME", "SUMMARY_KEY",
    "ArchiveHistory", "BudgetDocumentCompressor", "BudgetedChatMessageHistory", "CognitiveRetriever",
    "CompressionReport",
    "ContextBudgetMiddleware", "ContextBudgetRunnable", "ContextBudgetState", "DroppedDocument", "EventForwarder",
    "LangChainContextOverflowError", "LangChainSummarizer", "MessageConverter", "NoHumanMessageError",
    "StrictFakeChatModel",
    "StrictProviderError", "ToolLoop", "archived_messages", "event_name", "fit_messages", "from_langchain",
    "to_langchain", "tool_schemas", "usage_of",
}  # fmt: skip


def test_public_api_is_pinned() -> None:
    assert set(langchain_ctxbudget.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(langchain_ctxbudget, name) is not None


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


# Beyond langchain_core: the middleware API lives in langchain.agents; the demo driver builds a whole agent.
EXTRA_IMPORTS = {
    "__init__.py": ("langchain.agents",),  # probes the extra, to fail with the install line
    "middleware.py": ("langchain.agents",),
    # langgraph.types.Command: the type of langchain's ExtendedModelResponse.command, which carries the state update
    "_replies.py": ("langchain.agents", "langgraph.types"),
    "demo.py": ("langchain.agents", "langgraph.checkpoint.memory"),
}


def test_adapter_imports_only_langchain_core_and_langchain_agents() -> None:
    allowed_roots = {"ctxbudget", "langchain_core", "pydantic", "__future__"} | set(sys.stdlib_module_names)
    for path in sorted(PACKAGE.glob("*.py")):
        for module in _imports(path):
            root = module.split(".")[0]
            if module.startswith(EXTRA_IMPORTS.get(path.name, ())):
                continue
            assert root in allowed_roots, f"{path.name} imports {module}"


def test_each_module_declares_all() -> None:
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text())
        names = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if hasattr(t, "id")}
        assert "__all__" in names, path.name


def test_converter_round_trip_preserves_ids_and_objects() -> None:
    converter = MessageConverter()
    ai = AIMessage(content="", tool_calls=[{"id": "c1", "name": "lookup", "args": {"key": "k"}}], id="a1")
    tool = ToolMessage(content="42", tool_call_id="c1", id="t1", name="lookup")
    human = HumanMessage(content=[{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "x"}}])
    converted = converter.to_messages([SystemMessage(content="s"), human, ai, tool])
    assert [m.role for m in converted] == ["system", "user", "assistant", "tool"]
    assert human.id  # an id was assigned in place, for RemoveMessage
    assert converted[2].tool_calls[0].name == "lookup"
    assert converted[3].tool_call_id == "c1"
    assert converter.to_message(ai) is converted[2]  # cached
    assert converter.to_langchain(converted[2]) is ai  # unchanged: the very object
    bounded = converted[3].with_content("4…", **{ARCHIVE_META: "ctx://archive/t1.bounded"})
    back = converter.to_langchain(bounded)
    assert isinstance(back, ToolMessage)
    assert back.id == "t1"
    assert back.response_metadata["ctxbudget"]["handle"] == "ctx://archive/t1.bounded"
    assert from_langchain(back).metadata[ARCHIVE_META] == "ctx://archive/t1.bounded"
    assert converter.to_langchain(converted[1]).content[1]["image_url"] == {"url": "x"}


def test_converter_cost_grows_with_new_messages_only() -> None:
    converter = MessageConverter()
    history = [HumanMessage(content=f"m{i}", id=f"m{i}") for i in range(500)]
    converter.to_messages(history)
    before = converter.conversions
    converter.to_messages([*history, HumanMessage(content="new", id="new")])
    assert converter.conversions == before + 1


def test_usage_of_reads_usage_metadata() -> None:
    reply = AIMessage(content="x", usage_metadata={"input_tokens": 10, "output_tokens": 2, "total_tokens": 12})
    assert usage_of(reply) == (10, 2)
    assert usage_of(AIMessage(content="x")) is None


def test_strict_model_rejects_orphans_and_overflow_and_reports_usage() -> None:
    model = StrictFakeChatModel(max_input_tokens=300, responses=["a", "b", "c"])
    bound = model.bind_tools([lookup])
    orphan = [HumanMessage(content="hi"), ToolMessage(content="x", tool_call_id="nope")]
    with pytest.raises(StrictProviderError, match="answers no call") as info:
        bound.invoke(orphan)
    assert isinstance(info.value, ModelInvalidRequestError)
    unanswered = [
        HumanMessage(content="hi"),
        AIMessage(content="", tool_calls=[{"id": "c", "name": "lookup", "args": {}}]),
    ]
    with pytest.raises(StrictProviderError):
        bound.invoke([*unanswered, HumanMessage(content="next")])
    with pytest.raises(ContextOverflowError, match="300"):
        bound.invoke([HumanMessage(content="word " * 400)])
    reply = bound.invoke([HumanMessage(content="hello")])
    assert reply.usage_metadata["input_tokens"] == model.requests[0].tokens
    assert model.requests[0].tools == ("lookup",)
    assert model.profile == {"max_input_tokens": 300}


def test_the_converter_cache_is_bounded_by_size_not_only_by_count() -> None:
    from langchain_core.messages import ToolMessage

    from langchain_ctxbudget.convert import MessageConverter

    converter = MessageConverter(max_chars=1_000_000)
    for n in range(50):
        converter.to_message(ToolMessage(content="x" * 100_000, tool_call_id=f"c{n}", id=f"t{n}"))
    assert len(converter) <= 10  # 50 x 100k chars would be 5M chars: the oldest were forgotten
    assert converter.to_message(ToolMessage(content="x" * 100_000, tool_call_id="c49", id="t49")).id == "t49"
