"""Constructor argument checks for the adapter: a caller's mistake raises a ctxbudget error naming the argument.

Every check raises :class:`~ctxbudget.errors.InvalidPolicyError` (a :class:`~ctxbudget.errors.UsageError`) with
``field`` set, up front, instead of a raw ``TypeError``/``AttributeError`` deep inside a later call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, get_args

from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.compaction.summarize import AsyncSummarizer, Summarizer
from ctxbudget.errors import InvalidPolicyError
from ctxbudget.messages.tokens import TokenCounter
from ctxbudget.session.events import EventType
from langchain_core.language_models import BaseChatModel

__all__ = [
    "check_bool",
    "check_common",
    "check_event_types",
    "check_instance",
    "check_names",
    "check_optional_str",
    "check_positive_int",
    "check_tools",
    "check_window",
]

_EVENT_TYPES = frozenset(get_args(EventType))


def _fail(field: str, expected: str, value: object) -> InvalidPolicyError:
    shown = repr(value) if isinstance(value, (int, float, str, bool)) or value is None else type(value).__name__
    return InvalidPolicyError(f"{field}: expected {expected}, got {shown}", field=field)


def check_common(*, counter: object = None, policy: object = None, summarizer: object = None) -> None:
    """``counter`` is a TokenCounter, ``policy`` a CompactionPolicy, ``summarizer`` a chat model or summarizer."""
    if counter is not None and not isinstance(counter, TokenCounter):
        raise _fail("counter", "a TokenCounter", counter)
    if policy is not None and not isinstance(policy, CompactionPolicy):
        raise _fail("policy", "a CompactionPolicy", policy)
    if summarizer is not None and not isinstance(summarizer, (BaseChatModel, Summarizer, AsyncSummarizer)):
        raise _fail("summarizer", "a BaseChatModel, a Summarizer, an AsyncSummarizer or None", summarizer)


def check_window(field: str, value: object) -> None:
    """``value`` is ``None`` or an int > 0."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise _fail(field, "an int > 0 or None", value)


def check_positive_int(field: str, value: object) -> None:
    """``value`` is an int > 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise _fail(field, "an int > 0", value)


def check_optional_str(field: str, value: object) -> None:
    """``value`` is ``None`` or a str."""
    if value is not None and not isinstance(value, str):
        raise _fail(field, "a str or None", value)


def check_bool(field: str, value: object) -> None:
    """``value`` is a bool."""
    if not isinstance(value, bool):
        raise _fail(field, "a bool", value)


def check_event_types(value: object, field: str = "forward_events") -> frozenset[Any]:
    """A frozenset of known ctxbudget event types (any iterable of them is accepted)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise _fail(field, "a set of event types", value)
    types = frozenset(value)
    unknown = sorted(str(t) for t in types - _EVENT_TYPES)
    if unknown:
        raise InvalidPolicyError(
            f"{field}: unknown event type(s) {unknown}; known: {sorted(_EVENT_TYPES)}", field=field
        )
    return types


def check_instance(field: str, value: object, kind: type[Any], *, optional: bool = False) -> None:
    """``value`` is an instance of ``kind`` (or ``None`` when ``optional``)."""
    if optional and value is None:
        return
    if not isinstance(value, kind):
        raise _fail(field, f"a {kind.__name__}" + (" or None" if optional else ""), value)


def check_tools(value: object, convert: Any, field: str = "tools") -> Any:
    """Convert a sequence of tools with ``convert``; a tool LangChain cannot convert is named by its index."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise _fail(field, "a sequence of tools (BaseTool, functions, pydantic models or OpenAI dicts)", value)
    tools = list(value)
    for index, tool in enumerate(tools):
        try:
            convert([tool])
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise InvalidPolicyError(
                f"{field}[{index}]: not a tool LangChain can convert ({type(tool).__name__}): {exc}",
                field=f"{field}[{index}]",
            ) from None
    return convert(tools)


def check_names(field: str, value: object) -> frozenset[str]:
    """A frozenset of non-empty names from a sequence of str (a bare str is refused: a list of names is meant)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise _fail(field, "a sequence of tool names (str)", value)
    names = list(value)
    for index, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise _fail(f"{field}[{index}]", "a non-empty str", name)
    return frozenset(names)
