"""Argument checks for :class:`~ctxbudget.session.ContextSession`: typed errors that name the argument."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import InvalidMessageError, InvalidPolicyError
from .messages import ToolSchema
from .models import ModelRegistry
from .policy import CompactionPolicy
from .tokens import TokenCounter

__all__ = ["DEFAULT_WINDOW", "check_arguments", "resolve_window"]

DEFAULT_WINDOW = 128_000
"""The window used when neither ``max_tokens`` nor a known ``model`` is given."""


def check_arguments(
    *, counter: object, system_prompt: object, tools: object, policy: object, session_id: object
) -> None:
    """Reject constructor arguments of the wrong type up front, naming the argument (not later, deep inside)."""
    if policy is not None and not isinstance(policy, CompactionPolicy):
        raise InvalidPolicyError(f"policy: expected a CompactionPolicy, got {type(policy).__name__}", field="policy")
    if counter is not None and not isinstance(counter, TokenCounter):
        raise InvalidPolicyError(f"counter: expected a TokenCounter, got {type(counter).__name__}", field="counter")
    if session_id is not None and not isinstance(session_id, str):
        raise InvalidPolicyError(f"session_id: expected a str, got {type(session_id).__name__}", field="session_id")
    if system_prompt is not None and not isinstance(system_prompt, str):
        raise InvalidMessageError(
            f"system_prompt: expected a str, got {type(system_prompt).__name__}", field="system_prompt"
        )
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise InvalidMessageError(
            f"tools: expected a sequence of ToolSchema, got {type(tools).__name__}", field="tools"
        )
    for index, tool in enumerate(tools):
        if not isinstance(tool, ToolSchema):
            raise InvalidMessageError(
                f"tools[{index}]: expected a ToolSchema, got {type(tool).__name__}", field=f"tools[{index}]"
            )


def resolve_window(model: str | None, max_tokens: int | None, registry: ModelRegistry) -> int:
    """The prompt budget: ``max_tokens`` when given (validated), else the model's input budget, else the default."""
    if max_tokens is not None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
            raise InvalidPolicyError(f"max_tokens: must be an int > 0, got {max_tokens!r}", field="max_tokens")
        return max_tokens
    if model is not None:
        return registry.get(model).input_budget
    return DEFAULT_WINDOW
