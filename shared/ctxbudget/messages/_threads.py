"""Calling something with a deadline on its own daemon thread, shared by summarizer and provider calls.

A thread per call, not a shared pool: no queueing delay eats into the deadline and one slow call cannot starve
another. Python cannot kill a thread, so a call that misses its deadline is abandoned and finishes on its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["CallTimedOut", "call_in_thread"]

T = TypeVar("T")


class CallTimedOut(Exception):
    """The call did not return within its timeout (it keeps running, abandoned)."""


def call_in_thread(fn: Callable[[], T], *, timeout: float | None, name: str) -> T:
    """Run ``fn()`` on its own daemon thread and wait at most ``timeout`` seconds (``None``: as long as it takes).

    Raises:
        CallTimedOut: ``fn`` did not return in time.
        BaseException: whatever ``fn`` raised, re-raised here.
    """
    outcome: list[tuple[bool, object]] = []
    done = threading.Event()

    def run() -> None:
        try:
            outcome.append((True, fn()))
        except BaseException as exc:  # handed back to the caller below
            outcome.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=run, name=name, daemon=True).start()
    if not done.wait(timeout):
        raise CallTimedOut
    ok, value = outcome[0]
    if not ok:
        raise value  # type: ignore[misc]  # a BaseException stored by run()
    return value  # type: ignore[return-value]  # what fn returned
