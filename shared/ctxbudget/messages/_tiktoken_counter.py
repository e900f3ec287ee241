"""Exact OpenAI counting with a bundled (offline) tiktoken encoding, in the chat format's framing, cached by content.

A huge text is counted and cut a part at a time (:mod:`ctxbudget.messages._token_chunks`), never encoded whole; its
head and tail are encoded from parts about as long as they are (:mod:`ctxbudget.messages._token_edges`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import tiktoken

from ._chat_format import (
    ENUM_INIT,
    ENUM_ITEM,
    FUNC_END,
    FUNC_INIT,
    FUNC_INIT_BY_ENCODING,
    PROP_INIT,
    PROP_KEY,
    REPLY_PRIMING,
    TOKENS_PER_MESSAGE,
    TOKENS_PER_NAME,
    TOKENS_PER_TOOL_CALL,
    block_tokens,
)
from ._counter_inputs import (
    DIGEST_OVER,
    CallsKey,
    ContentCache,
    check_message,
    check_tools,
    fields_calls_key,
    message_key,
    not_text,
    text_key,
    tool_calls_key,
    utf8_bytes,
)
from ._token_chunks import CHUNK_CHARS, encode_text
from ._token_edges import count_huge, cut_edge, head_tokens, tail_tokens
from .encodings import get_encoding
from .message import Message, MessageRole, ToolSchema

__all__ = ["TiktokenCounter"]

_LINES_ADD_UP = frozenset({"o200k_base", "o200k_harmony", "cl100k_base"})
"""Encodings whose pre-tokenizer never joins a newline to a following character that is neither whitespace nor
``/``: a text's tokens are then the sum of its lines' tokens when cut only after such newlines (:func:`line_pieces`).
(GPT-2's pattern lets a space before a newline join the newline only at a text's end: not these.)"""
_FRESH = re.compile(r"[^\s/]")
"""A character the line before it never joins in one pre-token (``/`` it can: o200k's ``[\r\n/]*``)."""
_LINE_CUT = re.compile(rf"\n(?={_FRESH.pattern})")
"""A newline the next line's first character cannot join in one pre-token (``/`` can: o200k's ``[\r\n/]*``)."""

_BUFFER_OVER = 1024
"""Texts longer than this are counted from tiktoken's token buffer (:meth:`TiktokenCounter._length`), not a list."""
_NO_SPECIAL: frozenset[str] = frozenset()

_CHUNKED_OVER = 2 * CHUNK_CHARS
"""Texts longer than this are counted and cut in parts (:mod:`ctxbudget.messages._token_chunks`), never encoded whole: a
whole encoding holds a Python int per token, about nine times the text's size."""


class TiktokenCounter:
    """Exact OpenAI counting with a bundled (offline) tiktoken encoding.

    Args:
        encoding: ``o200k_base`` (gpt-4o, gpt-4.1, gpt-5, o-series) or ``cl100k_base`` (gpt-4, gpt-3.5).
        cache_size: how many distinct message contents to remember.
    """

    def __init__(self, encoding: str = "o200k_base", *, cache_size: int = 200_000) -> None:
        self._encoding: tiktoken.Encoding = get_encoding(encoding)
        self._messages = ContentCache(cache_size)
        self._texts = ContentCache(cache_size)
        self._roles: dict[str, int] = {}
        self._last: tuple[str, list[int] | memoryview] | None = None
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
            if isinstance(last[1], list):
                return last[1]
            tokens: list[int] = last[1].cast("B").cast("I").tolist()  # counted by _length: its buffer, as a list
        else:
            tokens = encode_text(self._encoding, text)  # a huge text a part at a time: never a panic
        if 4096 < len(text) <= _CHUNKED_OVER:
            self._last = (text, tokens)
        return tokens

    def _length(self, text: str) -> int:
        """``len(encode(text))``; a long text is counted from tiktoken's token buffer, with no list of ints built.

        The buffer is ``encode_to_numpy``'s (``encode`` with no special token allowed: ``encode_ordinary``'s tokens).
        """
        last = self._last
        buffer = getattr(self._encoding._core_bpe, "encode_to_tiktoken_buffer", None)  # tiktoken >= 0.7
        if len(text) <= _BUFFER_OVER or buffer is None or (last is not None and last[0] is text):
            return len(self._encode(text))
        try:
            view = memoryview(buffer(text, _NO_SPECIAL))
        except UnicodeEncodeError:  # a lone surrogate: encode_ordinary replaces it (as tiktoken's own wrapper does)
            return len(self._encode(text))
        if 4096 < len(text) <= _CHUNKED_OVER:
            self._last = (text, view)
        return view.nbytes // view.itemsize  # not len(): tiktoken's buffer gives its shape in bytes

    def _count(self, text: str) -> int:
        """Tokens in ``text``, uncached; a huge text is counted a part at a time (memory: one part's tokens)."""
        if len(text) > _CHUNKED_OVER:
            return count_huge(self._encoding, text)
        return self._length(text)

    def _key(self, text: str) -> object:
        """The cache key of ``text``, remembered for the last long text (by identity): a huge output is hashed once."""
        last = self._last_key
        if last is not None and last[0] is text:
            return last[1]
        key = text_key(text)
        if len(text) > DIGEST_OVER:
            self._last_key = (text, key)
        return key

    def count_text(self, text: str) -> int:
        """Tokens in ``text`` (cached; a text of 64 characters or fewer is its own key).

        Raises:
            UsageError: ``text`` is not a ``str``.
        """
        if not isinstance(text, str):
            raise not_text(text)
        if len(text) <= 64:
            return self._count_short(text)  # remembered too: names and call ids recur (a result repeats its call's)
        key = self._key(text)
        cached = self._texts.get(key)
        if cached is None:
            cached = self._count(text)  # a long text is remembered: counting it as a message is then free
            self._texts.put(key, cached)
        return cached

    def count_lines(self, text: str) -> int:
        """:meth:`count_text` of ``text``, exactly, added up from the remembered counts of its lines.

        For a text rebuilt with most of its lines unchanged (a rolling summary, written again at every compaction),
        only its new lines are encoded. The sum is exact: each line ends before a character the encoding's
        pre-tokenizer starts afresh at (:data:`_LINES_ADD_UP`); under another encoding the text is counted whole.
        The total is remembered as :meth:`count_text`'s is, so counting the text again (or a message of it) is free.

        Raises:
            UsageError: ``text`` is not a ``str``.
        """
        if not isinstance(text, str):
            raise not_text(text)
        if len(text) <= 64 or len(text) > _CHUNKED_OVER or self._encoding.name not in _LINES_ADD_UP:
            return self.count_text(text)
        key = self._key(text)
        cached = self._texts.get(key)
        if cached is None:
            cached = sum(map(self.count_text, line_pieces(text)))
            self._texts.put(key, cached)
        return cached

    def _count_short(self, text: str) -> int:
        """Tokens of a text of 64 characters or fewer, remembered: a summary's short lines and tool names recur."""
        cached = self._texts.get(text)  # a short text is its own key (:func:`text_key`)
        if cached is None:
            cached = len(self._encoding.encode_ordinary(text))
            self._texts.put(text, cached)
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
        piece, count = cut_edge(self._encoding, tokens, budget, from_end=from_end)
        if len(piece) > 64:  # remembered: the excerpt joined around it is counted from it (count_joined)
            self._texts.put(self._key(piece), count)
        return piece, count

    def count_joined(self, head: str, middle: str, tail: str) -> int:
        """:meth:`count_text` of ``head + middle + tail``, exactly, from the remembered counts of ``head`` and ``tail``.

        An excerpt (head, an omission marker starting a line, tail) is counted from its two edges, known from
        cutting them (:meth:`fit_text_edges`): the text is cut where the pre-tokenizer starts afresh
        (:func:`line_pieces`) after the marker's first newline, before the head's last line and after the tail's
        first, and only the seams between are encoded again. Otherwise, or under another encoding, the joined text
        is counted whole.
        """
        whole = head + middle + tail
        if (
            self._encoding.name not in _LINES_ADD_UP
            or len(whole) > _CHUNKED_OVER
            or len(middle) < 2
            or middle[0] != "\n"
            or not _starts_afresh(middle[1:])
        ):
            return self.count_text(whole)
        start = 0  # where the head's last line starts (after its last clean cut): the head before it is known
        for line_end in _LINE_CUT.finditer(head):
            start = line_end.end()
        last = head[start:]
        before = self.count_text(head) - self.count_text(last) if start else 0
        cut = _LINE_CUT.search(tail)  # where the tail's first line ends: the tail after it is known
        first = tail[: cut.end()] if cut is not None else tail
        after = self.count_text(tail) - self.count_text(first) if cut is not None else 0
        total = before + self.count_text(last + "\n") + self.count_text(middle[1:] + first) + after
        self._texts.put(self._key(whole), total)
        return total

    def count_message(self, message: Message) -> int:
        """Framing + role + content (+ name) + tool calls, cached by content.

        Raises:
            InvalidMessageError: ``message`` is not a :class:`~ctxbudget.Message`.
        """
        check_message(message)
        calls = tool_calls_key(message)
        key = message_key(message, calls, self._key)
        cached = self._messages.get(key)
        if cached is not None:
            return cached
        content = message.content
        if isinstance(content, str):
            # not encoded when its text was counted already (a summary or a marker compaction wrote and counted)
            known = self._texts.get(self._key(content)) if 64 < len(content) <= _CHUNKED_OVER else None
            total = self._text_message(message.role, content, known)
        else:
            total = TOKENS_PER_MESSAGE + self._role_tokens(message.role)
            total += count_huge(self._encoding, message.text) + block_tokens(message)
        total += self._beside_content(message.name, calls, message.tool_call_id)
        self._messages.put(key, total)
        return total

    def count_fields(
        self,
        role: MessageRole,
        content: str,
        *,
        name: str | None = None,
        tool_calls: Sequence[tuple[str, str, dict[str, Any]]] = (),
        tool_call_id: str | None = None,
    ) -> int:
        """:meth:`count_message` of the complete message with these fields (``tool_calls``: id, name, arguments).

        Remembers nothing (takes no digest of a long text): an adapter counts each message once, as it arrives.

        Raises:
            UsageError: ``role`` is not a chat role, or ``content``, ``name`` or ``tool_call_id`` not text.
            InvalidMessageError: a tool call a :class:`~ctxbudget.ToolCall` cannot hold (naming ``tool_calls[i]``).
        """
        calls = fields_calls_key(role, content, name, tool_calls, tool_call_id)
        return self._text_message(role, content, None) + self._beside_content(name, calls, tool_call_id)

    def _text_message(self, role: str, content: str, known: int | None) -> int:
        """Framing, role and text ``content`` (``known``: its count, when remembered); a huge one via the text cache."""
        tokens = self.count_text(content) if len(content) > _CHUNKED_OVER else known or self._length(content)
        return TOKENS_PER_MESSAGE + self._role_tokens(role) + tokens  # known is never 0: only texts over 64 chars

    def _beside_content(self, name: str | None, calls: CallsKey, tool_call_id: str | None) -> int:
        """Name, tool calls (``(id, name, arguments JSON)`` each) and the id of the call a result answers."""
        total = TOKENS_PER_NAME + self.count_text(name) if name else 0
        total += sum(TOKENS_PER_TOOL_CALL + sum(map(self.count_text, call)) for call in calls)
        return total + (self.count_text(tool_call_id) if tool_call_id else 0)

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
        check_message(message)
        content = message.content
        if not isinstance(content, str):
            return None
        role = self._role_tokens(message.role)
        total = TOKENS_PER_MESSAGE + role + utf8_bytes(content)
        if message.name:
            total += TOKENS_PER_NAME + utf8_bytes(message.name)
        for call in message.tool_calls:
            total += TOKENS_PER_TOOL_CALL + utf8_bytes(call.id) + utf8_bytes(call.name) + utf8_bytes(call.args_json())
        if message.tool_call_id:
            total += utf8_bytes(message.tool_call_id)
        return total

    def count_tools(self, tools: Sequence[ToolSchema]) -> int:
        """Function-definition billing as OpenAI's cookbook documents it; 0 for no tools.

        Raises:
            InvalidMessageError: ``tools`` is not a sequence of :class:`~ctxbudget.ToolSchema`.
        """
        tools = check_tools(tools)
        if not tools:
            return 0
        return sum(self._count_tool(tool) for tool in tools) + FUNC_END

    def _count_tool(self, tool: ToolSchema) -> int:
        func_init = FUNC_INIT_BY_ENCODING.get(self._encoding.name, FUNC_INIT)
        total = func_init + self.count_text(f"{tool.name}:{tool.description.removesuffix('.')}")
        properties: Mapping[str, Any] = tool.parameters.get("properties") or {}
        if properties:
            total += PROP_INIT
            for key, spec in properties.items():
                total += PROP_KEY + self._count_property(key, spec if isinstance(spec, Mapping) else {})
        return total

    def _count_property(self, key: str, spec: Mapping[str, Any]) -> int:
        total = 0
        enum = spec.get("enum")
        if isinstance(enum, list):
            total += ENUM_INIT + sum(ENUM_ITEM + self.count_text(str(item)) for item in enum)
        kind = spec.get("type", "")
        description = str(spec.get("description", "")).removesuffix(".")
        total += self.count_text(f"{key}:{kind}:{description}")
        for nested in ("properties", "items"):  # nested schemas are billed roughly as their JSON
            if nested in spec:
                total += self.count_text(str(spec[nested]))
        return total


def line_pieces(text: str) -> Iterator[str]:
    """``text`` cut after each newline whose next character is neither whitespace nor ``/`` (each piece keeps it)."""
    start = 0
    for cut in _LINE_CUT.finditer(text):
        yield text[start : cut.end()]
        start = cut.end()
    yield text[start:]


def _starts_afresh(text: str) -> bool:
    """The encodings of :data:`_LINES_ADD_UP` start a new pre-token at ``text``'s first character after a newline."""
    return _FRESH.match(text) is not None
