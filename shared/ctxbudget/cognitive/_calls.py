"""Calling a provider with a timeout, fail-closed: every way a call can go wrong becomes ProviderFailure.

Sync calls run in a daemon worker thread so a hanging provider cannot hold the caller (or interpreter exit) past
the timeout; Python cannot kill the thread, so it is abandoned and its late result discarded. Async calls run as
their own task: when the caller is cancelled the task is cancelled and ``CancelledError`` propagates (the caller
asked for it); when the provider's own task is cancelled or times out, that is a ProviderFailure.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..errors import CognitiveContextError, ProviderFailure
from ..messages._threads import CallTimedOut, call_in_thread

__all__ = ["call_async", "call_sync", "call_sync_async", "call_sync_in_loop"]

T = TypeVar("T")
_Outcome = tuple[bool, Any]


def _capture(fn: Callable[[], T]) -> _Outcome:
    try:
        return True, fn()
    except (Exception, asyncio.CancelledError) as exc:
        return False, exc


def _failure(provider: str, exc: BaseException) -> CognitiveContextError:
    if isinstance(exc, CognitiveContextError):
        return exc
    if isinstance(exc, asyncio.CancelledError):
        return ProviderFailure(f"provider {provider!r} was cancelled")
    return ProviderFailure(f"provider {provider!r} raised {type(exc).__name__}: {exc}")


def _timed_out(provider: str, timeout: float | None) -> ProviderFailure:
    return ProviderFailure(f"provider {provider!r} did not answer within its {timeout:g} s timeout")


def _unwrap(provider: str, outcome: _Outcome) -> Any:
    ok, value = outcome
    if not ok:
        raise _failure(provider, value) from value
    return value


def call_sync(fn: Callable[[], T], *, provider: str, timeout: float | None) -> T:
    """Run ``fn`` in a daemon thread and wait at most ``timeout`` seconds (``None``: wait as long as it takes).

    Args:
        fn: the call.
        provider: the provider's name, for messages.
        timeout: seconds to wait, or ``None``.

    Returns:
        What ``fn`` returned.

    Raises:
        ProviderFailure: ``fn`` raised (a ``CognitiveContextError`` is re-raised as is), was cancelled, or timed
            out.
    """
    try:
        return call_in_thread(fn, timeout=timeout, name=f"ctxbudget-cognitive-{provider}")
    except CallTimedOut:
        raise _timed_out(provider, timeout) from None
    except (Exception, asyncio.CancelledError) as exc:
        raise _failure(provider, exc) from exc


def call_sync_in_loop(make: Callable[[], Awaitable[T]], *, provider: str, timeout: float | None) -> T:
    """Run the coroutine ``make()`` in a fresh event loop in a daemon thread (for ``retrieve`` on async providers).

    Args:
        make: builds the awaitable.
        provider: the provider's name, for messages.
        timeout: seconds to wait, or ``None``.

    Returns:
        The awaited value.

    Raises:
        ProviderFailure: as :func:`call_sync`.
    """

    async def run() -> T:
        return await make()

    return call_sync(lambda: asyncio.run(run()), provider=provider, timeout=timeout)


async def call_async(make: Callable[[], Awaitable[T]], *, provider: str, timeout: float | None) -> T:
    """Await ``make()`` as its own task, at most ``timeout`` seconds.

    Args:
        make: builds the awaitable (called inside the guard, so a sync error there is a ProviderFailure too).
        provider: the provider's name, for messages.
        timeout: seconds to wait, or ``None``.

    Returns:
        The awaited value.

    Raises:
        ProviderFailure: the provider raised, cancelled itself, or timed out.
        asyncio.CancelledError: the caller was cancelled (the provider's task is cancelled too).
    """
    try:
        task: asyncio.Future[T] = asyncio.ensure_future(make())
    except Exception as exc:
        raise _failure(provider, exc) from exc
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise _timed_out(provider, timeout)
    if task.cancelled():
        raise ProviderFailure(f"provider {provider!r} was cancelled")
    error = task.exception()
    if error is not None:
        raise _failure(provider, error) from error
    return task.result()


async def call_sync_async(fn: Callable[[], T], *, provider: str, timeout: float | None) -> T:
    """Run the sync ``fn`` in a daemon thread without blocking the running loop (for ``aretrieve``).

    Args:
        fn: the call.
        provider: the provider's name, for messages.
        timeout: seconds to wait, or ``None``.

    Returns:
        What ``fn`` returned.

    Raises:
        ProviderFailure: as :func:`call_async`.
        asyncio.CancelledError: the caller was cancelled.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_Outcome] = loop.create_future()

    def settle(outcome: _Outcome) -> None:
        if not future.done():
            future.set_result(outcome)

    def work() -> None:
        outcome = _capture(fn)
        # RuntimeError: the loop closed while the provider hung; nobody is waiting any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=work, name=f"ctxbudget-cognitive-{provider}", daemon=True).start()
    outcome = await call_async(lambda: future, provider=provider, timeout=timeout)
    result: T = _unwrap(provider, outcome)
    return result
