"""An Anthropic user turn's ``tool_result`` blocks answer the calls wherever they stand in it.

Anthropic requires a user message's results first; a turn with text before them is read in that order (results,
then the text as one user message), so the call is answered by its real output and nothing is lost or stubbed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from anthropic import Anthropic
from ctxbudget import ContextSession, Message, find_tool_pair_problems
from ctxbudget.providers import messages_from_anthropic, messages_to_anthropic, messages_to_openai
from ctxbudget.providers.fake_servers import FakeAnthropicServer, FakeOpenAIServer
from openai import OpenAI

OUTPUT = "region: eu-west-1\nreplicas: 3"
CALL = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "cat", "input": {"path": "c"}}]}
TEXT = {"type": "text", "text": "Here is the file:"}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": OUTPUT}
TURNS: list[dict[str, Any]] = [
    {"role": "user", "content": "What is in config.yaml?"},
    CALL,
    {"role": "user", "content": [TEXT, RESULT]},
]
STUB = "[no result"


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(max_tokens=8_000) as server:
        yield server


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(max_tokens=8_000) as server:
        yield server


class TestReading:
    def test_text_before_a_result_reads_as_the_result_then_the_text(self) -> None:
        messages = messages_from_anthropic(TURNS)
        assert [m.role for m in messages] == ["user", "assistant", "tool", "user"]
        assert (messages[2].tool_call_id, messages[2].text) == ("toolu_1", OUTPUT)
        assert messages[3].text == "Here is the file:"
        assert find_tool_pair_problems(messages) == []

    def test_it_writes_back_in_the_order_anthropic_requires_with_nothing_lost(self) -> None:
        sent = messages_to_anthropic(messages_from_anthropic(TURNS))["messages"]
        assert sent == [*TURNS[:2], {"role": "user", "content": [RESULT, TEXT]}]

    def test_results_scattered_among_other_blocks_come_first_in_their_order(self) -> None:
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}}
        second = {"type": "tool_result", "tool_use_id": "toolu_2", "content": "two", "is_error": True}
        turn = {"role": "user", "content": [TEXT, RESULT, image, second]}
        messages = messages_from_anthropic([turn])
        assert [(m.role, m.tool_call_id) for m in messages] == [
            ("tool", "toolu_1"),
            ("tool", "toolu_2"),
            ("user", None),
        ]
        assert messages_to_anthropic(messages)["messages"] == [
            {"role": "user", "content": [RESULT, second, TEXT, image]}
        ]

    def test_a_turn_with_its_results_first_still_round_trips_exactly(self) -> None:
        turns = [*TURNS[:2], {"role": "user", "content": [RESULT, TEXT]}]
        assert messages_to_anthropic(messages_from_anthropic(turns)) == {"messages": turns}


class TestSession:
    def _session(self) -> tuple[ContextSession, list[Message]]:
        session = ContextSession(model="claude-haiku-4-5", max_tokens=100_000)
        added = session.add_anthropic(*TURNS)
        return session, added

    def test_the_anthropic_request_carries_the_real_result_and_no_stub(
        self, anthropic_server: FakeAnthropicServer
    ) -> None:
        session, added = self._session()
        client = Anthropic(base_url=anthropic_server.url, api_key="test", max_retries=0, timeout=10)
        client.messages.create(model="claude-haiku-4-5", max_tokens=64, **session.build_request().to_anthropic())
        assert anthropic_server.stats.accepted == 1
        sent = anthropic_server.bodies[-1]["messages"]
        assert sent[2] == {"role": "user", "content": [RESULT, TEXT]}
        assert STUB not in json.dumps(sent)
        assert session.originals() == added

    def test_the_openai_request_carries_the_real_result_and_no_stub(self, openai_server: FakeOpenAIServer) -> None:
        session, added = self._session()
        client = OpenAI(base_url=openai_server.base_url, api_key="test", max_retries=0, timeout=10)
        client.chat.completions.create(model="gpt-4o", **session.build_request().to_openai())
        assert openai_server.stats.accepted == 1
        sent = openai_server.bodies[-1]["messages"]
        assert {"role": "tool", "tool_call_id": "toolu_1", "content": OUTPUT} in sent
        assert STUB not in json.dumps(sent)
        assert session.originals() == added

    def test_originals_keep_the_turn_as_it_was_read(self) -> None:
        session, _ = self._session()
        originals = session.originals()
        assert [m.text for m in originals if m.role == "tool"] == [OUTPUT]
        assert messages_to_openai(originals) == messages_to_openai(messages_from_anthropic(TURNS))
