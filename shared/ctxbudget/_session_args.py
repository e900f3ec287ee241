"""Argument checks for :class:`~ctxbudget.session.ContextSession`: typed errors that name the argument."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import get_args

from ._foreign import check_not_foreign
from .errors import InvalidMessageError, InvalidPolicyError, UsageError
from .events import EventType
from .items import ContextItem
from .messages import Message, ToolCall, ToolSchema
from .models import ModelRegistry
from .planner import PlannerConfig
from .policy import CompactionPolicy
from .summarize import AsyncSummarizer, Summarizer
from .tokens import TokenCounter

__all__ = [
    "DEFAULT_WINDOW",
    "check_arguments",
    "check_components",
    "check_context",
    "check_messages",
    "check_subscription",
    "check_text",
    "check_tool_calls",
    "check_type",
    "resolve_window",
]

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
    if session_id is not None:
        check_text("session_id", session_id, InvalidPolicyError)
    if system_prompt is not None:
        check_text("system_prompt", system_prompt, InvalidMessageError)
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise InvalidMessageError(
            f"tools: expected a sequence of ToolSchema, got {type(tools).__name__}", field="tools"
        )
    for index, tool in enumerate(tools):
        if not isinstance(tool, ToolSchema):
            raise InvalidMessageError(
                f"tools[{index}]: expected a ToolSchema, got {type(tool).__name__}", field=f"tools[{index}]"
            )


def check_components(*, summarizer: object, registry: object, compact_instructions: object, providers: object) -> None:
    """Reject the constructor's pluggable parts of the wrong type, naming the argument."""
    if summarizer is not None and not isinstance(summarizer, (Summarizer, AsyncSummarizer)):
        raise InvalidPolicyError(
            f"summarizer: expected a Summarizer or AsyncSummarizer, got {type(summarizer).__name__}", field="summarizer"
        )
    check_type("registry", registry, ModelRegistry, InvalidPolicyError)
    if compact_instructions is not None:
        check_text("compact_instructions", compact_instructions, InvalidMessageError)
    if _as_list(providers) is None:
        raise InvalidPolicyError(
            f"providers: expected a sequence of providers, got {type(providers).__name__}", field="providers"
        )


def check_type(name: str, value: object, expected: type | tuple[type, ...], error: type[UsageError]) -> None:
    """Raise ``error`` naming ``name`` unless ``value`` is an instance of ``expected`` (a bool is never an int)."""
    wanted = expected if isinstance(expected, tuple) else (expected,)
    if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
        names = " or ".join(t.__name__ for t in wanted)
        raise error(f"{name}: expected {names}, got {type(value).__name__}", field=name)


def check_text(name: str, value: object, error: type[UsageError]) -> None:
    r"""Raise ``error`` naming ``name`` unless ``value`` is a str that is valid Unicode.

    A lone surrogate (``"\ud800"``) cannot be encoded as UTF-8, so it could never be sent or persisted in a snapshot.
    """
    if not isinstance(value, str):
        raise error(f"{name}: expected a str, got {type(value).__name__}", field=name)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise error(
            f"{name}: contains an unpaired surrogate {value[exc.start]!r} at index {exc.start}, which is not valid "
            "Unicode text",
            field=name,
        ) from None


def _as_list(value: object) -> list[object] | None:
    """The items of an iterable; ``None`` for a string, mapping, single model or anything not iterable.

    A pydantic model is iterable (over its fields), so a single ``Message`` or ``ToolCall`` is refused explicitly.
    """
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping, Message, ToolCall)):
        return list(value)
    return None


def check_messages(messages: object) -> list[Message]:
    """``messages`` as a list of :class:`Message`; else an error naming the argument, or the index of the culprit."""
    check_not_foreign("messages", messages, "a sequence of ctxbudget.Message")
    listed = _as_list(messages)
    if listed is None:
        raise InvalidMessageError(
            f"messages: expected a sequence of ctxbudget.Message, got {type(messages).__name__}", field="messages"
        )
    checked: list[Message] = []
    for index, message in enumerate(listed):
        if not isinstance(message, Message):
            check_not_foreign(f"messages[{index}]", message, "ctxbudget.Message")
            raise InvalidMessageError(
                f"messages[{index}]: expected ctxbudget.Message, got {type(message).__name__}",
                field=f"messages[{index}]",
            )
        checked.append(message)
    return checked


def check_tool_calls(tool_calls: object) -> tuple[object, ...]:
    """``tool_calls`` as a tuple (each item is validated by :class:`Message`); else an error naming the argument."""
    listed = _as_list(tool_calls)
    if listed is None:
        hint = " (wrap a single call in a list)" if isinstance(tool_calls, ToolCall) else ""
        raise InvalidMessageError(
            f"tool_calls: expected a sequence of ToolCall, got {type(tool_calls).__name__}{hint}", field="tool_calls"
        )
    return tuple(listed)


def check_context(items: object, config: object) -> list[ContextItem]:
    """``set_context``'s arguments: a sequence of :class:`ContextItem` and ``None`` or a :class:`PlannerConfig`."""
    listed = _as_list(items)
    if listed is None:
        raise InvalidPolicyError(
            f"items: expected a sequence of ContextItem, got {type(items).__name__}", field="items"
        )
    checked: list[ContextItem] = []
    for index, item in enumerate(listed):
        if not isinstance(item, ContextItem):
            raise InvalidPolicyError(
                f"items[{index}]: expected a ContextItem, got {type(item).__name__}", field=f"items[{index}]"
            )
        checked.append(item)
    if config is not None:
        check_type("config", config, PlannerConfig, InvalidPolicyError)
    return checked


def check_subscription(listener: object, event_type: object) -> None:
    """``subscribe``'s arguments: a callable, and ``None`` or one of the :data:`~ctxbudget.events.EventType` names."""
    if not callable(listener):
        raise UsageError(f"listener: expected a callable, got {type(listener).__name__}", field="listener")
    known = get_args(EventType)
    if event_type is not None and event_type not in known:
        raise UsageError(
            f"event_type: expected None or one of {', '.join(map(repr, known))}, got {event_type!r}",
            field="event_type",
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
