"""Token counting: exact for OpenAI families, estimated and calibrated for the rest, cached by content.

The OpenAI chat format (as documented in OpenAI's token-counting cookbook) bills every message
``TOKENS_PER_MESSAGE`` tokens of framing plus its role and content, one more token when it carries a ``name``, and
every request ``REPLY_PRIMING`` tokens that prime the assistant's reply. Tool schemas are billed as the cookbook's
function-definition formula describes; assistant tool calls as the call's name and JSON arguments plus a small
framing. Providers that use another tokenizer are estimated with ``o200k_base`` times a per-family factor, which
:class:`Calibration` then corrects from the usage the provider reports.

Counts are cached by content, so a session that grows by one message pays for that message only.

This module holds the counter protocol, :class:`Calibration` and :func:`count_request`, and is where the bundled
counters are imported from: the chat format's figures live in :mod:`ctxbudget.messages._chat_format`, the exact
counter in :mod:`ctxbudget.messages._tiktoken_counter`, the estimates in :mod:`ctxbudget.messages._estimates`.
Which counter a model gets is a providers-layer choice: :func:`ctxbudget.providers.counting.counter_for_model`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, runtime_checkable

from ..errors import InvalidMessageError, InvalidPolicyError
from ._chat_format import REPLY_PRIMING, TOKENS_PER_IMAGE, TOKENS_PER_MESSAGE, TOKENS_PER_NAME, TOKENS_PER_TOOL_CALL
from ._estimates import CharCounter, EstimatingCounter
from ._tiktoken_counter import TiktokenCounter
from ._validation import short_repr
from .message import Message, ToolSchema

__all__ = [
    "REPLY_PRIMING",
    "TOKENS_PER_IMAGE",
    "TOKENS_PER_MESSAGE",
    "TOKENS_PER_NAME",
    "TOKENS_PER_TOOL_CALL",
    "BoundedCounter",
    "Calibration",
    "CharCounter",
    "EstimatingCounter",
    "TiktokenCounter",
    "TokenCounter",
    "check_counter",
    "count_message_by_lines",
    "count_request",
    "count_text_by_lines",
]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens the way a provider bills them. Implementations must never raise on user text.

    The bundled counters also say whether their counts are exact (``exact``: ``True`` only for
    :class:`TiktokenCounter`); it is not part of the protocol, so a counter without it still qualifies and is
    taken as an estimate.
    """

    @property
    def name(self) -> str:
        """A short description, e.g. ``tiktoken:o200k_base``."""
        ...

    @property
    def request_overhead(self) -> int:
        """Tokens every request costs beyond its messages (reply priming)."""
        ...

    def count_text(self, text: str) -> int:
        """Tokens in a bare string."""
        ...

    def count_message(self, message: Message) -> int:
        """Tokens one message costs inside a request, framing and tool calls included."""
        ...

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        """Tokens the tool schemas exposed to the model cost."""
        ...


@runtime_checkable
class BoundedCounter(TokenCounter, Protocol):
    """A counter that can also bound a message's count from above without counting it.

    A caller that only needs to know whether a request fits (nothing dropped) can add bounds instead of counts and
    count only when the bounds do not settle it: the answer is the same as with counts. :class:`TiktokenCounter` and
    :class:`EstimatingCounter` implement it.
    """

    def bound_message(self, message: Message) -> int | None:
        """At least :meth:`count_message` of ``message``, computed without tokenizing; ``None`` when no cheap bound.

        Raises:
            InvalidMessageError: ``message`` is not a :class:`~ctxbudget.Message`.
        """
        ...


_COUNTERS = (TiktokenCounter, EstimatingCounter, CharCounter, TokenCounter)
"""The bundled counters first: ``isinstance`` stops at the first match, before the protocol's slower check."""


def check_counter(counter: object) -> TokenCounter:
    """``counter`` when it is a :class:`TokenCounter`, else an :class:`InvalidPolicyError` naming ``counter``."""
    if isinstance(counter, _COUNTERS):
        return counter
    raise InvalidPolicyError(
        "counter: expected a TokenCounter (name, request_overhead, count_text, count_message, count_tools), got "
        f"{type(counter).__name__} {short_repr(counter)}",
        field="counter",
    )


class Calibration:
    """Learns the ratio between provider-reported prompt tokens and our own count, per model.

    ``observe(counted, reported)`` folds one sample into an exponential moving average; ``apply(count)`` scales a
    fresh count by it. The ratio is clamped to [0.25, 4] so one bogus report cannot wreck accounting.
    """

    def __init__(self, *, ratio: float = 1.0, samples: int = 0, smoothing: float = 0.3) -> None:
        if not 0 < smoothing <= 1:
            raise InvalidPolicyError(f"smoothing: must be in (0, 1], got {smoothing!r}", field="smoothing")
        self.ratio = ratio
        self.samples = samples
        self.smoothing = smoothing

    def observe(self, counted: int, reported: int) -> None:
        """Fold in one (own count, provider-reported) pair; ignores non-positive figures."""
        if counted <= 0 or reported <= 0:
            return
        sample = min(4.0, max(0.25, reported / counted))
        self.ratio = sample if self.samples == 0 else self.ratio + self.smoothing * (sample - self.ratio)
        self.samples += 1

    def apply(self, count: int) -> int:
        """Scale ``count`` by the learned ratio (rounded up)."""
        return math.ceil(count * self.ratio) if self.samples else count


def count_text_by_lines(counter: TokenCounter, text: str) -> int:
    """``counter.count_text(text)``; from the remembered counts of its lines when the counter adds them up exactly.

    For a text rebuilt with most lines unchanged (a rolling summary): :meth:`TiktokenCounter.count_lines`.
    """
    return counter.count_lines(text) if isinstance(counter, TiktokenCounter) else counter.count_text(text)


def count_message_by_lines(counter: TokenCounter, message: Message) -> int:
    """``counter.count_message(message)``, its text content counted by :func:`count_text_by_lines` first.

    The counter then finds the content's count remembered: a summary message written again costs its new lines.
    """
    if isinstance(counter, TiktokenCounter) and isinstance(message.content, str):
        counter.count_lines(message.content)
    return counter.count_message(message)


def count_request(counter: TokenCounter, messages: Iterable[Message], tools: Sequence[ToolSchema] = ()) -> int:
    """Tokens a whole request costs: every message, the tool schemas and the reply priming.

    Raises:
        InvalidPolicyError: ``counter`` is not a :class:`TokenCounter`.
        InvalidMessageError: ``messages`` is not an iterable of messages (a provider's message dict is named with
            the converter that reads it), or ``tools`` not a sequence of schemas.
    """
    check_counter(counter)
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidMessageError(
            f"messages: must be an iterable of ctxbudget.Message, got {type(messages).__name__}", field="messages"
        )
    listed = messages if isinstance(messages, Sequence) else list(messages)
    try:
        total = sum(counter.count_message(m) for m in listed)
    except (InvalidMessageError, AttributeError, TypeError):
        _refuse_provider_dicts(listed)
        raise
    return total + counter.count_tools(tools) + counter.request_overhead


def _refuse_provider_dicts(messages: Sequence[object]) -> None:
    """A provider's message dict where a :class:`Message` belongs: name the converter that reads it."""
    for index, message in enumerate(messages):
        if isinstance(message, Mapping):
            raise InvalidMessageError(
                f"messages[{index}]: a {type(message).__name__} (a provider's message?), not a ctxbudget.Message; "
                "convert it first: ctxbudget.messages_from_openai(messages) for Chat Completions, "
                "messages_from_responses(items) for Responses, messages_from_anthropic(messages, system=...) for "
                "Anthropic",
                field="messages",
            ) from None
