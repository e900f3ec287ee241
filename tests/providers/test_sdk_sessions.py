"""Long agent sessions through the real ``openai`` and ``anthropic`` clients, against loopback fakes of each API.

The fakes parse every request as the provider does and refuse a broken tool pair or an over-window prompt with
the provider's 400 (the SDK raises ``BadRequestError``); the sessions below must never trigger either, over 100+
turns with parallel calls and large tool outputs, while recording the SDK's usage objects (cache reads included).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from anthropic import Anthropic
from anthropic import BadRequestError as AnthropicBadRequest
from ctxbudget import CompactionPolicy, ContentBlock, ContextSession, Message, ToolSchema
from ctxbudget.providers import AnthropicCounter
from ctxbudget.providers.fake_servers import FakeAnthropicServer, FakeOpenAIServer, ScriptCall, tool_loop_script
from openai import BadRequestError as OpenAIBadRequest
from openai import OpenAI

SYSTEM = "\n".join(
    f"Rule {n}: in the acme/billing repository, keep money in Decimal, never float; cite the file and line you read."
    for n in range(60)
)
"""About 1,500 tokens: long enough for Anthropic's 1,024-token minimum cacheable prefix."""
TOOLS = [
    ToolSchema(
        name="read_file",
        description="Read a file from the repository.",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    ToolSchema(
        name="run_tests",
        description="Run the tests matching a selector.",
        parameters={"type": "object", "properties": {"selector": {"type": "string"}}, "required": ["selector"]},
    ),
]
WINDOW = 16_000
TURNS = 110
POLICY = CompactionPolicy(threshold=0.75, target=0.5)


def tool_output(turn: int, call_id: str) -> str:
    """A file dump: small most turns, a few thousand tokens every fourth turn."""
    lines = 400 if turn % 4 == 0 else 20
    line = f"total = round(sum(line.amount for line in lines_{turn}), 2)"
    return "\n".join(f"{call_id}:{n}: {line}" for n in range(lines))


def _assert_clean(stats: Any, requests: int) -> None:
    assert stats.orphaned == 0, stats.errors[:3]
    assert stats.over_window == 0, stats.errors[:3]
    assert stats.malformed == 0, stats.errors[:3]
    assert stats.accepted == stats.requests == requests


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(max_tokens=WINDOW) as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(max_tokens=WINDOW, script=thinking_script) as server:
        yield server


def thinking_script(call: ScriptCall) -> Message:
    """The tool loop, with a thinking block before every other tool call (as extended thinking does)."""
    reply = tool_loop_script(id_prefix="toolu")(call)
    if reply.tool_calls and call.turn % 4 == 1:
        thought = ContentBlock(type="thinking", data={"thinking": f"Plan for turn {call.turn}.", "signature": "c2ln"})
        return reply.model_copy(update={"content": (thought,)})
    return reply


@pytest.mark.slow
def test_openai_chat_session_of_110_turns_never_sends_a_request_the_api_refuses(
    openai_server: FakeOpenAIServer,
) -> None:
    session = ContextSession(model="gpt-4o", max_tokens=WINDOW, system_prompt=SYSTEM, tools=TOOLS, policy=POLICY)
    client = OpenAI(base_url=openai_server.base_url, api_key="test", max_retries=0, timeout=10)
    requests = added = parallel = 0
    for turn in range(TURNS):
        session.add_openai({"role": "user", "content": f"Step {turn}: check module_{turn}.py"})
        added += 1
        while True:
            response = client.chat.completions.create(model="gpt-4o", **session.build_request().to_openai())
            requests += 1
            session.record_usage(response.usage)
            reply = response.choices[0].message
            session.add_openai(reply)
            added += 1
            if not reply.tool_calls:
                break
            parallel += len(reply.tool_calls) > 1
            results = [
                {"role": "tool", "tool_call_id": call.id, "content": tool_output(turn, call.id)}
                for call in reply.tool_calls
            ]
            session.add_openai(*results)
            added += len(results)
    _assert_clean(openai_server.stats, requests)
    assert requests > 2 * TURNS - 5
    assert parallel > 30
    assert session.summary is not None  # compaction ran, and every original is still recoverable
    assert len(session.originals()) == added
    assert openai_server.stats.cached_tokens > 0  # repeated prefixes were reported as cached
    assert session.tracker.last_reported is not None


@pytest.mark.slow
def test_anthropic_session_of_110_turns_with_thinking_and_cache_breakpoints(
    anthropic_server: FakeAnthropicServer,
) -> None:
    session = ContextSession(
        model="claude-haiku-4-5", max_tokens=WINDOW, system_prompt=SYSTEM, tools=TOOLS, policy=POLICY
    )
    assert isinstance(session.counter, AnthropicCounter)
    client = Anthropic(base_url=anthropic_server.url, api_key="test", max_retries=0, timeout=10)
    requests = thinking = reads_after_compaction = 0
    for turn in range(TURNS):
        session.add_anthropic({"role": "user", "content": f"Step {turn}: check module_{turn}.py"})
        while True:
            request = session.build_request()
            reply = client.messages.create(
                model="claude-haiku-4-5", max_tokens=1024, **request.to_anthropic(cache_control=True)
            )
            requests += 1
            session.record_usage(reply.usage)
            if request.compaction is not None and reply.usage.cache_read_input_tokens:
                reads_after_compaction += 1  # the system prompt and tools stayed cached across the compaction
            session.add_anthropic(reply)
            thinking += any(block.type == "thinking" for block in reply.content)
            uses = [block for block in reply.content if block.type == "tool_use"]
            if not uses:
                break
            session.add_anthropic(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": use.id, "content": tool_output(turn, use.id)}
                        for use in uses
                    ],
                }
            )
    _assert_clean(anthropic_server.stats, requests)
    assert thinking > 20
    assert session.summary is not None
    assert anthropic_server.stats.cached_tokens > 0
    assert reads_after_compaction > 0
    assert session.tracker.calibration.samples > 0


@pytest.mark.slow
def test_openai_responses_session_never_sends_a_request_the_api_refuses(openai_server: FakeOpenAIServer) -> None:
    session = ContextSession(model="gpt-4o", max_tokens=WINDOW, system_prompt=SYSTEM, tools=TOOLS, policy=POLICY)
    client = OpenAI(base_url=openai_server.base_url, api_key="test", max_retries=0, timeout=10)
    requests = 0
    for turn in range(40):
        session.add_openai({"role": "user", "content": f"Step {turn}: check module_{turn}.py"})
        while True:
            response = client.responses.create(model="gpt-4o", **session.build_request().to_responses())
            requests += 1
            session.record_usage(response.usage)
            session.add_openai(*response.output)
            calls = [item for item in response.output if item.type == "function_call"]
            if not calls:
                break
            session.add_openai(
                *[
                    {"type": "function_call_output", "call_id": c.call_id, "output": tool_output(turn, c.call_id)}
                    for c in calls
                ]
            )
    _assert_clean(openai_server.stats, requests)
    assert session.summary is not None


class TestTheFakesRefuseWhatTheProvidersRefuse:
    """Negative controls: the checks the sessions above pass are real."""

    def test_openai_refuses_an_orphaned_call_and_an_over_window_prompt(self, openai_server: FakeOpenAIServer) -> None:
        client = OpenAI(base_url=openai_server.base_url, api_key="test", max_retries=0, timeout=10)
        call = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        with pytest.raises(OpenAIBadRequest, match="tool_call_ids did not have response messages: c1"):
            client.chat.completions.create(
                model="gpt-4o",
                messages=[{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [call]}],
            )
        with pytest.raises(OpenAIBadRequest, match="maximum context length") as caught:
            client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "word " * WINDOW}])
        assert caught.value.code == "context_length_exceeded"
        with pytest.raises(OpenAIBadRequest, match="No tool output found for function call c2"):
            client.responses.create(
                model="gpt-4o", input=[{"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"}]
            )
        assert (openai_server.stats.orphaned, openai_server.stats.over_window) == (2, 1)

    def test_anthropic_refuses_unfolded_results_an_orphaned_result_and_an_over_window_prompt(
        self, anthropic_server: FakeAnthropicServer
    ) -> None:
        client = Anthropic(base_url=anthropic_server.url, api_key="test", max_retries=0, timeout=10)
        uses = [{"type": "tool_use", "id": f"t{i}", "name": "read_file", "input": {}} for i in (1, 2)]
        unfolded = [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": uses},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "b"}]},
        ]
        with pytest.raises(AnthropicBadRequest, match="without `tool_result` blocks immediately after: t2"):
            client.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=unfolded)
        with pytest.raises(AnthropicBadRequest, match="unexpected `tool_use_id`"):
            client.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=unfolded[:1] + unfolded[2:3])
        with pytest.raises(AnthropicBadRequest, match="prompt is too long"):
            client.messages.create(
                model="claude-haiku-4-5", max_tokens=10, messages=[{"role": "user", "content": "word " * WINDOW}]
            )
        assert (anthropic_server.stats.orphaned, anthropic_server.stats.over_window) == (2, 1)

    def test_a_naive_last_n_window_sends_orphaned_pairs(self, openai_server: FakeOpenAIServer) -> None:
        """What the session prevents: keeping the last 6 messages cuts calls from their results."""
        client = OpenAI(base_url=openai_server.base_url, api_key="test", max_retries=0, timeout=10)
        history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        tools = [{"type": "function", "function": {"name": t.name, "parameters": t.parameters}} for t in TOOLS]
        refused = 0
        for turn in range(12):
            history.append({"role": "user", "content": f"Step {turn}"})
            for _ in range(3):
                try:
                    window = history[:1] + history[-6:]
                    response = client.chat.completions.create(model="gpt-4o", messages=window, tools=tools)
                except OpenAIBadRequest:
                    refused += 1
                    break
                reply = response.choices[0].message
                history.append(reply.to_dict())
                if not reply.tool_calls:
                    break
                history.extend({"role": "tool", "tool_call_id": c.id, "content": "ok"} for c in reply.tool_calls)
        assert refused > 0
        assert openai_server.stats.orphaned == refused
