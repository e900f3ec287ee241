"""CognitiveContextSession: events, rendering, and every provider failure failing closed."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from ctxbudget.cognitive import (
    BindingLimits,
    CognitiveContextSession,
    ContextRequest,
    ContextResponse,
    PackageBinding,
)
from ctxbudget.errors import InvalidBinding, InvalidPolicyError, InvalidRequest, ProviderFailure, ResponseDrift

from .helpers import SESSION_ID, AsyncStaticProvider, StaticProvider, make_binding, make_response

HANG_SECONDS = 30.0


def session(provider: Any = None, **kwargs: Any) -> CognitiveContextSession:
    return CognitiveContextSession(make_binding(), provider or StaticProvider(), **kwargs)


def test_retrieve_renders_each_document_as_the_contract_says() -> None:
    items = session().retrieve("how are context budgets planned?", session_id=SESSION_ID)
    citation = make_response().documents[0].citation
    first = items[0]
    assert first.content == (
        f"[cognitive citation={citation.citation_digest} document=guide/budgets.md heading=Budgets]\n\nBudgets."
    )
    assert first.source == "a3s-use://citation/" + citation.citation_digest.removeprefix("sha256:")
    assert (first.trust, first.type, first.source_key) == ("retrieved", "cognitive", citation.citation_digest)
    assert first.metadata["citation"] == citation.to_dict()
    assert [item.relevance for item in items] == [1.0, 0.98]


def test_relevance_never_drops_below_point_nine() -> None:
    from ctxbudget.cognitive import relevance_at

    assert [relevance_at(p) for p in (0, 1, 5, 9)] == pytest.approx([1.0, 0.98, 0.9, 0.9])


def test_the_bound_event_is_emitted_before_each_query_with_the_binding() -> None:
    log: list[Any] = []
    provider = StaticProvider(lambda request: log.append("query") or make_response(request))
    cognitive = session(provider, on_event=lambda name, payload: log.append((name, payload)))
    assert log == []  # the host emits bound_event() when it binds
    cognitive.retrieve("budgets", session_id=SESSION_ID)
    cognitive.retrieve("budgets", session_id=SESSION_ID)
    assert [entry if entry == "query" else entry[0] for entry in log] == [
        "cognitive_context_bound",
        "query",
        "cognitive_context_bound",
        "query",
    ]
    payload = log[0][1]
    assert payload["binding"] == make_binding().to_dict()
    assert payload["sessionId"] == SESSION_ID
    assert payload["requestDigest"] == provider.calls[0].request_digest
    json.dumps(payload)


def test_bound_event_carries_the_binding_and_provider_name() -> None:
    name, payload = session().bound_event()
    assert name == "cognitive_context_bound"
    assert payload == {"binding": make_binding().to_dict(), "provider": "static"}
    assert PackageBinding.from_dict(payload["binding"]) == session().binding


def test_an_event_callback_error_stops_the_turn_before_the_query() -> None:
    provider = StaticProvider()

    def broken(name: str, payload: dict[str, Any]) -> None:
        raise RuntimeError("sink down")

    with pytest.raises(RuntimeError, match="sink down"):
        session(provider, on_event=broken).retrieve("budgets", session_id=SESSION_ID)
    assert provider.calls == []


def test_with_event_callback_returns_a_rebound_copy() -> None:
    seen: list[str] = []
    original = session()
    copy = original.with_event_callback(lambda name, payload: seen.append(name))
    copy.retrieve("budgets", session_id=SESSION_ID)
    original.retrieve("budgets", session_id=SESSION_ID)
    assert seen == ["cognitive_context_bound"]
    assert copy.binding == original.binding


def test_the_query_is_trimmed_then_validated_and_an_invalid_one_never_reaches_the_provider() -> None:
    provider = StaticProvider()
    cognitive = session(provider)
    cognitive.retrieve("  budgets \n", session_id=SESSION_ID)
    assert provider.calls[0].query == "budgets"
    with pytest.raises(InvalidRequest, match="query: must not be empty"):
        cognitive.retrieve("   ", session_id=SESSION_ID)
    with pytest.raises(InvalidRequest, match="sessionId"):
        cognitive.retrieve("budgets", session_id="bad id")
    assert len(provider.calls) == 1


def test_a_forged_binding_is_rejected_at_construction() -> None:
    forged = make_binding().model_copy(update={"package_version": "9.9.9"})
    with pytest.raises(InvalidBinding, match="capabilitySnapshotDigest"):
        CognitiveContextSession(forged, StaticProvider())


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("", "provider.name: must not be empty"),
        (" padded", "must be trimmed"),
        ("tab\there", "control character U+0009"),
        ("n" * 129, "is 129 bytes, the limit is 128"),
        (None, "must be a string"),
    ],
)
def test_the_provider_name_is_a_plain_value_of_at_most_128_bytes(name: Any, fragment: str) -> None:
    with pytest.raises(ProviderFailure) as caught:
        session(StaticProvider(name=name))
    assert fragment in str(caught.value)


def test_a_provider_without_query_or_aquery_is_rejected() -> None:
    class Nameless:
        name = "nothing"

    with pytest.raises(ProviderFailure, match="neither query"):
        session(Nameless())


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True])
def test_timeout_must_be_positive_and_finite(timeout: float) -> None:
    with pytest.raises(InvalidPolicyError, match="timeout"):
        session(timeout=timeout)


def test_a_raising_provider_fails_closed_with_the_cause_attached() -> None:
    def boom(request: ContextRequest) -> Any:
        raise ConnectionError("lease expired")

    with pytest.raises(ProviderFailure, match="provider 'static' raised ConnectionError: lease expired") as caught:
        session(StaticProvider(boom)).retrieve("budgets", session_id=SESSION_ID)
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_a_providers_own_typed_error_passes_through() -> None:
    def refuse(request: ContextRequest) -> Any:
        raise ProviderFailure("not my generation")

    with pytest.raises(ProviderFailure, match=r"^not my generation$"):
        session(StaticProvider(refuse)).retrieve("budgets", session_id=SESSION_ID)


@pytest.mark.parametrize(
    "answer",
    [None, {"schema": "a3s.code.cognitive-context-response.v1"}, "{}", 42],
    ids=["none", "dict", "json-text", "int"],
)
def test_a_non_response_is_a_provider_failure(answer: Any) -> None:
    with pytest.raises(ProviderFailure, match="not a ContextResponse"):
        session(StaticProvider(lambda request: answer)).fetch("budgets", session_id=SESSION_ID)


def test_a_response_to_another_request_is_drift() -> None:
    other = make_response(ContextRequest.create(SESSION_ID, "something else", make_binding()))
    with pytest.raises(ResponseDrift, match="request mismatch"):
        session(StaticProvider(lambda request: other)).retrieve("budgets", session_id=SESSION_ID)


def test_a_response_with_other_limits_is_drift() -> None:
    def other_limits(request: ContextRequest) -> ContextResponse:
        response = make_response(
            ContextRequest.create(SESSION_ID, request.query, make_binding(BindingLimits(max_results=2)))
        )
        return response.model_copy(update={"request_digest": request.request_digest})

    with pytest.raises(ResponseDrift, match=r"limits.maxResults"):
        session(StaticProvider(other_limits)).retrieve("budgets", session_id=SESSION_ID)


def test_a_hanging_provider_times_out() -> None:
    release = threading.Event()

    def hang(request: ContextRequest) -> Any:
        release.wait(HANG_SECONDS)
        return make_response(request)

    try:
        with pytest.raises(ProviderFailure, match=r"did not answer within its 0.2 s timeout"):
            session(StaticProvider(hang), timeout=0.2).retrieve("budgets", session_id=SESSION_ID)
    finally:
        release.set()


def test_no_timeout_waits_for_the_provider() -> None:
    assert len(session(timeout=None).retrieve("budgets", session_id=SESSION_ID)) == 2


def test_a_sync_retrieve_runs_an_async_only_provider() -> None:
    provider = AsyncStaticProvider()
    items = session(provider).retrieve("budgets", session_id=SESSION_ID)
    assert len(items) == 2
    assert provider.calls[0].query == "budgets"


async def test_aretrieve_awaits_an_async_provider() -> None:
    items = await session(AsyncStaticProvider()).aretrieve("budgets", session_id=SESSION_ID)
    assert [item.relevance for item in items] == [1.0, 0.98]


async def test_aretrieve_runs_a_sync_provider_off_the_loop() -> None:
    items = await session(StaticProvider()).aretrieve("budgets", session_id=SESSION_ID)
    assert len(items) == 2


async def test_an_async_provider_raising_fails_closed() -> None:
    class Raising:
        name = "raising"

        async def aquery(self, request: ContextRequest) -> ContextResponse:
            raise TimeoutError("upstream")

    with pytest.raises(ProviderFailure, match="raised TimeoutError: upstream"):
        await session(Raising()).aretrieve("budgets", session_id=SESSION_ID)


async def test_an_async_provider_hanging_past_the_timeout_is_cancelled() -> None:
    cancelled = asyncio.Event()

    class Hanging:
        name = "hanging"

        async def aquery(self, request: ContextRequest) -> ContextResponse:
            try:
                await asyncio.sleep(HANG_SECONDS)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            raise AssertionError("unreachable")

    with pytest.raises(ProviderFailure, match=r"within its 0.2 s timeout"):
        await session(Hanging(), timeout=0.2).aretrieve("budgets", session_id=SESSION_ID)
    await asyncio.wait_for(cancelled.wait(), HANG_SECONDS)


async def test_a_sync_provider_hanging_under_aretrieve_times_out() -> None:
    release = threading.Event()
    provider = StaticProvider(lambda request: release.wait(HANG_SECONDS) and make_response(request))
    try:
        with pytest.raises(ProviderFailure, match="timeout"):
            await session(provider, timeout=0.2).aretrieve("budgets", session_id=SESSION_ID)
    finally:
        release.set()


async def test_a_provider_cancelling_itself_is_a_provider_failure() -> None:
    class SelfCancelling:
        name = "self-cancelling"

        async def aquery(self, request: ContextRequest) -> ContextResponse:
            raise asyncio.CancelledError

    with pytest.raises(ProviderFailure, match="was cancelled"):
        await session(SelfCancelling()).aretrieve("budgets", session_id=SESSION_ID)


async def test_cancelling_the_caller_cancels_the_provider_and_propagates() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    class Slow:
        name = "slow"

        async def aquery(self, request: ContextRequest) -> ContextResponse:
            started.set()
            try:
                await asyncio.sleep(HANG_SECONDS)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            raise AssertionError("unreachable")

    task = asyncio.ensure_future(session(Slow(), timeout=None).aretrieve("budgets", session_id=SESSION_ID))
    await asyncio.wait_for(started.wait(), HANG_SECONDS)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(cancelled.wait(), HANG_SECONDS)


async def test_an_async_non_response_is_a_provider_failure() -> None:
    with pytest.raises(ProviderFailure, match="returned NoneType"):
        await session(AsyncStaticProvider(lambda request: None)).aretrieve("budgets", session_id=SESSION_ID)


def test_an_aquery_that_is_not_a_coroutine_function_fails_closed() -> None:
    class NotAsync:
        name = "not-async"

        def aquery(self, request: ContextRequest) -> ContextResponse:
            return make_response(request)

    with pytest.raises(ProviderFailure, match="provider 'not-async' raised TypeError"):
        session(NotAsync()).retrieve("budgets", session_id=SESSION_ID)
