"""Issue 16, windows: the window comes from the model, is never guessed, and counts say whether they are exact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ctxbudget import ContextSession, counter_for_model
from ctxbudget.cli import EXIT_OK, EXIT_USAGE, main
from ctxbudget.errors import (
    BudgetExceededError,
    InvalidPolicyError,
    SystemPromptTooLargeError,
    UnknownModelError,
    UsageError,
)
from ctxbudget.messages import ToolSchema
from ctxbudget.messages.registry import DEFAULT_REGISTRY, ModelInfo, ModelRegistry
from ctxbudget.messages.tokens import CharCounter, EstimatingCounter, TiktokenCounter

GPT_4O_BUDGET = 128_000 - 16_384
LONG_PROMPT = "Follow the house style in every answer. " * 50


# -- no window is guessed --------------------------------------------------------------------------------------------
def test_a_session_without_model_or_max_tokens_is_refused_naming_both_fixes() -> None:
    with pytest.raises(UsageError) as info:
        ContextSession(system_prompt="Be terse.")
    assert info.value.field == "max_tokens"
    assert "model='gpt-4o'" in str(info.value)
    assert "max_tokens=N" in str(info.value)


# -- provider-prefixed names -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("openai:gpt-4o", "gpt-4o"),  # init_chat_model's form, as the README shows it
        ("azure_openai:gpt-4o-mini", "gpt-4o-mini"),
        ("anthropic:claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
        ("openai/gpt-4o", "gpt-4o"),
        ("anthropic/claude-3.5-sonnet", "claude-3-5-sonnet"),  # OpenRouter's dotted version
        ("openrouter/anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-3-5-sonnet"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("bedrock_converse:us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet"),
        ("claude-3-5-sonnet@20240620", "claude-3-5-sonnet"),  # Vertex AI
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b"),
        ("models/gemini-2.5-pro", "gemini-2.5-pro"),
    ],
)
def test_provider_prefixed_names_give_the_models_window(name: str, canonical: str) -> None:
    info = DEFAULT_REGISTRY.get(name)
    assert info.name == canonical
    assert ContextSession(model=name).max_tokens == info.input_budget


def test_a_registered_name_with_a_slash_is_found_as_given() -> None:
    registry = ModelRegistry(
        [ModelInfo(name="acme/tiny", provider="other", context_window=4_096, max_output_tokens=512)]
    )
    assert ContextSession(model="acme/tiny", registry=registry).max_tokens == 4_096 - 512


@pytest.mark.parametrize("name", ["gpt-4.5-preview", "gpt-4o1", "o1x"])
def test_a_prefix_only_matches_at_a_separator_never_inside_a_version(name: str) -> None:
    assert DEFAULT_REGISTRY.find(name) is None  # gpt-4.5 used to resolve to gpt-4's 8,192-token window


# -- max_tokens against the model's window ---------------------------------------------------------------------------
def test_max_tokens_above_the_models_context_window_is_refused_with_the_figures() -> None:
    with pytest.raises(InvalidPolicyError) as info:
        ContextSession(model="gpt-4o", max_tokens=200_000)
    assert info.value.field == "max_tokens"
    for figure in ("200,000", "128,000", f"{GPT_4O_BUDGET:,}"):
        assert figure in str(info.value)
    with pytest.raises(InvalidPolicyError, match="8,192"):
        ContextSession(model="openai:gpt-4", max_tokens=8_193)


def test_max_tokens_up_to_the_context_window_is_the_callers_choice_of_output_reserve() -> None:
    assert ContextSession(model="gpt-4o", max_tokens=128_000).max_tokens == 128_000
    assert ContextSession(model="gpt-4o", max_tokens=1_000).max_tokens == 1_000


# -- unknown models: "did you mean" and the fix ----------------------------------------------------------------------
def test_a_near_miss_gets_did_you_mean_and_the_python_and_cli_fixes() -> None:
    with pytest.raises(UnknownModelError) as info:
        ContextSession(model="gpt4o")
    error = info.value
    assert error.field == "model"
    assert error.model == "gpt4o"
    assert error.suggestions[0] == "gpt-4o"
    assert "Did you mean 'gpt-4o'" in str(error)
    assert "max_tokens=N" in str(error)
    assert "--max-tokens N" in str(error)
    assert "register" in str(error)


def test_did_you_mean_also_covers_dated_and_prefixed_near_misses() -> None:
    assert DEFAULT_REGISTRY.suggest("openai:gpt4o-2024-08-06")[0] == "gpt-4o"
    assert DEFAULT_REGISTRY.suggest("llama3")[0].startswith("llama-3")
    assert DEFAULT_REGISTRY.suggest("something-else-entirely") == []


def test_an_unknown_model_with_max_tokens_is_accepted_and_counted_as_an_estimate() -> None:
    session = ContextSession(model="llama3", max_tokens=8_000)
    assert session.max_tokens == 8_000
    assert session.counter.exact is False  # type: ignore[attr-defined]
    assert session.counter.name.startswith("estimate:")


def test_a_restored_session_of_an_unknown_model_keeps_counting_as_an_estimate() -> None:
    session = ContextSession(model="llama3", max_tokens=8_000)
    restored = ContextSession.restore(session.snapshot().to_json())
    assert restored.model == "llama3"
    assert restored.counter.name == session.counter.name
    assert restored.counter.name.startswith("estimate:")  # was exact o200k_base once restored


# -- counts say whether they are exact -------------------------------------------------------------------------------
def test_counters_say_whether_their_counts_are_exact() -> None:
    assert counter_for_model("gpt-4o").exact is True  # type: ignore[attr-defined]
    assert counter_for_model("openai:gpt-4").exact is True  # type: ignore[attr-defined]
    claude = counter_for_model("anthropic:claude-sonnet-4-5")
    assert claude.exact is False  # type: ignore[attr-defined]
    assert claude.name.startswith("estimate:")
    assert TiktokenCounter().exact is True
    assert EstimatingCounter().exact is False
    assert CharCounter().exact is False
    assert ContextSession(model="gpt-4o").counter.exact is True  # type: ignore[attr-defined]


# -- a system prompt that cannot fit ---------------------------------------------------------------------------------
def test_a_system_prompt_over_the_window_is_refused_at_construction_with_both_numbers() -> None:
    prompt_tokens = TiktokenCounter().count_text(LONG_PROMPT)
    with pytest.raises(SystemPromptTooLargeError) as info:
        ContextSession(max_tokens=100, system_prompt=LONG_PROMPT)
    error = info.value
    assert isinstance(error, BudgetExceededError)
    assert error.field == "system_prompt"
    assert error.max_tokens == 100
    assert error.prompt_tokens > prompt_tokens
    assert f"{error.prompt_tokens:,} tokens" in str(error)
    assert "100-token window" in str(error)


def test_tool_schemas_count_towards_what_must_fit() -> None:
    tool = ToolSchema(name="search", description="Search the web. " * 40, parameters={"type": "object"})
    with pytest.raises(SystemPromptTooLargeError) as info:
        ContextSession(max_tokens=100, tools=[tool])
    assert info.value.field == "tools"
    assert ContextSession(max_tokens=1_000, tools=[tool]).tools == (tool,)


def test_a_system_prompt_set_later_must_fit_too_and_a_refusal_changes_nothing() -> None:
    session = ContextSession(max_tokens=100, system_prompt="Be terse.")
    with pytest.raises(SystemPromptTooLargeError):
        session.system_prompt = LONG_PROMPT
    assert session.system_prompt == "Be terse."


# -- the CLI ---------------------------------------------------------------------------------------------------------
def _transcript(tmp_path: Path) -> Path:
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    return path


def test_the_cli_names_max_tokens_and_the_near_name_for_an_unknown_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(_transcript(tmp_path)), "--model", "gpt4o"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--max-tokens" in err
    assert "'gpt-4o'" in err


def test_the_cli_counts_an_unknown_model_given_a_window_as_an_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["inspect", str(_transcript(tmp_path)), "--json", "--model", "llama3", "--max-tokens", "8000"]
    assert main(argv) == EXIT_OK
    report = json.loads(capsys.readouterr().out)
    assert report["counter"].startswith("estimate:")
    assert report["window"]["max_tokens"] == 8_000
