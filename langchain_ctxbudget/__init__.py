"""LangChain integration for ctxbudget.

Middleware for ``create_agent``, an LCEL runnable, a budgeted chat history, a document compressor, a chat-model
summarizer, and a strict fake model for tests.

Needs the ``langchain`` extra (``langchain-core`` and ``langchain``); without it, importing this package raises
``ModuleNotFoundError`` with the line that installs it: ``pip install -e ".[langchain]"`` from the root of a
ctxbudget clone (``pip install "ctxbudget[langchain]"`` once ctxbudget is published on PyPI).

The public API is listed once, here, in ``__all__``; ``tests/langchain/test_package.py`` pins it.
"""

from __future__ import annotations

try:  # fail here, with the install line, instead of deep inside a submodule with a bare module name
    import langchain_core  # noqa: F401
    from langchain.agents import middleware as _middleware  # noqa: F401  # create_agent middleware: langchain>=1
except ImportError as exc:
    _kind = ModuleNotFoundError if isinstance(exc, ModuleNotFoundError) else ImportError
    raise _kind(
        f"langchain_ctxbudget needs LangChain (langchain-core and langchain >= 1.0): {exc}; install it from the "
        "root of your ctxbudget clone with:\n"
        'pip install -e ".[langchain]"\n'
        '(once ctxbudget is published on PyPI: pip install "ctxbudget[langchain]")',
        name=exc.name,
    ) from exc

from .compressor import BudgetDocumentCompressor, CognitiveRetriever, CompressionReport, DroppedDocument
from .convert import MessageConverter, from_langchain, to_langchain, tool_schemas, usage_of
from .errors import LangChainContextOverflowError, NoHumanMessageError
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
    "NoHumanMessageError",
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
