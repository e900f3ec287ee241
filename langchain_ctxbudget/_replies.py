"""The model's reply as the middleware hands it back: every call with an id, the usage calibrated, the update beside it.

What compaction changed is returned with the reply as a ``Command`` (an ``ExtendedModelResponse``), merged with one
an inner handler returned: no extra graph step, so no extra checkpoint.
"""

from __future__ import annotations

from typing import Any, cast

from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
from langchain_core.messages import AIMessage
from langgraph.types import Command  # what ExtendedModelResponse.command is (langchain depends on langgraph)

from ._threads import RUN_KEY
from ._view import ThreadView
from .convert import lacks_tool_call_ids, usage_of, with_tool_call_ids

__all__ = ["calibrate", "with_call_ids", "with_update"]


def calibrate(view: ThreadView, response: ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]) -> None:
    """Calibrate the session's tracker from the reply's ``usage_metadata``."""
    inner = response.model_response if isinstance(response, ExtendedModelResponse) else response
    messages = inner.result if isinstance(inner, ModelResponse) else [inner]
    usage = usage_of(messages[-1]) if messages and isinstance(messages[-1], AIMessage) else None
    if usage is not None:
        view.record_usage(*usage)


def with_update(
    response: ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any],
    update: dict[str, Any] | None,
    run: str | None,
) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
    """The reply, with the state update beside it as a ``Command`` (merged with one an inner handler returned)."""
    if run is not None:
        update = {**(update or {}), RUN_KEY: run}
    if not update:
        return response
    if isinstance(response, ExtendedModelResponse):
        inner, command = response.model_response, response.command
        if command is not None and isinstance(command.update, dict):
            merged = {**command.update, **update}
            if "messages" in command.update and "messages" in update:
                merged["messages"] = [*command.update["messages"], *update["messages"]]
            update = merged
    else:
        inner = response if isinstance(response, ModelResponse) else ModelResponse(result=[response])
    return ExtendedModelResponse(model_response=inner, command=Command(update=update))


def with_call_ids(
    response: ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any],
) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
    """The model's reply with an id on every tool call, so the tool node can answer each call by its id."""
    if isinstance(response, AIMessage):
        return cast("AIMessage", with_tool_call_ids(response))
    inner = response.model_response if isinstance(response, ExtendedModelResponse) else response
    if any(lacks_tool_call_ids(m) for m in inner.result):
        inner.result = [with_tool_call_ids(m) for m in inner.result]
    return response
