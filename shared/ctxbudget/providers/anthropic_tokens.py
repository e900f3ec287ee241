"""Counting for Anthropic models: an estimate in Anthropic's request shape, plus the tool-use system prompt.

Claude's tokenizer is not public, so counts are estimates (``exact`` is ``False``): text is counted with
``o200k_base`` and scaled by the model family's factor, then :class:`~ctxbudget.Calibration` corrects the ratio from
the usage Anthropic reports. What is documented is added as documented: when a request carries tools, Anthropic
adds a tool-use system prompt of a fixed size per model and ``tool_choice`` (346 tokens for ``auto``/``none`` on
Claude 4 models, Claude Sonnet 3.7 and the October Claude Sonnet 3.5; see :func:`tool_use_system_prompt_tokens`).
Tools are counted as the JSON Anthropic receives (``name``, ``description``, ``input_schema``), tool calls as
``tool_use`` blocks, results as ``tool_result`` blocks, thinking blocks by their text, images at Anthropic's
~1,600 tokens for an image of about 1.15 megapixels. The per-message framing is not documented; it is estimated
as OpenAI's and left to calibration.

Thinking from earlier turns: Anthropic strips the thinking blocks of assistant turns before the last user message
from the context of most models (they are not billed as input); Claude Opus 4.5 and later models keep them
(:func:`preserves_thinking`). :meth:`AnthropicCounter.count_message` counts a message's thinking (it cannot know its
place in the request); :meth:`AnthropicCounter.thinking_tokens` gives that part, for a caller that knows the turns.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import UsageError
from ..messages._counter_inputs import ContentCache, check_message, check_tools, message_key, tool_calls_key
from ..messages._validation import short_repr
from ..messages.message import ContentBlock, Message, ToolSchema
from ..messages.tokens import TOKENS_PER_MESSAGE, EstimatingCounter
from .anthropic import tool_to_anthropic

__all__ = ["ANTHROPIC_TOKENS_PER_IMAGE", "AnthropicCounter", "preserves_thinking", "tool_use_system_prompt_tokens"]

ANTHROPIC_TOKENS_PER_IMAGE = 1_600
"""Anthropic's figure for an image of about 1.15 megapixels (``width * height / 750``), the largest not resized."""
_BLOCK_FRAMING = 3
"""Estimated framing of one ``tool_use`` or ``tool_result`` block (undocumented; calibration corrects it)."""

# (model name fragment, tokens for tool_choice auto/none, tokens for any/tool), most specific first: Anthropic's
# "tool use system prompt token count" table.
_TOOL_PROMPTS: tuple[tuple[str, int, int], ...] = (
    ("claude-3-5-sonnet-20240620", 294, 261),
    ("claude-3-5-haiku", 264, 340),
    ("claude-3-opus", 530, 281),
    ("claude-3-sonnet", 159, 235),
    ("claude-3-haiku", 264, 340),
)
_TOOL_PROMPT_DEFAULT = (346, 313)
"""Claude Opus/Sonnet/Haiku 4 and later, Claude Sonnet 3.7, Claude Sonnet 3.5 (October 2024)."""


_VERSION = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:[-.](\d)(?!\d))?")


def preserves_thinking(model: str | None) -> bool:
    """Whether ``model`` keeps the thinking of earlier assistant turns in its context (Claude Opus 4.5 and later).

    Earlier models (Claude Sonnet 4.5, Haiku 4.5, the Claude 4 and 3.7 models) have it stripped; an unknown name is
    taken to strip it.
    """
    match = _VERSION.search((model or "").lower().replace(".", "-"))
    if match is None:
        return False
    family, major, minor = match.group(1), int(match.group(2)), int(match.group(3) or 0)
    return (major, minor) >= (4, 6) or (family == "opus" and (major, minor) >= (4, 5))


def tool_use_system_prompt_tokens(model: str | None, tool_choice: object = "auto") -> int:
    """Tokens of the system prompt Anthropic adds to a request with tools, per its documented table.

    Args:
        model: the model name (dated, prefixed or dotted names are fine); ``None`` or an unknown name gets the
            current models' figure.
        tool_choice: ``"auto"``/``"none"`` or ``"any"``/``"tool"``, or the ``{"type": ...}`` mapping sent.

    Raises:
        UsageError: ``model`` is neither a str nor ``None``.
    """
    if model is not None and not isinstance(model, str):
        raise UsageError(f"model: must be a model name (str) or None, got {short_repr(model)}", field="model")
    choice = tool_choice.get("type") if isinstance(tool_choice, Mapping) else tool_choice
    key = (model or "").lower().replace(".", "-")
    auto, forced = next(((a, f) for name, a, f in _TOOL_PROMPTS if name in key), _TOOL_PROMPT_DEFAULT)
    return forced if choice in ("any", "tool") else auto


class AnthropicCounter(EstimatingCounter):
    """Estimates Anthropic requests: scaled ``o200k_base`` in Anthropic's shape plus the tool-use system prompt.

    Args:
        model: the model, for the tool-use system prompt's size.
        factor: Claude tokens per ``o200k_base`` token, before calibration.
        encoding: the tiktoken encoding estimated with.
        tool_choice: the ``tool_choice`` your requests send (the tool-use prompt's size depends on it).
        cache_size: how many distinct message contents to remember.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        factor: float = 1.15,
        encoding: str = "o200k_base",
        tool_choice: object = "auto",
        cache_size: int = 200_000,
    ) -> None:
        super().__init__(factor, encoding=encoding, cache_size=cache_size)
        self.model = model
        self.tool_choice = tool_choice
        self._messages = ContentCache(cache_size)

    @property
    def name(self) -> str:
        """``estimate:anthropic:<encoding>x<factor>``."""
        return f"estimate:anthropic:{self._base.name.split(':', 1)[1]}x{self.factor:g}"

    @property
    def exact(self) -> bool:
        """``False``: Claude's tokenizer is not public; calibration from reported usage corrects the estimate."""
        return False

    @property
    def tool_prompt_tokens(self) -> int:
        """The tool-use system prompt Anthropic adds when a request has tools."""
        return tool_use_system_prompt_tokens(self.model, self.tool_choice)

    def count_message(self, message: Message) -> int:
        """Scaled tokens of one message as Anthropic blocks (thinking included), cached by content."""
        check_message(message)
        key = message_key(message, tool_calls_key(message))
        cached = self._messages.get(key)
        if cached is None:
            cached = self._count(message)
            self._messages.put(key, cached)
        return cached

    def thinking_tokens(self, message: Message) -> int:
        """The part of :meth:`count_message` that is ``message``'s thinking blocks (scaled; 0 without thinking)."""
        check_message(message)
        if isinstance(message.content, str):
            return 0
        texts = [b.data.get("thinking") for b in message.content if b.type == "thinking"]
        tokens = sum(self._base.count_text(text) for text in texts if isinstance(text, str))
        return math.ceil(tokens * self.factor) if tokens else 0

    def _count(self, message: Message) -> int:
        base = self._base
        total, images = TOKENS_PER_MESSAGE, 0
        if isinstance(message.content, str):
            total += base.count_text(message.content)
        else:
            for block in message.content:
                tokens, image = self._block(block)
                total += tokens
                images += image
        for call in message.tool_calls:
            total += _BLOCK_FRAMING + base.count_text(call.id) + base.count_text(call.name)
            total += base.count_text(call.args_json())
        if message.tool_call_id:
            total += _BLOCK_FRAMING + base.count_text(message.tool_call_id)
        return math.ceil(total * self.factor) + images * ANTHROPIC_TOKENS_PER_IMAGE

    def _block(self, block: ContentBlock) -> tuple[int, int]:
        """``(tokens, images)`` of one content block."""
        if block.text is not None:
            return self._base.count_text(block.text), 0
        if "image" in block.type:
            return 0, 1
        thinking = block.data.get("thinking")
        if block.type == "thinking" and isinstance(thinking, str):
            return self._base.count_text(thinking), 0
        return max(1, len(json.dumps(block.data, ensure_ascii=False, default=str)) // 4), 0

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        """The tools as Anthropic receives them, scaled, plus the tool-use system prompt; 0 for no tools."""
        tools = check_tools(tools)
        if not tools:
            return 0
        specs: list[dict[str, Any]] = [tool_to_anthropic(tool) for tool in tools]
        text = json.dumps(specs, ensure_ascii=False, separators=(",", ":"))
        return math.ceil(self._base.count_text(text) * self.factor) + self.tool_prompt_tokens
