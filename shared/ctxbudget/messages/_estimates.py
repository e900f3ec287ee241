"""Estimating counters, for providers whose tokenizer is not public and for tests.

:class:`EstimatingCounter` scales an ``o200k_base`` count by a per-family factor; :class:`CharCounter` is a
dependency-free character count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import InvalidPolicyError
from ._chat_format import FUNC_INIT, REPLY_PRIMING, TOKENS_PER_MESSAGE, TOKENS_PER_NAME, TOKENS_PER_TOOL_CALL
from ._counter_inputs import check_message, check_tools, not_text
from ._tiktoken_counter import TiktokenCounter
from .message import Message, ToolSchema

__all__ = ["CharCounter", "EstimatingCounter"]


class EstimatingCounter:
    """Counts with ``o200k_base`` and scales by ``factor``: for providers whose tokenizer is not public.

    The estimate is made exact-in-practice by :class:`Calibration` from provider-reported usage.
    """

    def __init__(self, factor: float = 1.0, *, encoding: str = "o200k_base", cache_size: int = 200_000) -> None:
        if not math.isfinite(factor) or factor <= 0:
            raise InvalidPolicyError(f"factor: must be a finite number > 0, got {factor!r}", field="factor")
        self._base = TiktokenCounter(encoding, cache_size=cache_size)
        self.factor = factor

    @property
    def name(self) -> str:
        """``estimate:<encoding>x<factor>``: says it is an estimate."""
        return f"estimate:{self._base.name.split(':', 1)[1]}x{self.factor:g}"

    @property
    def exact(self) -> bool:
        """``False``: another tokenizer's counts, scaled; calibration from reported usage corrects them."""
        return False

    @property
    def request_overhead(self) -> int:
        """Reply priming, scaled."""
        return math.ceil(REPLY_PRIMING * self.factor)

    def count_text(self, text: str) -> int:
        """Scaled tokens in ``text``."""
        return math.ceil(self._base.count_text(text) * self.factor)

    def count_message(self, message: Message) -> int:
        """Scaled tokens of one message."""
        return math.ceil(self._base.count_message(message) * self.factor)

    def bound_message(self, message: Message) -> int | None:
        """At least :meth:`count_message`: the base counter's bound, scaled (``None`` when it has none)."""
        bound = self._base.bound_message(message)
        return None if bound is None else math.ceil(bound * self.factor)

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        """Scaled tokens of the tool schemas."""
        return math.ceil(self._base.count_tools(tools) * self.factor)


class CharCounter:
    """A deterministic, dependency-free counter: ``ceil(chars / chars_per_token)``, plus chat framing.

    Useful as a test double and for quick estimates; never use it where exactness matters.
    """

    def __init__(self, chars_per_token: float = 4.0) -> None:
        if not math.isfinite(chars_per_token) or chars_per_token <= 0:
            raise InvalidPolicyError(
                f"chars_per_token: must be a finite number > 0, got {chars_per_token!r}", field="chars_per_token"
            )
        self.chars_per_token = chars_per_token

    @property
    def name(self) -> str:
        """``chars/<n>``."""
        return f"chars/{self.chars_per_token:g}"

    @property
    def exact(self) -> bool:
        """``False``: a character-based estimate."""
        return False

    @property
    def request_overhead(self) -> int:
        """Reply priming."""
        return REPLY_PRIMING

    def count_text(self, text: str) -> int:
        """``ceil(len(text) / chars_per_token)``; a ``text`` that is not a ``str`` is a :class:`UsageError`."""
        if not isinstance(text, str):
            raise not_text(text)
        return math.ceil(len(text) / self.chars_per_token)

    def count_message(self, message: Message) -> int:
        """Framing + content + tool calls; a non-:class:`~ctxbudget.Message` is an :class:`InvalidMessageError`."""
        check_message(message)
        total = TOKENS_PER_MESSAGE + self.count_text(message.text)
        if message.name:
            total += TOKENS_PER_NAME + self.count_text(message.name)
        for call in message.tool_calls:
            total += TOKENS_PER_TOOL_CALL + self.count_text(call.id + call.name + call.args_json())
        return total

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        """Tokens of each schema's name, description and JSON parameters (typed error for anything else)."""
        tools = check_tools(tools)
        return sum(self.count_text(f"{t.name}:{t.description}:{t.parameters}") + FUNC_INIT for t in tools)
