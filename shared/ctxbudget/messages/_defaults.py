"""Process-wide defaults shared by modules that take an optional counter."""

from __future__ import annotations

import threading

from .tokens import TiktokenCounter, TokenCounter, check_counter

__all__ = ["default_counter"]

_counter: TiktokenCounter | None = None
_lock = threading.Lock()


def default_counter(counter: TokenCounter | None = None) -> TokenCounter:
    """Return ``counter``, or one shared ``TiktokenCounter("o200k_base")`` whose content cache stays warm.

    Raises:
        InvalidPolicyError: ``counter`` is neither ``None`` nor a :class:`TokenCounter` (``field="counter"``).
    """
    global _counter  # noqa: PLW0603 - one shared default keeps its content cache warm across calls
    if counter is not None:
        return check_counter(counter)
    with _lock:
        if _counter is None:
            _counter = TiktokenCounter()
        return _counter
