"""Argument checks for :class:`~ctxbudget.session.session.ContextSession`: typed errors that name the argument."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import cast, get_args

from ..compaction.policy import CompactionPolicy
from ..compaction.summarize import AsyncSummarizer, Summarizer
from ..context.items import ContextItem
from ..context.planner import PlannerConfig
from ..errors import InvalidMessageError, InvalidPolicyError, SystemPromptTooLargeError, UsageError
from ..messages._foreign import check_not_foreign
from ..messages.message import Message, ToolCall, ToolSchema
from ..messages.registry import ModelRegistry
from ..messages.tokens import EstimatingCounter, TiktokenCounter, TokenCounter, check_counter
from ..providers.counting import counter_for_model
from .events import EventType

__all__ = [
    "check_arguments",
    "check_components",
    "check_context",
    "check_messages",
    "check_subscription",
    "check_text",
    "check_tool_calls",
    "check_type",
    "check_window_fits",
    "resolve_budget",
    "resolve_counter",
    "resolve_window",
]


def check_arguments(
    *, counter: object, system_prompt: object, tools: object, policy: object, session_id: object
) -> None:
    """Reject constructor arguments of the wrong type up front, naming the argument (not later, deep inside)."""
    if policy is not None and not isinstance(policy, CompactionPolicy):
        raise InvalidPolicyError(f"policy: expected a CompactionPolicy, got {type(policy).__name__}", field="policy")
    if counter is not None:
        check_counter(counter)
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
    if set(map(type, listed)) <= {Message}:  # the common case, checked at C speed (a framework's 10k messages)
        return cast("list[Message]", listed)
    for index, message in enumerate(listed):
        if not isinstance(message, Message):
            check_not_foreign(f"messages[{index}]", message, "ctxbudget.Message")
            raise InvalidMessageError(
                f"messages[{index}]: expected ctxbudget.Message, got {type(message).__name__}",
                field=f"messages[{index}]",
            )
    return cast("list[Message]", listed)


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
    """``subscribe``'s arguments: a callable, and ``None`` or one of the :data:`~ctxbudget.session.EventType` names."""
    if not callable(listener):
        raise UsageError(f"listener: expected a callable, got {type(listener).__name__}", field="listener")
    known = get_args(EventType)
    if event_type is not None and event_type not in known:
        raise UsageError(
            f"event_type: expected None or one of {', '.join(map(repr, known))}, got {event_type!r}",
            field="event_type",
        )


def resolve_window(model: str | None, max_tokens: int | None, registry: ModelRegistry) -> int:
    """The prompt budget: ``max_tokens`` when given (never above the model's window), else the model's input budget.

    ``max_tokens`` may exceed the model's input budget (the reply then gets less than the registry's output reserve)
    but never its context window. An unregistered ``model`` is fine with ``max_tokens`` (its tokens are estimated).

    Raises:
        InvalidPolicyError: ``max_tokens`` is not an int > 0, or is above the model's context window.
        UnknownModelError: ``model`` is not registered and ``max_tokens`` is not given ("did you mean" included).
        UsageError: neither ``model`` nor ``max_tokens`` is given (``field="max_tokens"``): there is no default window.
    """
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0):
        raise InvalidPolicyError(f"max_tokens: must be an int > 0, got {max_tokens!r}", field="max_tokens")
    info = registry.find(model) if model is not None else None
    if max_tokens is None:
        if model is None:
            raise UsageError(
                "max_tokens: no window given; pass model='gpt-4o' (its window comes from the model registry) or "
                "max_tokens=N (the prompt budget in tokens). ctxbudget does not guess a window.",
                field="max_tokens",
            )
        return registry.get(model).input_budget
    if info is not None and max_tokens > info.context_window:
        raise InvalidPolicyError(
            f"max_tokens: {max_tokens:,} is over the {info.context_window:,}-token context window of {model!r} "
            f"(registered as {info.name!r}; its prompt budget is {info.input_budget:,} once the "
            f"{info.max_output_tokens:,}-token output reserve is set aside); pass max_tokens <= "
            f"{info.context_window:,}, or leave it out to use {info.input_budget:,}",
            field="max_tokens",
        )
    return max_tokens


def resolve_counter(model: str | None, registry: ModelRegistry) -> TokenCounter:
    """The default counter: the model's (exact for OpenAI families); an estimate for a model the registry lacks.

    Without a model, tokens are counted with ``o200k_base`` (exact for gpt-4o and later OpenAI models).
    """
    if model is None:
        return TiktokenCounter()
    if registry.find(model) is None:
        return EstimatingCounter()
    return counter_for_model(model, registry=registry)


def resolve_budget(
    *,
    model: str | None,
    max_tokens: int | None,
    counter: TokenCounter | None,
    system_prompt: str | None,
    tools: Sequence[ToolSchema],
    registry: ModelRegistry,
) -> tuple[int, TokenCounter]:
    """The session's window and counter, once the system prompt and tools are known to fit the window.

    See :func:`resolve_window`, :func:`resolve_counter` and :func:`check_window_fits` for the rules and errors.
    """
    window = resolve_window(model, max_tokens, registry)
    chosen = counter or resolve_counter(model, registry)
    check_window_fits(chosen, system_prompt, tools, window)
    return window, chosen


def check_window_fits(
    counter: TokenCounter, system_prompt: str | None, tools: Sequence[ToolSchema], window: int
) -> None:
    """Refuse a system prompt that, with the tool schemas and the reply priming, alone exceeds ``window``.

    Raises:
        SystemPromptTooLargeError: the figures are in the message and on the error.
    """
    system = counter.count_message(Message(role="system", content=system_prompt, id="sys")) if system_prompt else 0
    schemas = counter.count_tools(tools)
    fixed = system + schemas + counter.request_overhead
    if fixed <= window:
        return
    field = "system_prompt" if system_prompt else "tools"
    raise SystemPromptTooLargeError(
        f"{field}: the system prompt ({system:,} tokens), tool schemas ({schemas:,}) and reply priming "
        f"({counter.request_overhead:,}) come to {fixed:,} tokens, over the {window:,}-token window "
        f"(max_tokens) before any message; shorten the {field.replace('_', ' ')} or raise max_tokens "
        f"(counted with {counter.name})",
        field=field,
        prompt_tokens=fixed,
        max_tokens=window,
    )
