"""LlamaIndex-facing errors: ours, also a ``ValueError`` as LlamaIndex's memories raise.

::

    ctxbudget.ContextOverflowError ─┐
    ValueError ─────────────────────┴─ LlamaIndexContextOverflowError

``ChatMemoryBuffer.get()`` raises ``ValueError`` when the request cannot fit ("Initial token count exceeds token
limit"); code written against it (``except ValueError``) catches ours too, and ``except ctxbudget.ContextOverflowError``
keeps working. Every hard stop raised from :class:`~llamaindex_ctxbudget.BudgetedMemory` and
:class:`~llamaindex_ctxbudget.BudgetedLLM` is this class.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ctxbudget.errors import ContextOverflowError

__all__ = ["LlamaIndexContextOverflowError", "overflow_as_value_error"]


class LlamaIndexContextOverflowError(ContextOverflowError, ValueError):
    """The hard stop, raised before a request is sent: it would not fit the window even after compaction.

    Attributes:
        used_tokens: tokens the request would use.
        max_tokens: the window size.
        hard_stop_tokens: the limit that was crossed.
    """

    @classmethod
    def from_core(cls, error: ContextOverflowError) -> LlamaIndexContextOverflowError:
        """Wrap the core error, keeping its message and figures."""
        return cls(
            str(error),
            used_tokens=error.used_tokens,
            max_tokens=error.max_tokens,
            hard_stop_tokens=error.hard_stop_tokens,
        )


@contextmanager
def overflow_as_value_error() -> Iterator[None]:
    """Re-raise a core :class:`~ctxbudget.errors.ContextOverflowError` as :class:`LlamaIndexContextOverflowError`."""
    try:
        yield
    except LlamaIndexContextOverflowError:
        raise
    except ContextOverflowError as error:
        raise LlamaIndexContextOverflowError.from_core(error) from error
