"""The tool calls of a LlamaIndex ``ChatMessage``, in every shape agents and LLM integrations produce.

``ToolCallBlock`` blocks, and ``additional_kwargs["tool_calls"]`` holding OpenAI dicts (``{"id", "function": {"name",
"arguments"}}``), OpenAI SDK objects with the same attributes, ``{"id", "name", "input"|"args"}`` dicts, or LlamaIndex
``ToolSelection`` objects (``tool_id``, ``tool_name``, ``tool_kwargs``). Their arguments are parsed (text that is not
JSON is kept whole, so it is still counted). A call without an id gets ``call_<index>_<tool name>``
(:func:`tool_calls_of`), and :func:`with_tool_call_ids` hands back a copy carrying those ids, so the call sent and
its result always name the same call. Re-exported by :mod:`llamaindex_ctxbudget.convert`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxbudget.errors import InvalidMessageError
from ctxbudget.messages import ToolCall
from ctxbudget.messages._validation import JsonValueError, NotJsonError, parse_json
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms.llm import ToolSelection

__all__ = ["check_chat", "lacks_tool_call_ids", "tool_calls_of", "with_tool_call_ids"]


def _attr(item: Any, key: str) -> Any:
    if isinstance(item, Mapping):
        return item.get(key)
    return getattr(item, key, None)


def _parse_args(raw: Any, field: str) -> dict[str, Any]:
    """A call's arguments as a dict; text that is not JSON is kept whole (it is still counted).

    JSON that no message can hold (nested past 100 levels, an integer past 4,300 digits) is an
    :class:`InvalidMessageError` naming ``field``.
    """
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            parsed = parse_json(raw, field)
        except NotJsonError:
            return {"_raw_arguments": raw}  # kept whole, so it is still counted; the original keeps the string
        except JsonValueError as exc:
            raise InvalidMessageError(str(exc), field=field) from None
        return parsed if isinstance(parsed, dict) else {"_arguments": parsed}
    return {"_arguments": raw}


def _kwargs_call(item: Any, index: int) -> ToolCall | None:
    function = _attr(item, "function")
    if function is not None:
        name, raw = _attr(function, "name"), _attr(function, "arguments")
    else:
        name = _attr(item, "name") or _attr(item, "tool_name")
        raw = next(
            (v for k in ("input", "args", "arguments", "tool_kwargs") if (v := _attr(item, k)) is not None), None
        )
    if not name:
        return None
    call_id = _raw_id(item) or _call_id(index, name)
    return ToolCall(id=call_id, name=str(name), args=_parse_args(raw, f"tool_calls[{index}].arguments"))


def _call_id(index: int, name: object) -> str:
    """The id a tool call without one gets (its position among the message's blocks or raw calls, and its name)."""
    return f"call_{index}_{name}"


def _raw_id(item: Any) -> str | None:
    """A raw call's id: ``id`` (OpenAI dicts, SDK objects), ``tool_call_id``, or ``tool_id`` (``ToolSelection``).

    Only a non-empty string is an id (what providers take): a call whose id is anything else is sent with the id
    :func:`tool_calls_of` gives it, as a call without one is.
    """
    for key in ("id", "tool_call_id", "tool_id"):
        value = _attr(item, key)
        if isinstance(value, str) and value:
            return value
    return None


def _unnamed_kwargs_call(item: Any) -> bool:
    """A raw call without an id (``_kwargs_call`` names it by position)."""
    return not _raw_id(item)


def lacks_tool_call_ids(chat: ChatMessage) -> bool:
    """Whether ``chat`` holds a tool call (``ToolCallBlock`` or raw ``tool_calls`` entry) without an id."""
    if any(isinstance(b, ToolCallBlock) and not b.tool_call_id for b in chat.blocks):
        return True
    raw_calls = chat.additional_kwargs.get("tool_calls")
    return isinstance(raw_calls, (list, tuple)) and any(
        _unnamed_kwargs_call(item) and _kwargs_call(item, index) is not None for index, item in enumerate(raw_calls)
    )


def _with_kwargs_id(item: Any, index: int) -> Any:
    call = _kwargs_call(item, index)
    if call is None or not _unnamed_kwargs_call(item):
        return item
    if isinstance(item, Mapping):
        return {**item, "id": call.id}
    if isinstance(item, ToolSelection):
        return item.model_copy(update={"tool_id": call.id})
    if callable(getattr(item, "model_copy", None)):  # an SDK object (pydantic)
        return item.model_copy(update={"id": call.id})
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.args_json()}}


def with_tool_call_ids(chat: ChatMessage) -> ChatMessage:
    """``chat`` itself, or (for tool calls without an id) a copy whose calls carry the ids :func:`tool_calls_of` gives.

    ``chat`` is never modified.
    """
    if not lacks_tool_call_ids(chat):
        return chat
    blocks = [
        block.model_copy(update={"tool_call_id": _call_id(index, block.tool_name)})
        if isinstance(block, ToolCallBlock) and not block.tool_call_id
        else block
        for index, block in enumerate(chat.blocks)
    ]
    kwargs = dict(chat.additional_kwargs)
    raw_calls = kwargs.get("tool_calls")
    if isinstance(raw_calls, (list, tuple)):
        kwargs["tool_calls"] = [_with_kwargs_id(item, index) for index, item in enumerate(raw_calls)]
    return chat.model_copy(update={"blocks": blocks, "additional_kwargs": kwargs})


def tool_calls_of(chat: ChatMessage) -> tuple[ToolCall, ...]:
    """The tool calls an assistant ``ChatMessage`` requests, from its blocks and ``additional_kwargs``.

    Calls that appear in both places (same id) are listed once.

    Raises:
        InvalidMessageError: ``chat`` is not a ``ChatMessage``, or a call's arguments are JSON no message can hold.
    """
    check_chat(chat)
    calls: dict[str, ToolCall] = {}
    for index, block in enumerate(chat.blocks):
        if isinstance(block, ToolCallBlock):
            call_id = block.tool_call_id or _call_id(index, block.tool_name)
            args = _parse_args(block.tool_kwargs, f"blocks[{index}].tool_kwargs")
            calls.setdefault(call_id, ToolCall(id=call_id, name=block.tool_name, args=args))
    raw_calls = chat.additional_kwargs.get("tool_calls")
    if isinstance(raw_calls, (list, tuple)):
        for index, item in enumerate(raw_calls):
            call = _kwargs_call(item, index)
            if call is not None:
                calls.setdefault(call.id, call)
    return tuple(calls.values())


def check_chat(chat: object) -> None:
    """Raise :class:`InvalidMessageError` unless ``chat`` is a LlamaIndex ``ChatMessage``."""
    if not isinstance(chat, ChatMessage):
        problem = f"expected a LlamaIndex ChatMessage, got {type(chat).__name__}"
        raise InvalidMessageError(f"message: {problem}", field="message")
