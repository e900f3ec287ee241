"""Anthropic counting (tool-use system prompt, blocks), SDK usage objects, and the session's provider entry points."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from anthropic import Anthropic
from anthropic.types import Usage
from ctxbudget import (
    CompactionPolicy,
    ContentBlock,
    ContextSession,
    EstimatingCounter,
    InvalidMessageError,
    InvalidPolicyError,
    Message,
    TiktokenCounter,
    ToolCall,
    ToolSchema,
    count_request,
    counter_for_model,
)
from ctxbudget.providers import (
    AnthropicCounter,
    UsageFigures,
    tool_from_anthropic,
    tool_from_openai,
    tool_from_responses,
    tool_use_system_prompt_tokens,
    usage_figures,
)
from ctxbudget.providers.fake_servers import FakeAnthropicServer
from openai.types import CompletionUsage
from openai.types.responses import ResponseUsage

FIXTURES = Path(__file__).parent / "fixtures"
TOOL = ToolSchema(
    name="grep", description="Search.", parameters={"type": "object", "properties": {"q": {"type": "string"}}}
)


class TestAnthropicCounting:
    @pytest.mark.parametrize(
        ("model", "choice", "tokens"),
        [
            ("claude-haiku-4-5", "auto", 346),
            ("claude-sonnet-4-5-20250929", "none", 346),
            ("claude-opus-4-1", {"type": "any"}, 313),
            ("claude-3-7-sonnet-latest", "tool", 313),
            ("claude-3-5-sonnet-20240620", "auto", 294),
            ("claude-3.5-haiku", "any", 340),
            ("claude-3-opus-20240229", "auto", 530),
            (None, "auto", 346),
        ],
    )
    def test_tool_use_system_prompt_follows_anthropics_table(
        self, model: str | None, choice: object, tokens: int
    ) -> None:
        assert tool_use_system_prompt_tokens(model, choice) == tokens

    def test_tools_add_the_system_prompt_and_no_tools_add_nothing(self) -> None:
        counter = AnthropicCounter("claude-haiku-4-5")
        assert counter.count_tools([]) == 0
        schema_only = AnthropicCounter("claude-haiku-4-5").count_tools([TOOL]) - 346
        assert 10 < schema_only < 60
        assert AnthropicCounter("claude-haiku-4-5", tool_choice="any").count_tools([TOOL]) == schema_only + 313

    def test_counter_for_model_gives_anthropic_models_the_anthropic_counter(self) -> None:
        counter = counter_for_model("claude-haiku-4-5")
        assert isinstance(counter, AnthropicCounter)
        assert isinstance(counter, EstimatingCounter)
        assert counter.exact is False
        assert counter.name == "estimate:anthropic:o200k_basex1.15"

    def test_thinking_and_images_are_counted(self) -> None:
        counter = AnthropicCounter()
        plain = counter.count_message(Message(role="assistant", content="Answer."))
        thought = ContentBlock(type="thinking", data={"thinking": "step " * 200, "signature": "sig"})
        answer = ContentBlock(type="text", text="Answer.")
        thinking = counter.count_message(Message(role="assistant", content=(thought, answer)))
        assert thinking > plain + 200
        image = ContentBlock(type="image", data={"source": {"type": "url", "url": "https://x.test/a.png"}})
        assert counter.count_message(Message(role="user", content=(image,))) >= 1600

    def test_calls_and_results_are_counted_as_blocks(self) -> None:
        counter = AnthropicCounter()
        call = ToolCall(id="toolu_1", name="grep", args={"q": "needle " * 50})
        assert counter.count_message(Message(role="assistant", tool_calls=(call,))) > 50
        result = Message(role="tool", tool_call_id="toolu_1", content="hit " * 100)
        assert counter.count_message(result) > 100


class TestUsage:
    def test_openai_chat_usage_with_cached_tokens(self) -> None:
        usage = CompletionUsage(
            prompt_tokens=1200, completion_tokens=30, total_tokens=1230, prompt_tokens_details={"cached_tokens": 1024}
        )
        assert usage_figures(usage) == UsageFigures(1200, 30, 1024)

    def test_openai_responses_usage(self) -> None:
        usage = ResponseUsage(
            input_tokens=900,
            input_tokens_details={"cached_tokens": 128, "cache_write_tokens": 0},
            output_tokens=12,
            output_tokens_details={"reasoning_tokens": 0},
            total_tokens=912,
        )
        assert usage_figures(usage) == UsageFigures(900, 12, 128)

    def test_anthropic_usage_adds_cache_reads_and_writes_to_the_prompt(self) -> None:
        usage = Usage(input_tokens=50, output_tokens=7, cache_read_input_tokens=2000, cache_creation_input_tokens=300)
        assert usage_figures(usage) == UsageFigures(2350, 7, 2000)
        assert usage_figures({"input_tokens": 5, "output_tokens": 1}) == UsageFigures(5, 1, 0)

    def test_a_response_object_gives_its_usage(self) -> None:
        assert usage_figures({"usage": {"prompt_tokens": 3, "completion_tokens": 1}}).prompt_tokens == 3

    @pytest.mark.parametrize("bad", [object(), {"tokens": 3}, {"prompt_tokens": -1}, {"input_tokens": "5"}, [1]])
    def test_anything_else_is_a_typed_error(self, bad: object) -> None:
        with pytest.raises(InvalidPolicyError):
            usage_figures(bad)

    def test_record_usage_takes_sdk_usage_objects(self) -> None:
        session = ContextSession(model="claude-haiku-4-5", max_tokens=10_000)
        session.add_user("hello")
        session.build_request()
        session.record_usage(Usage(input_tokens=10, output_tokens=2, cache_read_input_tokens=90))
        assert session.tracker.last_reported == 100
        session.record_usage(CompletionUsage(prompt_tokens=40, completion_tokens=1, total_tokens=41))
        assert session.tracker.last_reported == 40
        with pytest.raises(InvalidPolicyError):
            session.record_usage({"nothing": 1})
        with pytest.raises(InvalidPolicyError, match="prompt_tokens"):
            session.record_usage(-3)


class TestSessionEntryPoints:
    def test_count_request_names_the_converter_for_provider_dicts(self) -> None:
        with pytest.raises(InvalidMessageError, match=r"messages\[1\].*messages_from_openai"):
            count_request(TiktokenCounter(), [Message(role="user", content="a"), {"role": "user", "content": "b"}])

    def test_add_openai_and_to_openai_round_trip_a_transcript(self) -> None:
        fixture = json.loads((FIXTURES / "openai_chat_transcript.json").read_text(encoding="utf-8"))
        session = ContextSession(model="gpt-4o", tools=[tool_from_openai(t) for t in fixture["tools"]])
        added = session.add_openai(*fixture["messages"])
        assert len(added) == len(fixture["messages"])
        assert session.build_request().to_openai() == fixture

    def test_add_anthropic_and_to_anthropic_round_trip_a_transcript(self) -> None:
        fixture = json.loads((FIXTURES / "anthropic_transcript.json").read_text(encoding="utf-8"))
        session = ContextSession(model="claude-haiku-4-5", tools=[tool_from_anthropic(t) for t in fixture["tools"]])
        session.add_anthropic(*fixture["messages"], system=fixture["system"])
        assert session.build_request().to_anthropic() == fixture

    def test_add_openai_reads_responses_items_and_to_responses_round_trips(self) -> None:
        fixture = json.loads((FIXTURES / "responses_transcript.json").read_text(encoding="utf-8"))
        session = ContextSession(model="gpt-4o", tools=[tool_from_responses(t) for t in fixture["tools"]])
        session.add_openai(*fixture["input"])
        assert session.build_request().to_responses() == fixture

    def test_the_session_system_prompt_is_not_added_twice(self) -> None:
        session = ContextSession(model="claude-haiku-4-5", system_prompt="Be brief.")
        session.add_anthropic({"role": "user", "content": "hi"}, system="Be brief.")
        assert session.build_request().to_anthropic() == {
            "system": "Be brief.",
            "messages": [{"role": "user", "content": "hi"}],
        }

    def test_a_bad_message_adds_nothing(self) -> None:
        session = ContextSession(model="gpt-4o")
        with pytest.raises(InvalidMessageError, match=r"messages\[1\]\.role"):
            session.add_openai({"role": "user", "content": "a"}, {"role": "robot", "content": "b"})
        assert session.history == []

    def test_cache_breakpoints_mark_system_summary_and_last_message(self) -> None:
        session = ContextSession(
            model="claude-haiku-4-5",
            max_tokens=4_000,
            system_prompt="Rules.",
            tools=[TOOL],
            policy=CompactionPolicy(threshold=0.5, target=0.3),
        )
        for turn in range(12):
            session.add_user(f"Question {turn}: " + "context " * 200)
            session.add_assistant(f"Answer {turn}.")
        request = session.build_request().to_anthropic(cache_control=True)
        assert session.summary is not None
        assert request["system"] == [{"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral"}}]
        marked = [i for i, m in enumerate(request["messages"]) if "cache_control" in m["content"][-1]]
        assert marked == [0, len(request["messages"]) - 1]  # the summary, and the newest message
        ttl = session.build_request().to_anthropic(cache_control={"type": "ephemeral", "ttl": "1h"})
        assert ttl["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
        with pytest.raises(InvalidPolicyError, match="cache_control"):
            session.build_request().to_anthropic(cache_control="yes")  # type: ignore[arg-type]


def test_calibration_learns_a_provider_that_bills_more_and_no_request_overflows() -> None:
    tools = [TOOL]
    with FakeAnthropicServer(max_tokens=6_000, bill_factor=1.5) as server:
        session = ContextSession(model="claude-haiku-4-5", max_tokens=6_000, tools=tools)
        client = Anthropic(base_url=server.url, api_key="test", max_retries=0, timeout=10)
        for turn in range(30):
            session.add_anthropic({"role": "user", "content": f"Step {turn}: " + "details " * 80})
            request = session.build_request().to_anthropic()
            reply = client.messages.create(model="claude-haiku-4-5", max_tokens=256, **request)
            session.record_usage(reply.usage)
            session.add_anthropic(reply)
            uses = [b for b in reply.content if b.type == "tool_use"]
            if uses:
                results = [{"type": "tool_result", "tool_use_id": u.id, "content": "ok"} for u in uses]
                session.add_anthropic({"role": "user", "content": results})
                request = session.build_request().to_anthropic()
                session.record_usage(client.messages.create(model="claude-haiku-4-5", max_tokens=256, **request).usage)
                session.add_assistant("Noted.")
    assert server.stats.over_window == server.stats.orphaned == server.stats.malformed == 0
    assert session.tracker.calibration.ratio > 1.1
