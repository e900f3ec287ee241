"""Loopback servers that answer like the OpenAI and Anthropic APIs: test the real SDK clients offline.

Point the official client at one (``OpenAI(base_url=server.url, api_key="test")``,
``Anthropic(base_url=server.url, api_key="test")``) and every request is parsed and checked as the provider checks
it: a broken tool pair or a prompt over ``max_tokens`` gets the provider's 400 error shape (the SDK raises
``BadRequestError``), and :attr:`FakeServer.stats` counts it. Accepted requests get a scripted reply (tool calls,
parallel ones too, or text) and usage as the provider reports it, prompt-cache reads included: OpenAI caches any
repeated prefix of at least 1,024 tokens (in steps of 128), Anthropic caches up to the ``cache_control``
breakpoints a request marks (looking back up to 20 blocks for an earlier one). The Anthropic server bills with
its own tokenizer stand-in (``cl100k_base`` plus the documented tool-use system prompt), not with ctxbudget's
estimate, so calibration has something to learn.

The servers listen on 127.0.0.1 only, on a free port, in a daemon thread; use them as context managers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..messages.encodings import get_encoding
from ..messages.message import Message, ToolSchema
from ..messages.tokens import TiktokenCounter, TokenCounter, count_request
from ._fake_base import FakeServer, FakeServerStats, Script, ScriptCall, prefix_digest, tool_loop_script
from ._wire_checks import Problem, anthropic_problem, openai_chat_problem, responses_problem
from .anthropic import messages_from_anthropic, messages_to_anthropic, tool_from_anthropic
from .anthropic_tokens import ANTHROPIC_TOKENS_PER_IMAGE, tool_use_system_prompt_tokens
from .openai_chat import message_to_openai, messages_from_openai, tool_from_openai
from .openai_responses import messages_from_responses, messages_to_responses, tool_from_responses

__all__ = [
    "FakeAnthropicServer",
    "FakeOpenAIServer",
    "FakeServer",
    "FakeServerStats",
    "Script",
    "ScriptCall",
    "tool_loop_script",
]


# -- OpenAI ----------------------------------------------------------------------------------------------------
class FakeOpenAIServer(FakeServer):
    """Answers ``POST /v1/chat/completions`` and ``POST /v1/responses`` like OpenAI (give the SDK ``url + "/v1"``).

    Args:
        max_tokens: the window: a prompt over it is ``context_length_exceeded``.
        script: the replies (default :func:`tool_loop_script`).
        counter: how prompts are billed (default exact ``o200k_base``).
    """

    def __init__(self, *, max_tokens: int, script: Script | None = None, counter: TokenCounter | None = None) -> None:
        super().__init__(max_tokens=max_tokens, script=script)
        self.counter = counter or TiktokenCounter()
        self._prefixes: set[str] = set()

    @property
    def base_url(self) -> str:
        """``url + "/v1"``: what ``OpenAI(base_url=...)`` takes."""
        return f"{self.url}/v1"

    def handle(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Chat Completions or Responses."""
        with self._lock:
            self.bodies.append(body)
        if path.endswith("/chat/completions"):
            return self._chat(body)
        if path.endswith("/responses"):
            return self._responses(body)
        return 404, _openai_error(f"Unknown path {path}", "not_found")

    def _check(self, problem: Problem, messages: list[Message], tools: list[ToolSchema]) -> tuple[int, int] | str:
        if problem is not None:
            return self._refuse(*problem)
        sizes = [self.counter.count_tools(tools)] + [self.counter.count_message(m) for m in messages]
        prompt = count_request(self.counter, messages, tools)
        if prompt > self.max_tokens:
            return self._refuse(
                "over_window",
                f"This model's maximum context length is {self.max_tokens} tokens. However, your messages resulted "
                f"in {prompt} tokens. Please reduce the length of the messages.",
            )
        return prompt, self._cached(tools, messages, sizes)

    def _cached(self, tools: list[ToolSchema], messages: list[Message], sizes: list[int]) -> int:
        segments: list[object] = [[t.model_dump() for t in tools]] + [
            m.model_dump(exclude={"id", "metadata"}) for m in messages
        ]
        digest, total, matched = "", 0, 0
        for segment, size in zip(segments, sizes, strict=True):
            digest = prefix_digest(digest, segment)
            total += size
            if digest in self._prefixes:
                matched = total
            self._prefixes.add(digest)
        return 1024 + (matched - 1024) // 128 * 128 if matched >= 1024 else 0

    def _chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        problem = openai_chat_problem(body)
        messages = messages_from_openai(body.get("messages") or []) if problem is None else []
        tools = [tool_from_openai(spec) for spec in body.get("tools") or []] if problem is None else []
        checked = self._check(problem, messages, tools)
        if isinstance(checked, str):
            code = "context_length_exceeded" if checked.startswith("This model's") else None
            return 400, _openai_error(checked, code)
        prompt, cached = checked
        turn = self._accept(prompt, cached)
        reply = self._reply(turn, messages, tools)
        message = message_to_openai(reply)
        completion = max(1, self.counter.count_message(reply) - 3)
        return 200, {
            "id": f"chatcmpl-fake{turn}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }

    def _responses(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        problem = responses_problem(body)
        raw = body.get("input")
        items = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw or []
        messages = messages_from_responses(items) if problem is None else []
        specs = [spec for spec in body.get("tools") or [] if spec.get("type") == "function"]
        tools = [tool_from_responses(spec) for spec in specs] if problem is None else []
        checked = self._check(problem, messages, tools)
        if isinstance(checked, str):
            code = "context_length_exceeded" if checked.startswith("This model's") else None
            return 400, _openai_error(checked, code)
        prompt, cached = checked
        turn = self._accept(prompt, cached)
        reply = self._reply(turn, messages, tools)
        output = [_with_ids(item, turn, k) for k, item in enumerate(messages_to_responses([reply]))]
        completion = max(1, self.counter.count_message(reply) - 3)
        return 200, {
            "id": f"resp_fake{turn}",
            "object": "response",
            "created_at": 0,
            "model": body.get("model", "fake"),
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": body.get("tools") or [],
            "usage": {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": cached},
                "output_tokens": completion,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + completion,
            },
        }


def _with_ids(item: dict[str, Any], turn: int, index: int) -> dict[str, Any]:
    """An output item as the API returns it: with an id and a status (and an output_text's annotations)."""
    item = {**item, "id": f"item_{turn}_{index}", "status": "completed"}
    if item.get("type") == "message":
        content = item["content"]
        parts = [{"type": "output_text", "text": content}] if isinstance(content, str) else content
        item["content"] = [{**part, "annotations": part.get("annotations", [])} for part in parts]
    return item


def _openai_error(message: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": "messages", "code": code}}


# -- Anthropic -------------------------------------------------------------------------------------------------
_LOOKBACK = 20
"""Anthropic checks for a cache hit at each breakpoint and up to 20 blocks before it."""


class FakeAnthropicServer(FakeServer):
    """Answers ``POST /v1/messages`` (and ``/v1/messages/count_tokens``) like Anthropic.

    Args:
        max_tokens: the window: a prompt over it is "prompt is too long".
        script: the replies (default :func:`tool_loop_script` with ``toolu`` ids).
        encoding: the tokenizer stand-in the prompt is billed with.
        bill_factor: scales the billed tokens (a tokenizer that counts more or less than the stand-in).
        min_cache_tokens: the shortest prefix a breakpoint caches.
    """

    def __init__(
        self,
        *,
        max_tokens: int,
        script: Script | None = None,
        encoding: str = "cl100k_base",
        bill_factor: float = 1.0,
        min_cache_tokens: int = 1024,
    ) -> None:
        super().__init__(max_tokens=max_tokens, script=script or tool_loop_script(id_prefix="toolu"))
        self._encoding = get_encoding(encoding)
        self.bill_factor = bill_factor
        self.min_cache_tokens = min_cache_tokens
        self._cached_prefixes: set[str] = set()

    def handle(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Messages, or their token count."""
        with self._lock:
            self.bodies.append(body)
        if path.endswith("/messages/count_tokens"):
            return 200, {"input_tokens": sum(size for size, _, _ in self._segments(body))}
        if not path.endswith("/messages"):
            return 404, _anthropic_error("not_found_error", f"Unknown path {path}")
        problem = anthropic_problem(body)
        if problem is None and not isinstance(body.get("max_tokens"), int):
            problem = ("malformed", "max_tokens: Field required")
        if problem is not None:
            return 400, _anthropic_error("invalid_request_error", self._refuse(*problem))
        segments = self._segments(body)
        prompt = sum(size for size, _, _ in segments)
        if prompt > self.max_tokens:
            message = f"prompt is too long: {prompt} tokens > {self.max_tokens} maximum"
            return 400, _anthropic_error("invalid_request_error", self._refuse("over_window", message))
        read, written = self._cache(segments)
        turn = self._accept(prompt, read)
        messages = messages_from_anthropic(body["messages"], system=body.get("system"))
        tools = [tool_from_anthropic(spec) for spec in body.get("tools") or []]
        reply = self._reply(turn, messages, tools)
        content = messages_to_anthropic([reply])["messages"][0]["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        return 200, {
            "id": f"msg_fake{turn}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": blocks,
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt - read - written,
                "output_tokens": max(1, self._tokens(json.dumps(blocks))),
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written,
            },
        }

    def _tokens(self, text: str) -> int:
        return math.ceil(len(self._encoding.encode_ordinary(text)) * self.bill_factor)

    def _segments(self, body: Mapping[str, Any]) -> list[tuple[int, str, bool]]:
        """``(tokens, prefix digest, breakpoint)`` per cacheable block: tools, system blocks, message blocks."""
        out: list[tuple[int, str, bool]] = []
        digest = ""
        tools = body.get("tools") or []
        for index, tool in enumerate(tools):
            size = self._tokens(json.dumps(_without_cache(tool)))
            if index == 0:
                size += tool_use_system_prompt_tokens(str(body.get("model")), body.get("tool_choice", "auto"))
            digest = prefix_digest(digest, _without_cache(tool))
            out.append((size, digest, "cache_control" in tool))
        system = body.get("system")
        for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
            digest = prefix_digest(digest, _without_cache(block))
            out.append((self._tokens(str(block.get("text", ""))), digest, "cache_control" in block))
        for message in body.get("messages") or []:
            content = message["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for position, block in enumerate(blocks):
                digest = prefix_digest(digest, [message["role"], _without_cache(block)])
                size = self._block_tokens(block) + (3 if position == 0 else 0)
                out.append((size, digest, "cache_control" in block))
        return out

    def _block_tokens(self, block: Mapping[str, Any]) -> int:
        kind = block.get("type")
        if kind == "text":
            return self._tokens(str(block.get("text", "")))
        if kind == "image":
            return ANTHROPIC_TOKENS_PER_IMAGE
        if kind == "thinking":
            return self._tokens(str(block.get("thinking", "")))
        if kind == "tool_use":
            return 3 + self._tokens(f"{block.get('name')}{json.dumps(block.get('input'), ensure_ascii=False)}")
        if kind == "tool_result":
            content = block.get("content", "")
            inner = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
            return 3 + sum(self._block_tokens(part) for part in inner)
        return self._tokens(json.dumps(_without_cache(block)))

    def _cache(self, segments: Sequence[tuple[int, str, bool]]) -> tuple[int, int]:
        """``(read, written)``: the longest cached prefix found near a breakpoint, and what the breakpoints add."""
        breakpoints = [i for i, (_, _, marked) in enumerate(segments) if marked]
        if not breakpoints:
            return 0, 0
        totals = [0]
        for size, _, _ in segments:
            totals.append(totals[-1] + size)
        hit = -1
        for point in breakpoints:
            for index in range(point, max(-1, point - _LOOKBACK - 1), -1):
                if segments[index][1] in self._cached_prefixes:
                    hit = max(hit, index)
                    break
        for point in breakpoints:
            if totals[point + 1] >= self.min_cache_tokens:
                self._cached_prefixes.add(segments[point][1])
        read = totals[hit + 1]
        written = (
            max(0, totals[breakpoints[-1] + 1] - read) if totals[breakpoints[-1] + 1] >= self.min_cache_tokens else 0
        )
        return read, written


def _without_cache(block: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in block.items() if key != "cache_control"}


def _anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}
