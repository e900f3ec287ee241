"""LangChain-facing errors: ours, also inheriting LangChain's matching exception.

::

    ctxbudget.ContextOverflowError ─┐
    langchain_core.exceptions.ContextOverflowError ─┴─ LangChainContextOverflowError

Code that catches either family catches the hard stop: ``except ctxbudget.ContextOverflowError`` and LangChain's
own ``except ContextOverflowError`` (model-fallback middleware, retry logic) both see it.
"""

from __future__ import annotations

from ctxbudget.errors import ContextOverflowError
from langchain_core.exceptions import ContextOverflowError as _LangChainOverflow

__all__ = ["LangChainContextOverflowError"]


class LangChainContextOverflowError(ContextOverflowError, _LangChainOverflow):
    """The hard stop, raised before a request is sent: it would not fit the window even after compaction.

    Attributes:
        used_tokens: tokens the request would use.
        max_tokens: the window size.
        hard_stop_tokens: the limit that was crossed.
    """

    @classmethod
    def from_core(cls, error: ContextOverflowError) -> LangChainContextOverflowError:
        """Wrap the core error, keeping its message and figures."""
        return cls(
            str(error),
            used_tokens=error.used_tokens,
            max_tokens=error.max_tokens,
            hard_stop_tokens=error.hard_stop_tokens,
        )
