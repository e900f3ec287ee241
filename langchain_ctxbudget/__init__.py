"""LangChain integration for ctxbudget.

Middleware for ``create_agent``, an LCEL runnable, a budgeted chat history, a document compressor, a chat-model
summarizer, and a strict fake model for tests.

The public API is listed once, here, in ``__all__``; ``tests/langchain/test_public_api.py`` pins it.
"""

from __future__ import annotations

from .compressor import BudgetDocumentCompressor, CognitiveRetriever, CompressionReport, DroppedDocument
from .convert import MessageConverter, from_langchain, to_langchain, tool_schemas, usage_of
from .errors import LangChainContextOverflowError
from .events import EVENT_PREFIX, EventForwarder, event_name
from .history import ArchiveHistory, BudgetedChatMessageHistory
from .middleware import (
    ARCHIVE_KEY,
    META_KEY,
    READ_TOOL_NAME,
    SUMMARY_KEY,
    ContextBudgetMiddleware,
    ContextBudgetState,
    archived_messages,
)
from .runnable import ContextBudgetRunnable, fit_messages
from .summarizer import NOSTREAM_TAG, LangChainSummarizer
from .testing import StrictFakeChatModel, StrictProviderError, ToolLoop

__all__ = [
    "ARCHIVE_KEY",
    "EVENT_PREFIX",
    "META_KEY",
    "NOSTREAM_TAG",
    "READ_TOOL_NAME",
    "SUMMARY_KEY",
    "ArchiveHistory",
    "BudgetDocumentCompressor",
    "BudgetedChatMessageHistory",
    "CognitiveRetriever",
    "CompressionReport",
    "ContextBudgetMiddleware",
    "ContextBudgetRunnable",
    "ContextBudgetState",
    "DroppedDocument",
    "EventForwarder",
    "LangChainContextOverflowError",
    "LangChainSummarizer",
    "MessageConverter",
    "StrictFakeChatModel",
    "StrictProviderError",
    "ToolLoop",
    "archived_messages",
    "event_name",
    "fit_messages",
    "from_langchain",
    "to_langchain",
    "tool_schemas",
    "usage_of",
]
