"""What the OpenAI chat format bills beside the text: message framing, names, tool calls, images and tool schemas.

The figures come from OpenAI's token-counting cookbook; every bundled counter frames messages with them.
"""

from __future__ import annotations

import json

from .message import Message

__all__ = [
    "ENUM_INIT",
    "ENUM_ITEM",
    "FUNC_END",
    "FUNC_INIT",
    "FUNC_INIT_BY_ENCODING",
    "PROP_INIT",
    "PROP_KEY",
    "REPLY_PRIMING",
    "TOKENS_PER_IMAGE",
    "TOKENS_PER_MESSAGE",
    "TOKENS_PER_NAME",
    "TOKENS_PER_TOOL_CALL",
    "block_tokens",
]

TOKENS_PER_MESSAGE = 3
"""Framing tokens per chat message (``<|start|>{role}\\n ... <|end|>``)."""
TOKENS_PER_NAME = 1
"""Extra token when a message carries a ``name``."""
REPLY_PRIMING = 3
"""Tokens every request spends priming the reply (``<|start|>assistant<|message|>``)."""
TOKENS_PER_TOOL_CALL = 3
"""Framing per assistant tool call, on top of its name and JSON arguments."""
TOKENS_PER_IMAGE = 765
"""Estimate for one image block (OpenAI's price for a 1024x1024 high-detail image); calibration corrects it."""

# OpenAI cookbook, function-definition billing: 7 framing tokens per function for o200k_base models (gpt-4o and
# later), 10 for cl100k_base models (gpt-4, gpt-3.5-turbo); the other constants are shared.
FUNC_INIT, PROP_INIT, PROP_KEY, ENUM_INIT, ENUM_ITEM, FUNC_END = 7, 3, 3, -3, 3, 12
"""Function-definition billing: per function, per properties object, per property, per enum, per enum item, and
once after all functions."""
FUNC_INIT_BY_ENCODING = {"o200k_base": 7, "cl100k_base": 10}
"""Framing tokens per function definition, by encoding (``FUNC_INIT`` for another)."""


def block_tokens(message: Message) -> int:
    """Tokens for non-text content blocks: images at OpenAI's high-detail 1024x1024 price, others by JSON."""
    if isinstance(message.content, str):
        return 0
    total = 0
    for block in message.content:
        if block.text is None:
            total += (
                TOKENS_PER_IMAGE if "image" in block.type else max(1, len(json.dumps(block.data, default=str)) // 4)
            )
    return total
