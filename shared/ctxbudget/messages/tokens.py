"""Token counting: exact for OpenAI families, estimated and calibrated for the rest, cached by content.

The OpenAI chat format (as documented in OpenAI's token-counting cookbook) bills every message
``TOKENS_PER_MESSAGE`` tokens of framing plus its role and content, one more token when it carries a ``name``, and
every request ``REPLY_PRIMING`` tokens that prime the assistant's reply. Tool schemas are billed as the cookbook's
function-definition formula describes; assistant tool calls as the call's name and JSON arguments plus a small
framing. Providers that use another tokenizer are estimated with ``o200k_base`` times a per-family factor, which
:class:`Calibration` then corrects from the usage the provider reports.

Counts are cached by content, so a session that grows by one message pays for that message only.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import tiktoken

from ..errors import InvalidMessageError, InvalidPolicyError, UsageError
from ._token_chunks import CHUNK_CHARS, count_tokens, head_tokens, tail_tokens, text_digest
from ._validation import short_repr
from .encodings import get_encoding
from .message import Message, ToolSchema
from .registry import DEFAULT_REGISTRY, ModelRegistry

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
    "count_request",
    "counter_for_model",
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
_FUNC_INIT, _PROP_INIT, _PROP_KEY, _ENUM_INIT, _ENUM_ITEM, _FUNC_END = 7, 3, 3, -3, 3, 12
_FUNC_INIT_BY_ENCODING = {"o200k_base": 7, "cl100k_base": 10}


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


def _bytes(text: str) -> int:
    """UTF-8 bytes of ``text``: no byte-level BPE encoding gives it more tokens, as every token is one byte or more.

    A lone surrogate counts the 3 bytes of the replacement character tiktoken encodes in its place.
    """
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class _ContentCache:
    """A bounded, thread-safe cache of counts keyed by content; drops the oldest half when full."""

    def __init__(self, max_entries: int) -> None:
        self._data: dict[object, int] = {}
        self._max = max_entries
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: object) -> int | None:
        value = self._data.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: object, value: int) -> None:
        if len(self._data) >= self._max:  # rare: evict under the lock; a plain dict store is atomic under the GIL
            with self._lock:
                if len(self._data) >= self._max:
                    for old in list(self._data)[: self._max // 2]:
                        self._data.pop(old, None)
        self._data[key] = value


_DIGEST_OVER = 2048
"""Texts longer than this are cached under a digest, so the cache never holds (and pins in memory) big outputs."""


_CHUNKED_OVER = 2 * CHUNK_CHARS
"""Texts longer than this are counted and cut in parts (:mod:`ctxbudget.messages._token_chunks`), never encoded whole: a
whole encoding holds a Python int per token, about nine times the text's size."""


def _text_key(text: str) -> object:
    if len(text) <= _DIGEST_OVER:
        return text
    return (len(text), text_digest(text))


def _message_key(
    message: Message, calls: tuple[tuple[str, str, str], ...], text_key: Callable[[str], object] = _text_key
) -> tuple[object, ...]:
    """The cache key of ``message``, whose tool calls are ``calls`` (:func:`_calls`)."""
    content: object = text_key(message.content) if isinstance(message.content, str) else message.content
    if not isinstance(message.content, str):  # blocks carry dicts, which do not hash: key on their JSON
        content = tuple((b.type, b.text, json.dumps(b.data, sort_keys=True, default=str)) for b in message.content)
    return (message.role, message.name, content, message.tool_call_id, calls, message.state)


def _calls(message: Message) -> tuple[tuple[str, str, str], ...]:
    """``(id, name, arguments JSON)`` of each tool call of ``message``."""
    return tuple((call.id, call.name, call.args_json()) for call in message.tool_calls) if message.tool_calls else ()


def _block_tokens(message: Message) -> int:
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


def _not_text(text: object) -> UsageError:
    return UsageError(f"text: must be a str, got {type(text).__name__} {short_repr(text)}", field="text")


def _check_message(message: object) -> None:
    if not isinstance(message, Message):
        raise InvalidMessageError(
            f"message: expected ctxbudget.Message, got {type(message).__name__} {short_repr(message)}", field="message"
        )


def _check_tools(tools: object) -> Sequence[ToolSchema]:
    """``tools`` as a sequence of :class:`ToolSchema` (a set or generator is listed), else a typed error."""
    if isinstance(tools, (list, tuple)):
        listed: Sequence[Any] = tools
    elif isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        raise InvalidMessageError(
            f"tools: must be a sequence of ToolSchema, got {type(tools).__name__} {short_repr(tools)}", field="tools"
        )
    else:
        listed = list(tools)
    for index, tool in enumerate(listed):
        if not isinstance(tool, ToolSchema):
            raise InvalidMessageError(
                f"tools[{index}]: expected ctxbudget.ToolSchema, got {type(tool).__name__}", field="tools"
            )
    return listed


class TiktokenCounter:
    """Exact OpenAI counting with a bundled (offline) tiktoken encoding.

    Args:
        encoding: ``o200k_base`` (gpt-4o, gpt-4.1, gpt-5, o-series) or ``cl100k_base`` (gpt-4, gpt-3.5).
        cache_size: how many distinct message contents to remember.
    """

    def __init__(self, encoding: str = "o200k_base", *, cache_size: int = 200_000) -> None:
        self._encoding: tiktoken.Encoding = get_encoding(encoding)
        self._messages = _ContentCache(cache_size)
        self._texts = _ContentCache(cache_size)
        self._roles: dict[str, int] = {}
        self._last: tuple[str, list[int]] | None = None
        self._last_key: tuple[str, object] | None = None

    @property
    def name(self) -> str:
        """``tiktoken:<encoding>``."""
        return f"tiktoken:{self._encoding.name}"

    @property
    def exact(self) -> bool:
        """``True``: these are the encoding's own counts (exact for the OpenAI models that use it)."""
        return True

    @property
    def request_overhead(self) -> int:
        """Reply priming, per request."""
        return REPLY_PRIMING

    @property
    def cache_stats(self) -> tuple[int, int]:
        """``(hits, misses)`` of the per-message cache."""
        return self._messages.hits, self._messages.misses

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; special-token strings are ordinary text here, never an error."""
        return self._encode(text)

    def _encode(self, text: str) -> list[int]:
        # The last long text encoded is remembered (by identity): a tool output counted on arrival and then
        # excerpted because it is too long is encoded once, not twice. A huge one is never encoded whole here.
        last = self._last
        if last is not None and last[0] is text:
            return last[1]
        tokens = self._encoding.encode_ordinary(text)
        if 4096 < len(text) <= _CHUNKED_OVER:
            self._last = (text, tokens)
        return tokens

    def _count(self, text: str) -> int:
        """Tokens in ``text``, uncached; a huge text is counted a part at a time (memory: one part's tokens)."""
        if len(text) > _CHUNKED_OVER:
            return count_tokens(self._encoding, text)
        return len(self._encode(text))

    def _key(self, text: str) -> object:
        """:func:`_text_key`, remembered for the last long text (by identity): a huge output is hashed once."""
        last = self._last_key
        if last is not None and last[0] is text:
            return last[1]
        key = _text_key(text)
        if len(text) > _DIGEST_OVER:
            self._last_key = (text, key)
        return key

    def count_text(self, text: str) -> int:
        """Tokens in ``text`` (cached for strings over 64 characters).

        Raises:
            UsageError: ``text`` is not a ``str``.
        """
        if not isinstance(text, str):
            raise _not_text(text)
        if len(text) <= 64:
            return len(self._encoding.encode_ordinary(text))
        key = self._key(text)
        cached = self._texts.get(key)
        if cached is None:
            cached = self._count(text)  # a long text is remembered: counting it as a message is then free
            self._texts.put(key, cached)
        return cached

    def fit_text_edges(self, text: str, head_budget: int, budget: int) -> tuple[str, str]:
        """:meth:`fit_edges` of ``text`` itself: a huge text is never encoded whole, only its two ends.

        The same edges as ``fit_edges(encode(text), head_budget, budget)``; its memory is a few parts' tokens.
        """
        if len(text) <= _CHUNKED_OVER:
            return self.fit_edges(self._encode(text), head_budget, budget)
        total = self.count_text(text)
        head_budget = max(0, min(head_budget, budget, total))
        head, used = self._edge(head_tokens(self._encoding, text, head_budget), head_budget, from_end=False)
        tail_budget = min(budget - used, total - head_budget)
        if tail_budget <= 0:
            return head, ""
        return head, self._edge(tail_tokens(self._encoding, text, tail_budget), tail_budget, from_end=True)[0]

    def fit_edges(self, tokens: list[int], head_budget: int, budget: int) -> tuple[str, str]:
        """A head of the text ``tokens`` encode within ``head_budget`` tokens, and a tail within the rest of ``budget``.

        ``tokens`` is :meth:`encode` of the text. Each edge is the longest its budget allows, cut on a character
        boundary, and they never overlap. A decode per edge instead of a binary search of encodes; an edge that
        re-encodes to more tokens (a word cut mid-merge) is shortened a token at a time.
        """
        head_budget = max(0, min(head_budget, budget, len(tokens)))
        head, used = self._edge(tokens, head_budget, from_end=False)
        return head, self._edge(tokens, min(budget - used, len(tokens) - head_budget), from_end=True)[0]

    def _edge(self, tokens: list[int], budget: int, *, from_end: bool) -> tuple[str, int]:
        keep = budget
        while keep > 0:
            part = tokens[len(tokens) - keep :] if from_end else tokens[:keep]
            # The tokens' bytes are a byte prefix (suffix) of the text's UTF-8: "ignore" drops only the character
            # cut in two at the edge, so the decoded string is an exact prefix (suffix) of the text.
            piece = self._encoding.decode_bytes(part).decode("utf-8", errors="ignore")
            count = len(self._encoding.encode_ordinary(piece))
            if count <= budget:
                return piece, count
            keep -= 1
        return "", 0

    def count_message(self, message: Message) -> int:
        """Framing + role + content (+ name) + tool calls, cached by content.

        Raises:
            InvalidMessageError: ``message`` is not a :class:`~ctxbudget.Message`.
        """
        _check_message(message)
        calls = _calls(message)
        key = _message_key(message, calls, self._key)
        cached = self._messages.get(key)
        if cached is not None:
            return cached
        role = self._role_tokens(message.role)
        content = message.content
        if isinstance(content, str) and len(content) > _CHUNKED_OVER:
            # A huge output is counted through the text cache: bounding it then counts it again, for free.
            total = TOKENS_PER_MESSAGE + role + self.count_text(content)
        elif isinstance(content, str):
            # Content goes straight to the encoder: the message cache remembers it; a text cache would not help.
            total = TOKENS_PER_MESSAGE + role + len(self._encode(content))
        else:
            total = TOKENS_PER_MESSAGE + role + len(self._encoding.encode_ordinary(message.text))
            total += _block_tokens(message)
        if message.name:
            total += TOKENS_PER_NAME + self.count_text(message.name)
        for call_id, name, arguments in calls:
            total += (
                TOKENS_PER_TOOL_CALL + self.count_text(call_id) + self.count_text(name) + self.count_text(arguments)
            )
        if message.tool_call_id:
            total += self.count_text(message.tool_call_id)
        self._messages.put(key, total)
        return total

    def _role_tokens(self, role: str) -> int:
        tokens = self._roles.get(role)
        if tokens is None:
            tokens = self._roles[role] = self.count_text(role)
        return tokens

    def bound_message(self, message: Message) -> int | None:
        """At least :meth:`count_message`, without encoding: each text's UTF-8 bytes stand in for its tokens.

        O(fields) for ASCII text (``str.isascii`` is a flag), one UTF-8 encode otherwise. ``None`` for content
        blocks (their count is not a sum of texts).

        Raises:
            InvalidMessageError: ``message`` is not a :class:`~ctxbudget.Message`.
        """
        _check_message(message)
        content = message.content
        if not isinstance(content, str):
            return None
        role = self._role_tokens(message.role)
        total = TOKENS_PER_MESSAGE + role + _bytes(content)
        if message.name:
            total += TOKENS_PER_NAME + _bytes(message.name)
        for call in message.tool_calls:
            total += TOKENS_PER_TOOL_CALL + _bytes(call.id) + _bytes(call.name) + _bytes(call.args_json())
        if message.tool_call_id:
            total += _bytes(message.tool_call_id)
        return total

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        """Function-definition billing as OpenAI's cookbook documents it; 0 for no tools.

        Raises:
            InvalidMessageError: ``tools`` is not a sequence of :class:`~ctxbudget.ToolSchema`.
        """
        tools = _check_tools(tools)
        if not tools:
            return 0
        return sum(self._count_tool(tool) for tool in tools) + _FUNC_END

    def _count_tool(self, tool: ToolSchema) -> int:
        func_init = _FUNC_INIT_BY_ENCODING.get(self._encoding.name, _FUNC_INIT)
        total = func_init + self.count_text(f"{tool.name}:{tool.description.removesuffix('.')}")
        properties: Mapping[str, Any] = tool.parameters.get("properties") or {}
        if properties:
            total += _PROP_INIT
            for key, spec in properties.items():
                total += _PROP_KEY + self._count_property(key, spec if isinstance(spec, Mapping) else {})
        return total

    def _count_property(self, key: str, spec: Mapping[str, Any]) -> int:
        total = 0
        enum = spec.get("enum")
        if isinstance(enum, list):
            total += _ENUM_INIT + sum(_ENUM_ITEM + self.count_text(str(item)) for item in enum)
        kind = spec.get("type", "")
        description = str(spec.get("description", "")).removesuffix(".")
        total += self.count_text(f"{key}:{kind}:{description}")
        for nested in ("properties", "items"):  # nested schemas are billed roughly as their JSON
            if nested in spec:
                total += self.count_text(str(spec[nested]))
        return total


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
            raise _not_text(text)
        return math.ceil(len(text) / self.chars_per_token)

    def count_message(self, message: Message) -> int:
        """Framing + content + tool calls; a non-:class:`~ctxbudget.Message` is an :class:`InvalidMessageError`."""
        _check_message(message)
        total = TOKENS_PER_MESSAGE + self.count_text(message.text)
        if message.name:
            total += TOKENS_PER_NAME + self.count_text(message.name)
        for call in message.tool_calls:
            total += TOKENS_PER_TOOL_CALL + self.count_text(call.id + call.name + call.args_json())
        return total

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        """Tokens of each schema's name, description and JSON parameters (typed error for anything else)."""
        tools = _check_tools(tools)
        return sum(self.count_text(f"{t.name}:{t.description}:{t.parameters}") + _FUNC_INIT for t in tools)


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


def counter_for_model(model: str, *, registry: ModelRegistry = DEFAULT_REGISTRY) -> TokenCounter:
    """Return the right counter for ``model``: exact tiktoken for OpenAI families, an estimate otherwise.

    The counter's ``exact`` property and its name (``tiktoken:...`` or ``estimate:...``) say which it is.

    Raises:
        UnknownModelError: ``model`` is not in ``registry`` (with "did you mean" suggestions); for a model the
            registry lacks, use ``EstimatingCounter()`` (``o200k_base``, factor 1) or register the model.
    """
    info = registry.get(model)
    if info.exact:
        return TiktokenCounter(info.encoding)
    if info.provider == "anthropic":  # Anthropic's block shapes and its documented tool-use system prompt
        from ..providers.anthropic_tokens import AnthropicCounter  # noqa: PLC0415  (that module imports this one)

        return AnthropicCounter(info.name, factor=info.token_factor, encoding=info.encoding)
    return EstimatingCounter(info.token_factor, encoding=info.encoding)


def count_request(counter: TokenCounter, messages: Iterable[Message], tools: Sequence[ToolSchema] = ()) -> int:
    """Tokens a whole request costs: every message, the tool schemas and the reply priming.

    Raises:
        InvalidMessageError: ``messages`` is not an iterable of messages (a provider's message dict is named with
            the converter that reads it), or ``tools`` not a sequence of schemas.
    """
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
