"""Issue 16, windows through LangChain: the window comes from the chat model and a larger max_tokens is refused."""

from __future__ import annotations

import pytest
from ctxbudget.errors import InvalidPolicyError, UsageError
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage

from langchain_ctxbudget import ContextBudgetMiddleware, ContextBudgetRunnable, StrictFakeChatModel

from .conftest import agent_with


class NamedModel(FakeListChatModel):
    """A real chat model with no profile that names its model like ``ChatOpenAI`` (``model_name``)."""

    model_name: str = "gpt-4o"


class BedrockLikeModel(FakeListChatModel):
    """Names its model like ``ChatBedrock`` (``model_id``)."""

    model_id: str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


@pytest.mark.parametrize(
    ("model", "window"),
    [
        (NamedModel(responses=["x"], model_name="openai:gpt-4o"), 128_000 - 16_384),
        (NamedModel(responses=["x"], model_name="openai/gpt-4o-mini"), 128_000 - 16_384),
        (BedrockLikeModel(responses=["x"]), 200_000 - 64_000),
    ],
)
def test_the_window_comes_from_a_provider_prefixed_model_name(model: FakeListChatModel, window: int) -> None:
    assert ContextBudgetRunnable(model=model).max_tokens == window


def test_max_tokens_above_the_models_profile_is_refused() -> None:
    with pytest.raises(InvalidPolicyError) as info:
        ContextBudgetRunnable(model=StrictFakeChatModel(max_input_tokens=300), max_tokens=1_000)
    assert info.value.field == "max_tokens"
    assert "1,000" in str(info.value)
    assert "300" in str(info.value)


def test_max_tokens_above_the_registered_window_is_refused() -> None:
    with pytest.raises(InvalidPolicyError, match="128,000"):
        ContextBudgetRunnable(model=NamedModel(responses=["x"]), max_tokens=200_000)
    assert ContextBudgetRunnable(model=NamedModel(responses=["x"]), max_tokens=100_000).max_tokens == 100_000


def test_an_unknown_model_name_gets_did_you_mean_and_the_fix() -> None:
    with pytest.raises(UsageError) as info:
        ContextBudgetRunnable(model=NamedModel(responses=["x"], model_name="gpt4o"))
    assert info.value.field == "max_tokens"
    assert "did you mean 'gpt-4o'" in str(info.value)
    assert "max_tokens=N" in str(info.value)


def test_the_agent_middleware_refuses_a_budget_over_the_models_window() -> None:
    model = StrictFakeChatModel(max_input_tokens=6_000, responses=["never"])
    agent = agent_with(model, ContextBudgetMiddleware(max_tokens=50_000))
    with pytest.raises(InvalidPolicyError, match="6,000"):
        agent.invoke({"messages": [HumanMessage(content="hi")]}, {"configurable": {"thread_id": "t"}})
    assert model.requests == []  # refused before any request was sent
