"""Conversions between ctxbudget messages and what the OpenAI and Anthropic clients send, both ways.

* :mod:`~ctxbudget.providers.openai_chat`: Chat Completions ``messages`` and function tools.
* :mod:`~ctxbudget.providers.openai_responses`: Responses ``input`` items and function tools.
* :mod:`~ctxbudget.providers.anthropic`: Anthropic Messages (``system`` apart, content blocks, tool results folded,
  optional prompt-cache breakpoints) and tools.
* :mod:`~ctxbudget.providers.anthropic_tokens`: :class:`AnthropicCounter`, the tool-use system prompt table.
* :mod:`~ctxbudget.providers.counting`: :func:`counter_for_model`, the counter a model gets.
* :mod:`~ctxbudget.providers.usage`: :func:`usage_figures` reads either SDK's usage object.
* :mod:`~ctxbudget.providers.fake_servers` (a test double, imported on its own): loopback servers that answer
  like each API, for offline tests with the real SDK clients.

Reading then writing the same format gives back exactly what was read: what a :class:`~ctxbudget.Message` has no
field for is kept in ``metadata["provider"][<format>]``. Writing another format converts what it can (text, tool
calls and results, images) and drops only what that provider cannot take (another provider's reasoning). Neither
SDK is imported: their objects are read through ``to_dict()``.
"""

from __future__ import annotations

from ._common import PROVIDER_META
from .anthropic import (
    ANTHROPIC,
    CacheControl,
    messages_from_anthropic,
    messages_to_anthropic,
    to_anthropic_request,
    tool_from_anthropic,
    tool_to_anthropic,
)
from .anthropic_tokens import ANTHROPIC_TOKENS_PER_IMAGE, AnthropicCounter, tool_use_system_prompt_tokens
from .counting import counter_for_model
from .openai_chat import (
    OPENAI_CHAT,
    message_from_openai,
    message_to_openai,
    messages_from_openai,
    messages_to_openai,
    to_openai_request,
    tool_from_openai,
    tool_to_openai,
)
from .openai_responses import (
    OPENAI_RESPONSES,
    is_responses_item,
    messages_from_responses,
    messages_to_responses,
    to_responses_request,
    tool_from_responses,
    tool_to_responses,
)
from .usage import UsageFigures, usage_figures

__all__ = [
    "ANTHROPIC",
    "ANTHROPIC_TOKENS_PER_IMAGE",
    "OPENAI_CHAT",
    "OPENAI_RESPONSES",
    "PROVIDER_META",
    "AnthropicCounter",
    "CacheControl",
    "UsageFigures",
    "counter_for_model",
    "is_responses_item",
    "message_from_openai",
    "message_to_openai",
    "messages_from_anthropic",
    "messages_from_openai",
    "messages_from_responses",
    "messages_to_anthropic",
    "messages_to_openai",
    "messages_to_responses",
    "to_anthropic_request",
    "to_openai_request",
    "to_responses_request",
    "tool_from_anthropic",
    "tool_from_openai",
    "tool_from_responses",
    "tool_to_anthropic",
    "tool_to_openai",
    "tool_to_responses",
    "tool_use_system_prompt_tokens",
    "usage_figures",
]
