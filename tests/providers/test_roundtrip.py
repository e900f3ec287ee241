"""Reading a provider's messages and writing them back gives exactly what was read (issue 15).

Fixtures are realistic transcripts of each format (parallel calls, ``content: null``, multi-part content, thinking
blocks, ``is_error`` results, Responses reasoning items); the property tests generate arbitrary valid messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ctxbudget import Message, ToolCall, find_tool_pair_problems
from ctxbudget.errors import InvalidMessageError
from ctxbudget.providers import (
    PROVIDER_META,
    message_from_openai,
    message_to_openai,
    messages_from_anthropic,
    messages_from_openai,
    messages_from_responses,
    messages_to_anthropic,
    messages_to_openai,
    messages_to_responses,
    to_anthropic_request,
    to_openai_request,
    to_responses_request,
    tool_from_anthropic,
    tool_from_openai,
    tool_from_responses,
    tool_to_anthropic,
    tool_to_openai,
    tool_to_responses,
)

FIXTURES = Path(__file__).parent / "fixtures"


def _load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


CHAT = _load("openai_chat_transcript.json")
ANTHROPIC = _load("anthropic_transcript.json")
RESPONSES = _load("responses_transcript.json")


class TestOpenAIChat:
    @pytest.mark.parametrize("index", range(len(CHAT["messages"])))
    def test_every_message_round_trips(self, index: int) -> None:
        original = CHAT["messages"][index]
        assert message_to_openai(message_from_openai(original)) == original

    def test_the_transcript_round_trips_with_its_tools(self) -> None:
        messages = messages_from_openai(CHAT["messages"])
        tools = [tool_from_openai(spec) for spec in CHAT["tools"]]
        assert to_openai_request(messages, tools) == {"messages": CHAT["messages"], "tools": CHAT["tools"]}
        assert find_tool_pair_problems(messages) == []

    def test_what_the_message_lacks_is_in_the_provider_metadata(self) -> None:
        developer, _, user, calls = messages_from_openai(CHAT["messages"][:4])
        assert developer.role == "system"
        assert developer.metadata[PROVIDER_META] == {"openai_chat": {"role": "developer"}}
        assert user.name == "dana"
        assert PROVIDER_META not in user.metadata
        assert calls.content == ""
        assert [c.args for c in calls.tool_calls] == [{"path": "billing/totals.py"}, {"path": "billing/currency.py"}]

    def test_a_truncated_arguments_string_is_kept_verbatim(self) -> None:
        message = message_from_openai(CHAT["messages"][13])
        assert message.tool_calls[0].args == {}
        assert message_to_openai(message)["tool_calls"][0]["function"]["arguments"] == '{"path": "billing/tot'

    def test_a_neutral_message_gets_the_canonical_form(self) -> None:
        call = ToolCall(id="c1", name="grep", args={"q": "x"})
        assert message_to_openai(Message(role="assistant", tool_calls=(call,))) == {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": '{"q":"x"}'}}],
        }

    def test_sdk_response_message_reads_like_its_dict(self) -> None:
        from openai.types.chat import ChatCompletionMessage

        sdk = ChatCompletionMessage.model_validate(
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "annotations": [],
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            }
        )
        assert message_to_openai(message_from_openai(sdk)) == {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        }

    @pytest.mark.parametrize(
        ("bad", "where"),
        [
            ({"role": "function", "name": "f", "content": "x"}, "messages[0].role"),
            ({"role": "robot", "content": "x"}, "messages[0].role"),
            ({"role": "user", "content": 5}, "messages[0].content"),
            (
                {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": 3}}]},
                "arguments",
            ),
            ({"role": "tool", "content": "x"}, "tool_call_id"),
            ("hello", "messages[0]"),
        ],
    )
    def test_malformed_messages_are_typed_errors_naming_the_field(self, bad: object, where: str) -> None:
        with pytest.raises(InvalidMessageError, match=r"messages\[0\]") as caught:
            messages_from_openai([bad])
        assert where in str(caught.value)


class TestAnthropic:
    def test_the_transcript_round_trips_with_system_and_tools(self) -> None:
        messages = messages_from_anthropic(ANTHROPIC["messages"], system=ANTHROPIC["system"])
        tools = [tool_from_anthropic(spec) for spec in ANTHROPIC["tools"]]
        assert to_anthropic_request(messages, tools) == ANTHROPIC
        assert find_tool_pair_problems(messages) == []

    @pytest.mark.parametrize("index", range(len(ANTHROPIC["messages"])))
    def test_every_message_round_trips(self, index: int) -> None:
        original = ANTHROPIC["messages"][index]
        assert messages_to_anthropic(messages_from_anthropic([original])) == {"messages": [original]}

    def test_tool_results_become_tool_messages_and_text_after_them_a_user_message(self) -> None:
        messages = messages_from_anthropic(ANTHROPIC["messages"][:3])
        assert [m.role for m in messages] == ["user", "assistant", "tool", "tool", "user"]
        assistant = messages[1]
        assert [c.id for c in assistant.tool_calls] == ["toolu_01A", "toolu_01B"]
        assert assistant.text == "I'll read the totals and currency modules."  # thinking is kept, not text
        assert assistant.content[0].type == "thinking"  # type: ignore[union-attr]

    def test_is_error_is_kept(self) -> None:
        result = messages_from_anthropic(ANTHROPIC["messages"][:5])[-1]
        assert result.role == "tool"
        assert message_extras(result) == {"fields": {"is_error": True, "cache_control": {"type": "ephemeral"}}}

    def test_results_given_as_separate_openai_messages_are_folded_into_one_user_message(self) -> None:
        openai = messages_from_openai(CHAT["messages"][2:6])
        sent = messages_to_anthropic(openai)["messages"]
        assert [entry["role"] for entry in sent] == ["user", "assistant", "user"]
        assert [block["tool_use_id"] for block in sent[2]["content"]] == ["call_Qx1", "call_Qx2"]

    def test_an_empty_message_is_left_out(self) -> None:
        sent = messages_to_anthropic([Message(role="user", content="q"), Message(role="assistant", content="")])
        assert sent == {"messages": [{"role": "user", "content": "q"}]}

    def test_a_response_message_object_reads_as_its_request_form(self) -> None:
        from anthropic.types import Message as AnthropicMessage

        reply = AnthropicMessage.model_validate(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "hi"}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 3, "output_tokens": 1},
            }
        )
        assert messages_to_anthropic(messages_from_anthropic([reply])) == {
            "messages": [{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}]
        }

    @pytest.mark.parametrize(
        "bad",
        [
            {"role": "system", "content": "x"},
            {"role": "user", "content": 3},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "x"}]},
            {"role": "user", "content": [{"type": "tool_result", "content": "x"}]},
            {"role": "user", "content": [{"text": "no type"}]},
        ],
    )
    def test_malformed_messages_are_typed_errors(self, bad: object) -> None:
        with pytest.raises(InvalidMessageError, match=r"messages\[0\]"):
            messages_from_anthropic([bad])


class TestResponses:
    def test_the_items_round_trip(self) -> None:
        messages = messages_from_responses(RESPONSES["input"])
        tools = [tool_from_responses(spec) for spec in RESPONSES["tools"]]
        assert to_responses_request(messages, tools) == RESPONSES
        assert find_tool_pair_problems(messages) == []

    def test_an_assistant_run_is_one_message_with_its_parallel_calls(self) -> None:
        messages = messages_from_responses(RESPONSES["input"])
        assert [m.role for m in messages] == [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant",
        ]
        run = messages[2]
        assert [c.id for c in run.tool_calls] == ["call_A", "call_B"]
        assert run.text == "Reading the modules."
        assert [b.type for b in run.content] == ["reasoning", "text"]  # type: ignore[union-attr]

    def test_neutral_messages_become_canonical_items(self) -> None:
        call = ToolCall(id="c1", name="grep", args={"q": "x"})
        items = messages_to_responses(
            [
                Message(role="user", content="find x"),
                Message(role="assistant", content="Looking.", tool_calls=(call,)),
                Message(role="tool", tool_call_id="c1", content="x.py:1"),
            ]
        )
        assert items == [
            {"type": "message", "role": "user", "content": "find x"},
            {"type": "message", "role": "assistant", "content": "Looking."},
            {"type": "function_call", "call_id": "c1", "name": "grep", "arguments": '{"q":"x"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "x.py:1"},
        ]


class TestAcrossFormats:
    def test_anthropic_to_openai_drops_thinking_and_keeps_pairs(self) -> None:
        messages = messages_from_anthropic(ANTHROPIC["messages"], system=ANTHROPIC["system"])
        sent = messages_to_openai(messages)
        assert all("thinking" not in json.dumps(entry) for entry in sent)
        back = messages_from_openai(sent)
        assert find_tool_pair_problems(back) == []
        image = next(p for e in sent if isinstance(e.get("content"), list) for p in e["content"] if p["type"] != "text")
        assert image["image_url"]["url"].startswith("data:image/png;base64,")

    def test_openai_to_anthropic_translates_images_and_keeps_pairs(self) -> None:
        messages = messages_from_openai(CHAT["messages"])
        request = to_anthropic_request(messages, [tool_from_openai(t) for t in CHAT["tools"]])
        assert request["system"] == [
            {"type": "text", "text": "You are a careful coding agent. Prefer small diffs."},
            {"type": "text", "text": "Repository: acme/billing"},
            {"type": "text", "text": "Python 3.12"},
        ]
        image = next(
            b
            for e in request["messages"]
            if isinstance(e["content"], list)
            for b in e["content"]
            if b["type"] == "image"
        )
        assert image["source"]["type"] == "base64"
        assert image["source"]["media_type"] == "image/png"
        assert find_tool_pair_problems(messages_from_anthropic(request["messages"])) == []
        assert "strict" not in json.dumps(request["tools"])

    def test_responses_to_chat_and_anthropic(self) -> None:
        messages = messages_from_responses(RESPONSES["input"])
        chat = messages_from_openai(messages_to_openai(messages))
        anthropic = messages_from_anthropic(messages_to_anthropic(messages)["messages"])
        assert find_tool_pair_problems(chat) == find_tool_pair_problems(anthropic) == []
        assert "encrypted" not in json.dumps(messages_to_openai(messages))


class TestTools:
    def test_openai_tools_round_trip_and_strict_is_kept(self) -> None:
        tool = tool_from_openai(CHAT["tools"][0])
        assert tool.parameters["required"] == ["path"]
        assert tool_to_openai(tool) == CHAT["tools"][0]
        assert tool_to_anthropic(tool) == {
            "name": "read_file",
            "description": "Read a file from the repository.",
            "input_schema": CHAT["tools"][0]["function"]["parameters"],
        }

    def test_anthropic_server_tools_round_trip(self) -> None:
        assert tool_to_anthropic(tool_from_anthropic(ANTHROPIC["tools"][2])) == ANTHROPIC["tools"][2]

    def test_responses_tools_round_trip_and_convert(self) -> None:
        tool = tool_from_responses(RESPONSES["tools"][0])
        assert tool_to_responses(tool) == RESPONSES["tools"][0]
        assert tool_to_openai(tool)["function"]["name"] == "read_file"


def message_extras(message: Message) -> dict[str, Any]:
    return message.metadata[PROVIDER_META]["anthropic"]  # type: ignore[no-any-return]
