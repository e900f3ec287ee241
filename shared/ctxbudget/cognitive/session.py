"""One exact package generation, bound to one provider: requests, events, validation and rendering.

:class:`CognitiveContextSession` is the Python counterpart of A3S Code's ``CognitiveContextSession``: the host
injects an immutable :class:`~ctxbudget.cognitive.PackageBinding` and a provider holding the matching lease.
Every turn it builds a digest-pinned request, emits ``cognitive_context_bound``, calls the provider under a
timeout, validates the response against the request and renders the documents as context items. Any failure is
raised (fail closed); nothing ever falls back to other retrieval.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

from ..context.items import ContextItem
from ..errors import InvalidPolicyError, ProviderFailure
from ._calls import call_async, call_sync, call_sync_async, call_sync_in_loop
from .models import ContextRequest, ContextResponse, PackageBinding
from .provider import AsyncKnowledgeProvider, KnowledgeProvider
from .rendering import render_response
from .validation import validate_binding, validate_provider_name, validate_response

__all__ = ["COGNITIVE_CONTEXT_BOUND", "CognitiveContextSession", "EventCallback"]

COGNITIVE_CONTEXT_BOUND = "cognitive_context_bound"
"""The event emitted when a session is bound, and each turn before the provider is queried."""

EventCallback = Callable[[str, dict[str, Any]], None]
"""Receives ``(event_name, payload)``; the payload is JSON-able."""


class CognitiveContextSession:
    """Binds one exact cognitive-package generation to the provider that holds its lease.

    Args:
        binding: the exact generation and limits; validated here.
        provider: a :class:`~ctxbudget.cognitive.KnowledgeProvider` and/or
            :class:`~ctxbudget.cognitive.AsyncKnowledgeProvider`; its ``name`` is validated here.
        timeout: seconds a provider call may take; ``None`` means no limit. Past it the call fails with
            :class:`~ctxbudget.errors.ProviderFailure` (a sync provider's thread is abandoned, not killed).
        on_event: receives ``("cognitive_context_bound", payload)`` before every provider query. The session does
            not emit at construction: the host emits :meth:`bound_event` when it binds the session. An exception
            raised by the callback propagates and the provider is not queried.

    Raises:
        InvalidBinding: the binding breaks a rule.
        InvalidLimits: its limits are out of range.
        ProviderFailure: the provider has no ``query``/``aquery``, or its name is not plain or over 128 bytes.
        InvalidPolicyError: ``timeout`` is not a positive finite number.
    """

    def __init__(
        self,
        binding: PackageBinding,
        provider: KnowledgeProvider | AsyncKnowledgeProvider,
        *,
        timeout: float | None = 30.0,
        on_event: EventCallback | None = None,
    ) -> None:
        if not isinstance(binding, PackageBinding):
            raise InvalidPolicyError(f"binding must be a PackageBinding, got {type(binding).__name__}", field="binding")
        validate_binding(binding)
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf
        ):
            raise InvalidPolicyError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
        if not callable(getattr(provider, "query", None)) and not callable(getattr(provider, "aquery", None)):
            raise ProviderFailure(f"provider {type(provider).__name__} has neither query() nor aquery()")
        name = getattr(provider, "name", None)
        validate_provider_name(name)
        self._binding = binding
        self._provider = provider
        self._name = str(name)
        self._timeout = timeout
        self._on_event = on_event

    @property
    def binding(self) -> PackageBinding:
        """The exact binding; store it in the session snapshot."""
        return self._binding

    @property
    def provider(self) -> KnowledgeProvider | AsyncKnowledgeProvider:
        """The provider holding the binding's lease."""
        return self._provider

    @property
    def provider_name(self) -> str:
        """The validated provider name."""
        return self._name

    @property
    def timeout(self) -> float | None:
        """Seconds a provider call may take, or ``None``."""
        return self._timeout

    def with_event_callback(self, on_event: EventCallback | None) -> CognitiveContextSession:
        """Return the same binding and provider reporting events to ``on_event`` (e.g. a host's event stream).

        Args:
            on_event: the new callback.

        Returns:
            A new session; this one is unchanged.
        """
        return CognitiveContextSession(self._binding, self._provider, timeout=self._timeout, on_event=on_event)

    def bound_event(self) -> tuple[str, dict[str, Any]]:
        """Return the ``cognitive_context_bound`` event to emit when the host binds this session.

        Returns:
            ``("cognitive_context_bound", {"binding": <binding JSON object>, "provider": <name>})``.
        """
        return COGNITIVE_CONTEXT_BOUND, {"binding": self._binding.to_dict(), "provider": self._name}

    def request(self, query: str, *, session_id: str) -> ContextRequest:
        """Build the digest-pinned request for ``query`` (surrounding whitespace is trimmed first).

        Args:
            query: the user's query.
            session_id: the session id (the surfaceId rule, <= 256 bytes).

        Returns:
            The validated request.

        Raises:
            InvalidRequest: the query or session id breaks its rule.
        """
        text = query.strip() if isinstance(query, str) else query
        return ContextRequest.create(session_id, text, self._binding)

    def fetch(self, query: str, *, session_id: str) -> ContextResponse:
        """Query the provider and return its response, validated against the request.

        Args:
            query: the user's query.
            session_id: the session id.

        Returns:
            The validated response.

        Raises:
            InvalidRequest: the query or session id breaks its rule.
            ProviderFailure: the provider raised, timed out, was cancelled or returned something else.
            ResponseDrift: the response does not answer the request exactly.
        """
        request = self._prepare(query, session_id)
        provider = self._provider
        if callable(getattr(provider, "query", None)):
            sync = cast(KnowledgeProvider, provider)
            answer: object = call_sync(lambda: sync.query(request), provider=self._name, timeout=self._timeout)
        else:
            aio = cast(AsyncKnowledgeProvider, provider)
            answer = call_sync_in_loop(lambda: aio.aquery(request), provider=self._name, timeout=self._timeout)
        return self._checked(request, answer)

    async def afetch(self, query: str, *, session_id: str) -> ContextResponse:
        """Async :meth:`fetch`: awaits ``aquery`` (or runs a sync ``query`` in a worker thread).

        Args:
            query: the user's query.
            session_id: the session id.

        Returns:
            The validated response.

        Raises:
            InvalidRequest: the query or session id breaks its rule.
            ProviderFailure: the provider raised, timed out, was cancelled or returned something else.
            ResponseDrift: the response does not answer the request exactly.
            asyncio.CancelledError: the caller was cancelled.
        """
        request = self._prepare(query, session_id)
        provider = self._provider
        if callable(getattr(provider, "aquery", None)):
            aio = cast(AsyncKnowledgeProvider, provider)
            answer: object = await call_async(lambda: aio.aquery(request), provider=self._name, timeout=self._timeout)
        else:
            sync = cast(KnowledgeProvider, provider)
            answer = await call_sync_async(lambda: sync.query(request), provider=self._name, timeout=self._timeout)
        return self._checked(request, answer)

    def retrieve(self, query: str, *, session_id: str) -> list[ContextItem]:
        """Query the provider and return its cited documents as context items, best first.

        Args:
            query: the user's query.
            session_id: the session id.

        Returns:
            One :class:`~ctxbudget.context.items.ContextItem` per document (see :mod:`ctxbudget.cognitive.rendering`).

        Raises:
            InvalidRequest: the query or session id breaks its rule.
            ProviderFailure: the provider raised, timed out, was cancelled or returned something else.
            ResponseDrift: the response does not answer the request exactly.
        """
        return render_response(self.fetch(query, session_id=session_id))

    async def aretrieve(self, query: str, *, session_id: str) -> list[ContextItem]:
        """Async :meth:`retrieve`.

        Args:
            query: the user's query.
            session_id: the session id.

        Returns:
            One context item per document.

        Raises:
            InvalidRequest: the query or session id breaks its rule.
            ProviderFailure: the provider raised, timed out, was cancelled or returned something else.
            ResponseDrift: the response does not answer the request exactly.
            asyncio.CancelledError: the caller was cancelled.
        """
        return render_response(await self.afetch(query, session_id=session_id))

    def _prepare(self, query: str, session_id: str) -> ContextRequest:
        request = self.request(query, session_id=session_id)
        if self._on_event is not None:
            name, payload = self.bound_event()
            payload.update({"sessionId": request.session_id, "requestDigest": request.request_digest})
            self._on_event(name, payload)
        return request

    def _checked(self, request: ContextRequest, answer: object) -> ContextResponse:
        if not isinstance(answer, ContextResponse):
            raise ProviderFailure(f"provider {self._name!r} returned {type(answer).__name__}, not a ContextResponse")
        validate_response(answer, request)
        return answer

    def __repr__(self) -> str:
        binding = self._binding
        return (
            f"CognitiveContextSession(package={binding.package_id}@{binding.package_version}, "
            f"generation={binding.lifecycle_generation}, provider={self._name!r})"
        )
