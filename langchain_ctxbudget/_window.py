"""Where a LangChain chat model's context window comes from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxbudget.errors import InvalidPolicyError, UsageError
from ctxbudget.messages.registry import DEFAULT_REGISTRY, ModelInfo

__all__ = ["resolve_window"]

_NAME_ATTRIBUTES = ("model_name", "model", "model_id")
"""Where chat models keep their name: ``ChatOpenAI.model_name``, ``ChatAnthropic.model``, ``ChatBedrock.model_id``."""


def resolve_window(model: Any, max_tokens: int | None) -> int:
    """``max_tokens`` when given, else ``model.profile["max_input_tokens"]``, else the registry by model name.

    A given ``max_tokens`` is checked against the window the model is known to have (its profile, else the
    registry); provider-prefixed names (``openai:gpt-4o``, Bedrock ids) are resolved as
    :mod:`ctxbudget.messages.registry` describes.

    Raises:
        InvalidPolicyError: ``max_tokens`` is above the model's known window (``field="max_tokens"``).
        UsageError: none of the three gives a window (``field="max_tokens"``); names the nearest registered models.
    """
    limit = _profile_limit(model)
    name = _model_name(model)
    info = DEFAULT_REGISTRY.find(name) if name is not None else None
    if max_tokens is not None:
        _check_fits(max_tokens, model, limit, info)
        return max_tokens
    if limit is not None:
        return limit
    if info is not None:
        return info.input_budget
    suggestions = DEFAULT_REGISTRY.suggest(name) if name is not None else []
    hint = f" (did you mean {' or '.join(map(repr, suggestions))}?)" if suggestions else ""
    raise UsageError(
        f"max_tokens: not given, {type(model).__name__} has no profile['max_input_tokens'] and model name {name!r} "
        f"is not in the ctxbudget registry{hint}; pass max_tokens=N, or register the model: "
        "ctxbudget.DEFAULT_REGISTRY.register(ModelInfo(...))",
        field="max_tokens",
    )


def _profile_limit(model: Any) -> int | None:
    profile = getattr(model, "profile", None)
    limit = profile.get("max_input_tokens") if isinstance(profile, Mapping) else None
    return limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None


def _model_name(model: Any) -> str | None:
    for attribute in _NAME_ATTRIBUTES:
        name = getattr(model, attribute, None)
        if isinstance(name, str) and name.strip():
            return name
    return None


def _check_fits(max_tokens: int, model: Any, limit: int | None, info: ModelInfo | None) -> None:
    if limit is not None and max_tokens > limit:
        source = f"{type(model).__name__}.profile['max_input_tokens']"
        window = limit
    elif limit is None and info is not None and max_tokens > info.context_window:
        source = f"the context window of {info.name!r} (ctxbudget registry)"
        window = info.context_window
    else:
        return
    raise InvalidPolicyError(
        f"max_tokens: {max_tokens:,} is over {source}, {window:,} tokens; pass max_tokens <= {window:,}, "
        "or leave it out to use the model's window",
        field="max_tokens",
    )
