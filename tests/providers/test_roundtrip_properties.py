"""Property tests: for any valid message of a format, reading then writing it gives it back exactly.

(An Anthropic user message comes back with its ``tool_result`` blocks first, the order Anthropic requires.)

And whatever format a conversation came from, writing it to another format never separates a tool call from its
result.
"""

from __future__ import annotations

import json
from typing import Any

from ctxbudget import find_tool_pair_problems
from ctxbudget.providers import (
    message_from_openai,
    message_to_openai,
    messages_from_anthropic,
    messages_from_openai,
    messages_from_responses,
    messages_to_anthropic,
    messages_to_openai,
    messages_to_responses,
)
from hypothesis import given, settings
from hypothesis import strategies as st

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
WORDS = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)
IDS = st.text("abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=8)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
ARGS = st.dictionaries(TEXT, JSON_VALUES, max_size=3)
SETTINGS = settings(max_examples=100, deadline=None)


def _arguments(draw: st.DrawFn) -> str:
    args = draw(ARGS)
    spelling = draw(st.sampled_from(["compact", "spaced", "broken"]))
    if spelling == "compact":
        return json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    if spelling == "spaced":
        return json.dumps(args)
    return draw(TEXT)  # a truncated reply: anything, usually not JSON


# -- OpenAI Chat Completions -----------------------------------------------------------------------------------
CHAT_PARTS = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, TEXT),
    st.builds(lambda u: {"type": "image_url", "image_url": {"url": f"https://x.test/{u}.png"}}, IDS),
)


@st.composite
def chat_messages(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.sampled_from(["system", "developer", "user", "assistant", "tool"]))
    message: dict[str, Any] = {"role": role}
    content = draw(st.one_of(TEXT, st.none(), st.just("absent"), st.lists(CHAT_PARTS, max_size=3)))
    if content != "absent":
        message["content"] = content
    if draw(st.booleans()) and role != "tool":
        message["name"] = draw(IDS)
    if role == "tool":
        message["tool_call_id"] = draw(IDS)
    if role == "assistant" and draw(st.booleans()):
        ids = draw(st.lists(IDS, min_size=1, max_size=3, unique=True))
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": draw(IDS), "arguments": _arguments(draw)}} for i in ids
        ]
    if role == "assistant" and draw(st.booleans()):
        message["refusal"] = draw(st.none() | TEXT)
    return message


@SETTINGS
@given(chat_messages())
def test_chat_messages_round_trip(message: dict[str, Any]) -> None:
    assert message_to_openai(message_from_openai(message)) == message


# -- Anthropic -------------------------------------------------------------------------------------------------
TEXT_BLOCK = st.builds(lambda t: {"type": "text", "text": t}, WORDS)
IMAGE_BLOCK = st.builds(
    lambda d: {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": d}}, IDS
)


@st.composite
def tool_result(draw: st.DrawFn, call_id: str) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id}
    content = draw(st.one_of(TEXT, st.just("absent"), st.lists(TEXT_BLOCK | IMAGE_BLOCK, max_size=2)))
    if content != "absent":
        block["content"] = content
    if draw(st.booleans()):
        block["is_error"] = draw(st.booleans())
    return block


@st.composite
def anthropic_conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """User and assistant turns; results answer the calls before them, in any order, split or not."""
    messages: list[dict[str, Any]] = []
    for turn in range(draw(st.integers(1, 5))):
        messages.append(
            {"role": "user", "content": draw(WORDS | st.lists(TEXT_BLOCK | IMAGE_BLOCK, min_size=1, max_size=2))}
        )
        thinking = draw(
            st.lists(
                st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, WORDS, IDS), max_size=1
            )
        )
        texts = draw(st.lists(TEXT_BLOCK, max_size=2))
        ids = draw(st.lists(IDS, max_size=3, unique=True).map(lambda xs, t=turn: [f"t{t}_{x}" for x in xs]))
        uses = [{"type": "tool_use", "id": i, "name": draw(IDS), "input": draw(ARGS)} for i in ids]
        blocks = thinking + draw(st.permutations(texts + uses)) if draw(st.booleans()) else thinking + texts + uses
        if not blocks:
            blocks = [{"type": "text", "text": "ok"}]
        messages.append({"role": "assistant", "content": draw(st.just(blocks) | WORDS) if not uses else blocks})
        if uses:
            results = [draw(tool_result(i)) for i in ids]
            extra = draw(st.lists(TEXT_BLOCK, max_size=1))
            split = draw(st.integers(0, len(results)))
            if split and split < len(results) and draw(st.booleans()):
                messages.append({"role": "user", "content": results[:split]})
                messages.append({"role": "user", "content": results[split:] + extra})
            else:
                messages.append({"role": "user", "content": draw(st.permutations(results + extra))})
    return messages


def results_first(message: dict[str, Any]) -> dict[str, Any]:
    """The order Anthropic requires: a user message's ``tool_result`` blocks first, each part keeping its order."""
    content = message["content"]
    if message["role"] != "user" or not isinstance(content, list):
        return message
    results = [block for block in content if block["type"] == "tool_result"]
    return {**message, "content": results + [block for block in content if block["type"] != "tool_result"]}


@SETTINGS
@given(anthropic_conversations(), st.one_of(st.none(), WORDS, st.lists(TEXT_BLOCK, min_size=1, max_size=2)))
def test_anthropic_conversations_round_trip(messages: list[dict[str, Any]], system: object) -> None:
    """Exact when results come first; text before a result comes back after them, nothing lost."""
    canonical = [results_first(m) for m in messages]
    expected = {"messages": canonical} if system is None else {"system": system, "messages": canonical}
    assert messages_to_anthropic(messages_from_anthropic(messages, system=system)) == expected
    assert messages_to_anthropic(messages_from_anthropic(canonical, system=system)) == expected


@SETTINGS
@given(anthropic_conversations())
def test_anthropic_conversations_keep_their_pairs_in_every_format(messages: list[dict[str, Any]]) -> None:
    ours = messages_from_anthropic(messages)
    assert find_tool_pair_problems(ours) == []  # text before a result in a user message does not split the pair
    assert find_tool_pair_problems(messages_from_openai(messages_to_openai(ours))) == []
    assert find_tool_pair_problems(messages_from_responses(messages_to_responses(ours))) == []


# -- OpenAI Responses ------------------------------------------------------------------------------------------
def _text_part(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    plain = st.builds(lambda t: {"type": kind, "text": t}, TEXT)
    if kind == "input_text":
        return plain
    return plain | st.builds(lambda t: {"type": kind, "text": t, "annotations": []}, TEXT)


@st.composite
def responses_items(draw: st.DrawFn) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    pending: list[str] = []
    for index in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["message", "message", "function_call", "reasoning", "web_search_call"]))
        if pending and draw(st.booleans()):
            call_id = pending.pop(0)
            output = draw(TEXT | st.lists(_text_part("input_text"), max_size=2))
            items.append({"type": "function_call_output", "call_id": call_id, "output": output})
        elif kind == "message":
            role = draw(st.sampled_from(["user", "system", "developer", "assistant"]))
            part_kind = "output_text" if role == "assistant" else "input_text"
            parts = (
                _text_part(part_kind)
                | _text_part("input_text")
                | st.builds(
                    lambda u: {"type": "input_image", "image_url": f"https://x.test/{u}.png", "detail": "low"}, IDS
                )
            )
            item: dict[str, Any] = {"role": role, "content": draw(TEXT | st.lists(parts, max_size=3))}
            if draw(st.booleans()):
                item = {"type": "message", **item}
            if role == "assistant" and draw(st.booleans()):
                item.update(id=f"msg_{index}", status="completed")
            items.append(item)
        elif kind == "function_call":
            call_id = f"call_{index}"
            item = {"type": "function_call", "call_id": call_id, "name": draw(IDS), "arguments": _arguments(draw)}
            if draw(st.booleans()):
                item.update(id=f"fc_{index}", status="completed")
            items.append(item)
            pending.append(call_id)
        elif kind == "reasoning":
            summary = [{"type": "summary_text", "text": draw(TEXT)}]
            items.append({"type": "reasoning", "id": f"rs_{index}", "summary": summary, "encrypted_content": draw(IDS)})
        else:
            items.append({"type": kind, "id": f"ws_{index}", "status": "completed"})
    return items


@SETTINGS
@given(responses_items())
def test_responses_items_round_trip(items: list[dict[str, Any]]) -> None:
    assert messages_to_responses(messages_from_responses(items)) == items


@SETTINGS
@given(st.lists(chat_messages(), max_size=6))
def test_chat_lists_round_trip(messages: list[dict[str, Any]]) -> None:
    assert messages_to_openai(messages_from_openai(messages)) == messages
