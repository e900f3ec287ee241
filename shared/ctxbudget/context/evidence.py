"""Bounded, prompt-safe excerpts of long text: head + tail + a marker naming what was left out and where it is."""

from __future__ import annotations

from ..errors import InvalidPolicyError, UsageError
from ..messages._validation import short_repr
from ..messages.tokens import TiktokenCounter, TokenCounter, check_counter

__all__ = ["excerpt"]


def _fit_prefix(text: str, budget: int, counter: TokenCounter) -> str:
    """Longest prefix of ``text`` (cut on a char boundary) whose count is <= budget, by binary search."""
    if budget <= 0:
        return ""
    if counter.count_text(text) <= budget:
        return text
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if counter.count_text(text[:mid]) <= budget:
            low = mid
        else:
            high = mid - 1
    return text[:low]


def _fit_suffix(text: str, budget: int, counter: TokenCounter) -> str:
    """Longest suffix of ``text`` (cut on a char boundary) whose count is <= budget, by binary search."""
    if budget <= 0:
        return ""
    if counter.count_text(text) <= budget:
        return text
    low, high = 0, len(text)  # the answer's start index is in [low, high]; high (empty) always fits
    while low < high:
        mid = (low + high) // 2
        if counter.count_text(text[mid:]) <= budget:
            high = mid
        else:
            low = mid + 1
    return text[low:]


def _window(text: str, budget: int, counter: TokenCounter, *, from_end: bool) -> str:
    """The shortest prefix (suffix) of ``text``, of ``budget * 8`` chars doubled as needed, counted over ``budget``.

    ``text`` itself when none is. The edge searches work on it, so a huge text is never copied whole (and each
    search costs the window's length, not the text's).
    """
    size = max(256, budget * 8)
    while size < len(text):
        part = text[-size:] if from_end else text[:size]
        if counter.count_text(part) > budget:
            return part
        size *= 2
    return text


def excerpt(
    text: str,
    *,
    max_tokens: int,
    counter: TokenCounter,
    handle: str | None = None,
    head_fraction: float = 0.6,
) -> str:
    """Return ``text`` if it fits ``max_tokens``, else its head and tail around a marker.

    The marker says how many characters were left out and, when ``handle`` is given, where the full text is
    archived. The result never exceeds ``max_tokens`` by our counter (the marker is paid for first).

    Raises:
        InvalidPolicyError: ``max_tokens`` not an int >= 1, ``head_fraction`` not a number in [0, 1], ``handle``
            not a string, ``counter`` not a :class:`~ctxbudget.messages.tokens.TokenCounter`, or ``text`` does not fit
            and
            ``max_tokens`` is too small to hold even the omission marker (the text is never cut silently).
        UsageError: ``text`` is not a ``str``.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidPolicyError(f"max_tokens: must be an int >= 1, got {short_repr(max_tokens)}", field="max_tokens")
    real = isinstance(head_fraction, (int, float)) and not isinstance(head_fraction, bool)
    if not real or not 0.0 <= head_fraction <= 1.0:
        raise InvalidPolicyError(
            f"head_fraction: must be a number in [0, 1], got {short_repr(head_fraction)}", field="head_fraction"
        )
    if not isinstance(text, str):
        raise UsageError(f"text: must be a str, got {type(text).__name__}", field="text")
    if handle is not None and not isinstance(handle, str):
        raise InvalidPolicyError(f"handle: must be a str or None, got {type(handle).__name__}", field="handle")
    check_counter(counter)
    total = counter.count_text(text)  # cached: an output counted when it arrived is not counted again
    if total <= max_tokens:
        return text
    where = f"; full text: {handle}" if handle else ""
    marker = f"\n[... {{omitted}} of {len(text):,} chars omitted{where} ...]\n"
    marker_tokens = counter.count_text(marker.format(omitted=f"{len(text):,}"))
    room = max_tokens - marker_tokens
    if room < 0:
        raise InvalidPolicyError(
            f"max_tokens: {max_tokens:,} cannot hold the omission marker ({marker_tokens:,} tokens) for a text of "
            f"{total:,} tokens; use max_tokens >= {marker_tokens:,}",
            field="max_tokens",
        )
    if isinstance(counter, TiktokenCounter):  # exact and fast: cut the tokens of the two ends
        head, tail = counter.fit_text_edges(text, int(room * head_fraction), room)
        return _joined(head, tail, text, marker, max_tokens=max_tokens, counter=counter)
    head_budget = int(room * head_fraction)
    head = _fit_prefix(_window(text, head_budget, counter, from_end=False), head_budget, counter)
    tail_budget = room - counter.count_text(head)
    window = _window(text, tail_budget, counter, from_end=True)
    rest = len(text) - len(head)  # the tail never overlaps the head
    tail = _fit_suffix(window if len(window) <= rest else window[len(window) - rest :], tail_budget, counter)
    return _joined(head, tail, text, marker, max_tokens=max_tokens, counter=counter)


def _joined(head: str, tail: str, text: str, marker: str, *, max_tokens: int, counter: TokenCounter) -> str:
    """Head, marker, tail; joined text can tokenize differently at the seams, so trim until the whole fits.

    The exact counter counts the joined text from its edges' counts (:meth:`TiktokenCounter.count_joined`).
    """
    middle = marker.format(omitted=f"{len(text) - len(head) - len(tail):,}")
    while _count(counter, head, middle, tail) > max_tokens and (head or tail):
        head, tail = (head[:-1], tail) if len(head) >= len(tail) else (head, tail[1:])
        middle = marker.format(omitted=f"{len(text) - len(head) - len(tail):,}")
    return head + middle + tail


def _count(counter: TokenCounter, head: str, middle: str, tail: str) -> int:
    if isinstance(counter, TiktokenCounter):
        return counter.count_joined(head, middle, tail)
    return counter.count_text(head + middle + tail)
