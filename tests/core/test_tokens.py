"""Token counting: exact against the OpenAI cookbook formula, offline, cached, never crashing on user text."""

from __future__ import annotations

import math
import random
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from ctxbudget.errors import InvalidPolicyError, UnknownModelError
from ctxbudget.messages import Message, encodings
from ctxbudget.messages.encodings import ENCODING_NAMES, get_encoding
from ctxbudget.messages.registry import DEFAULT_REGISTRY, ModelInfo, ModelRegistry
from ctxbudget.messages.tokens import (
    REPLY_PRIMING,
    Calibration,
    CharCounter,
    EstimatingCounter,
    TiktokenCounter,
    count_request,
)
from ctxbudget.providers.counting import counter_for_model

SPECIALS = ["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|im_start|>"]
WORDS = [
    "hello",
    "world",
    "naïve",
    "café",
    "日本語",
    "テスト",
    "emoji 🎉🚀",
    "مرحبا",
    "Ωμέγα",
    "  ",
    "\n",
    "\t",
    "x" * 40,
]


def random_messages(count: int, seed: int) -> list[Message]:
    rng = random.Random(seed)
    messages = []
    for _ in range(count):
        parts = [rng.choice(WORDS + SPECIALS) for _ in range(rng.randint(0, 30))]
        parts += ["".join(chr(rng.randint(0x20, 0x2FFF)) for _ in range(rng.randint(0, 20)))]
        rng.shuffle(parts)
        name = rng.choice([None, None, "alice", "bot_7", "<|endoftext|>"])
        messages.append(Message(role=rng.choice(["system", "user", "assistant"]), content=" ".join(parts), name=name))
    return messages


def cookbook(message: Message, encoding_name: str) -> int:
    enc = get_encoding(encoding_name)

    def tokens(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    total = 3 + tokens(message.role) + tokens(message.text)
    if message.name:
        total += 1 + tokens(message.name)
    return total


@pytest.mark.parametrize("encoding_name", ["o200k_base", "cl100k_base"])
def test_count_message_matches_the_cookbook_formula_for_1000_generated_messages(encoding_name: str) -> None:
    counter = TiktokenCounter(encoding_name)
    messages = random_messages(1000, seed=2024)
    assert any(s in m.text for m in messages for s in SPECIALS)
    assert any(m.name for m in messages)
    for message in messages:
        assert counter.count_message(message) == cookbook(message, encoding_name), message
    expected_request = sum(cookbook(m, encoding_name) for m in messages) + 3
    assert count_request(counter, messages) == expected_request
    assert REPLY_PRIMING == 3


@pytest.mark.parametrize(("encoding_name", "ids"), [("o200k_base", [24912, 2375]), ("cl100k_base", [15339, 1917])])
def test_known_token_ids(encoding_name: str, ids: list[int]) -> None:
    assert TiktokenCounter(encoding_name).encode("hello world") == ids
    assert get_encoding(encoding_name).encode("hello world") == ids


@pytest.mark.parametrize("encoding_name", ENCODING_NAMES)
@pytest.mark.parametrize("special", SPECIALS)
def test_special_token_text_is_ordinary_text_and_never_raises(encoding_name: str, special: str) -> None:
    counter = TiktokenCounter(encoding_name)
    text = f"before {special} after {special * 3}"
    enc = get_encoding(encoding_name)
    assert counter.count_text(text) == len(enc.encode(text, disallowed_special=()))
    assert counter.count_message(Message(role="user", content=text, name=special)) > 0
    assert 100257 not in counter.encode(special)
    assert 199999 not in counter.encode(special)


def test_unknown_encoding_raises_a_typed_error() -> None:
    with pytest.raises(UnknownModelError) as info:
        get_encoding("p50k_base")
    assert info.value.field == "encoding"
    assert "'p50k_base'" in str(info.value)
    assert "cl100k_base, o200k_base" in str(info.value)


def _no_network(*args: object, **kwargs: object) -> socket.socket:
    raise AssertionError("network access attempted")


def test_encodings_load_in_process_with_no_network_and_an_empty_tiktoken_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(socket, "socket", _no_network)
    monkeypatch.setattr(socket, "create_connection", _no_network)
    monkeypatch.setattr(encodings, "_cache", {})
    fresh = get_encoding("cl100k_base")
    assert fresh.encode("hello world") == [15339, 1917]
    assert list(tmp_path.iterdir()) == []


def test_encodings_load_in_a_fresh_process_with_no_network(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import socket
        def refuse(*args, **kwargs):
            raise OSError("network access attempted")
        socket.socket.connect = refuse
        socket.socket.connect_ex = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from ctxbudget.messages.encodings import get_encoding
        print(get_encoding("o200k_base").encode("hello world"), get_encoding("cl100k_base").encode("hello world"))
        """
    )
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[24912, 2375] [15339, 1917]"
    assert list(tmp_path.iterdir()) == []


def test_repeated_counting_hits_the_message_cache() -> None:
    counter = TiktokenCounter()
    history = random_messages(50, seed=7)
    first = [counter.count_message(m) for m in history]
    hits, misses = counter.cache_stats
    assert (hits, misses) == (0, 50)
    again = [counter.count_message(m) for m in history]
    same_content_new_id = [counter.count_message(m.model_copy(update={"id": "other"})) for m in history]
    assert first == again == same_content_new_id
    assert counter.cache_stats == (100, 50)


def test_cache_keys_on_content_not_identity() -> None:
    counter = TiktokenCounter()
    a = counter.count_message(Message(role="user", content="hello"))
    b = counter.count_message(Message(role="user", content="hello world"))
    c = counter.count_message(Message(role="assistant", content="hello"))
    assert (a, b) == (3 + 1 + 1, 3 + 1 + 2)
    assert c == 3 + counter.count_text("assistant") + 1
    assert counter.cache_stats == (0, 3)


class TestRegistry:
    @pytest.mark.parametrize(
        ("name", "canonical"),
        [
            ("gpt-4o", "gpt-4o"),
            ("gpt-4o-2024-08-06", "gpt-4o"),
            ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
            ("openai/gpt-4.1-mini", "gpt-4.1-mini"),
            ("  GPT-4-Turbo-2024-04-09 ", "gpt-4-turbo"),
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            ("anthropic/claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ],
    )
    def test_dated_and_prefixed_names_resolve_to_the_longest_prefix(self, name: str, canonical: str) -> None:
        assert DEFAULT_REGISTRY.get(name).name == canonical

    def test_unknown_model_raises_naming_it(self) -> None:
        with pytest.raises(UnknownModelError) as info:
            DEFAULT_REGISTRY.get("totally-new-model")
        assert info.value.field == "model"
        assert "'totally-new-model'" in str(info.value)
        assert DEFAULT_REGISTRY.find("totally-new-model") is None

    def test_register_adds_models(self) -> None:
        registry = ModelRegistry([])
        registry.register(ModelInfo(name="local-7b", provider="other", context_window=8192, max_output_tokens=1024))
        assert registry.get("local-7b-q4").input_budget == 8192 - 1024
        assert registry.names() == ["local-7b"]

    def test_counter_for_model_is_exact_for_openai_and_estimated_otherwise(self) -> None:
        assert counter_for_model("gpt-4-0613").name == "tiktoken:cl100k_base"
        assert counter_for_model("gpt-4o").name == "tiktoken:o200k_base"
        estimate = counter_for_model("claude-sonnet-4-5")
        assert isinstance(estimate, EstimatingCounter)
        assert estimate.factor == 1.15
        with pytest.raises(UnknownModelError):
            counter_for_model("nope")


class TestCalibration:
    def test_first_sample_sets_the_ratio_then_it_is_smoothed(self) -> None:
        calibration = Calibration()
        assert calibration.apply(100) == 100
        calibration.observe(100, 115)
        assert calibration.ratio == pytest.approx(1.15)
        assert calibration.apply(200) == 230
        calibration.observe(100, 125)
        assert calibration.ratio == pytest.approx(1.15 + 0.3 * (1.25 - 1.15))
        assert calibration.samples == 2

    def test_bogus_reports_are_clamped_or_ignored(self) -> None:
        calibration = Calibration()
        calibration.observe(0, 100)
        calibration.observe(100, -5)
        assert calibration.samples == 0
        calibration.observe(10, 10_000)
        assert calibration.ratio == 4.0

    @pytest.mark.parametrize("smoothing", [0.0, -0.1, 1.5])
    def test_invalid_smoothing(self, smoothing: float) -> None:
        with pytest.raises(InvalidPolicyError) as info:
            Calibration(smoothing=smoothing)
        assert info.value.field == "smoothing"


class TestEstimates:
    @pytest.mark.parametrize("factor", [0, -1.0, math.nan, math.inf])
    def test_estimating_counter_rejects_bad_factors(self, factor: float) -> None:
        with pytest.raises(InvalidPolicyError) as info:
            EstimatingCounter(factor)
        assert info.value.field == "factor"
        assert repr(factor) in str(info.value)

    @pytest.mark.parametrize("chars", [0, -4.0, math.nan, math.inf])
    def test_char_counter_rejects_bad_ratios(self, chars: float) -> None:
        with pytest.raises(InvalidPolicyError) as info:
            CharCounter(chars)
        assert info.value.field == "chars_per_token"

    def test_estimating_counter_scales_the_exact_count_up(self) -> None:
        exact, estimate = TiktokenCounter(), EstimatingCounter(1.5)
        message = Message(role="user", content="The quick brown fox jumps over the lazy dog")
        assert estimate.count_text(message.text) == math.ceil(exact.count_text(message.text) * 1.5)
        assert estimate.count_message(message) == math.ceil(exact.count_message(message) * 1.5)
        assert estimate.request_overhead == math.ceil(3 * 1.5)
        assert estimate.name == "estimate:o200k_basex1.5"

    def test_char_counter_is_ceil_chars_over_ratio_plus_framing(self) -> None:
        counter = CharCounter(4.0)
        assert counter.count_text("abcde") == 2
        assert counter.count_message(Message(role="user", content="abcd", name="al")) == 3 + 1 + 1 + 1


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "unit": {
                    "type": "string",
                    "description": "The unit of temperature to return",
                    "enum": ["celsius", "fahrenheit"],
                },
            },
            "required": ["location"],
        },
    },
}


@pytest.mark.parametrize(
    ("model", "billed"), [("gpt-4o", 101), ("gpt-4o-mini", 101), ("gpt-4", 105), ("gpt-3.5-turbo", 105)]
)
def test_tool_schemas_are_counted_as_the_openai_cookbook_documents(model: str, billed: int) -> None:
    """The figures OpenAI's token-counting cookbook prints for its function-calling example."""
    from ctxbudget import Message, ToolSchema
    from ctxbudget.messages.tokens import count_request
    from ctxbudget.providers.counting import counter_for_model

    messages = [
        Message(role="system", content="You are a helpful assistant that can answer to questions about the weather."),
        Message(role="user", content="What's the weather like in San Francisco?"),
    ]
    assert count_request(counter_for_model(model), messages, [ToolSchema.from_openai(WEATHER_TOOL)]) == billed
