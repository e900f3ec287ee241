"""Where a LangChain chat model's context window comes from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxbudget.errors import UsageError
from ctxbudget.models import DEFAULT_REGISTRY

__all__ = ["resolve_window"]


def resolve_window(model: Any, max_tokens: int | None) -> int:
    """``max_tokens`` when given, else ``model.profile["max_input_tokens"]``, else the registry by model name.

    Raises:
        UsageError: none of the three gives a window (``field="max_tokens"``).
    """
    if max_tokens is not None:
        return max_tokens
    profile = getattr(model, "profile", None)
    limit = profile.get("max_input_tokens") if isinstance(profile, Mapping) else None
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        return limit
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    if isinstance(name, str) and DEFAULT_REGISTRY.find(name):
        return DEFAULT_REGISTRY.get(name).input_budget
    raise UsageError(
        f"max_tokens: not given, {type(model).__name__} has no profile['max_input_tokens'] and model name {name!r} "
        "is not in the ctxbudget registry; pass max_tokens=...",
        field="max_tokens",
    )
