"""Reported usage from the OpenAI and Anthropic SDKs, as the figures a session calibrates with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from ..errors import InvalidPolicyError
from ..messages._validation import short_repr

__all__ = ["UsageFigures", "usage_figures"]


class UsageFigures(NamedTuple):
    """What a provider reported for one request."""

    prompt_tokens: int
    """Every input token billed: with Anthropic, ``input + cache_read + cache_creation``."""
    completion_tokens: int | None
    """Output tokens, when reported."""
    cached_tokens: int
    """Input tokens read from the prompt cache (OpenAI ``cached_tokens``, Anthropic ``cache_read_input_tokens``)."""


def usage_figures(usage: object) -> UsageFigures:
    """``(prompt, completion, cached)`` from a usage object or dict, or a response that has one.

    Accepts OpenAI Chat Completions ``CompletionUsage`` (``prompt_tokens``, ``completion_tokens``,
    ``prompt_tokens_details.cached_tokens``), OpenAI Responses ``ResponseUsage`` (``input_tokens``,
    ``output_tokens``, ``input_tokens_details.cached_tokens``) and Anthropic ``Usage`` (``input_tokens``,
    ``output_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``), as SDK objects or dicts.

    Raises:
        InvalidPolicyError: nothing usable in ``usage`` (the message names what was given).
    """
    inner = _get(usage, "usage")
    if inner is not None and not isinstance(usage, int):
        usage = inner
    prompt = _count(usage, "prompt_tokens")
    if prompt is not None:
        completion = _count(usage, "completion_tokens")
        return UsageFigures(prompt, completion, _count(_get(usage, "prompt_tokens_details"), "cached_tokens") or 0)
    given = _count(usage, "input_tokens")
    if given is None:
        raise InvalidPolicyError(
            "usage: expected an SDK usage object or dict (prompt_tokens, or input_tokens), got "
            f"{type(usage).__name__} {short_repr(usage)}",
            field="usage",
        )
    read = _count(usage, "cache_read_input_tokens") or 0
    written = _count(usage, "cache_creation_input_tokens") or 0
    cached = read or _count(_get(usage, "input_tokens_details"), "cached_tokens") or 0
    return UsageFigures(given + read + written, _count(usage, "output_tokens"), cached)


def _get(value: object, name: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None) if value is not None and not isinstance(value, (str, bytes)) else None


def _count(value: object, name: str) -> int | None:
    number = _get(value, name)
    if number is None:
        return None
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        raise InvalidPolicyError(f"usage.{name}: must be an int >= 0, got {short_repr(number)}", field=name)
    return number
