"""The provider seam: what a knowledge provider holding an exact-generation lease must offer.

Two tiny protocols rather than one: a provider implements ``query`` (sync), ``aquery`` (async), or both.
:class:`~ctxbudget.cognitive.CognitiveContextSession` accepts either and bridges: a sync-only provider is run in a
worker thread under ``aretrieve``, an async-only provider in its own event loop (in a worker thread) under
``retrieve``. Providers may return a :class:`~ctxbudget.cognitive.ContextResponse` only; anything else fails
closed as :class:`~ctxbudget.errors.ProviderFailure`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .models import ContextRequest, ContextResponse

__all__ = ["AsyncKnowledgeProvider", "KnowledgeProvider"]


@runtime_checkable
class KnowledgeProvider(Protocol):
    """A synchronous provider of cited knowledge from one exact package generation."""

    @property
    def name(self) -> str:
        """A plain name (no control characters, trimmed, <= 128 bytes) used in events and errors."""
        ...

    def query(self, request: ContextRequest) -> ContextResponse:
        """Answer ``request`` with 1..maxResults cited documents of the request's binding, or raise."""
        ...


@runtime_checkable
class AsyncKnowledgeProvider(Protocol):
    """An asynchronous provider of cited knowledge from one exact package generation."""

    @property
    def name(self) -> str:
        """A plain name (no control characters, trimmed, <= 128 bytes) used in events and errors."""
        ...

    async def aquery(self, request: ContextRequest) -> ContextResponse:
        """Answer ``request`` with 1..maxResults cited documents of the request's binding, or raise."""
        ...
