"""Ports of LangChain's ``SummarizationMiddleware`` tests, run on it and on ``ContextBudgetMiddleware``.

Upstream (langchain 1.5.2): ``libs/langchain_v1/tests/unit_tests/agents/middleware/implementations/
test_summarization.py``. Its cases call ``before_model`` and read the state update: a ``RemoveMessage`` of every
message, then the summary and the preserved messages. Ours fits the request in ``wrap_model_call`` and updates the
state by id, so both are driven through one harness, :func:`_summarized`: the conversation that replaces the state's
messages (theirs: the update after its ``RemoveMessage``; ours: what the model receives), or ``None`` when nothing
was summarized; the assertions on it are upstream's. ``trigger`` maps to where our compaction starts (a fraction of
the model's window, from its profile), ``keep=("messages", n)`` to ``keep_recent_messages``, ``trigger=None`` to
``auto=False``. Not ported: the cases on private helpers (``_partition_messages``, ``_find_safe_cutoff_point``,
``_trim_messages_for_summary``, ``_get_profile_limits``, ``_create_summary``), on constructor validation of the
``("fraction", x)`` tuples and on deprecation warnings: they test SummarizationMiddleware's own parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

import pytest
from ctxbudget.compaction.policy import CompactionPolicy
from langchain.agents import AgentState
from langchain.agents.middleware.summarization import SummarizationMiddleware
from langchain.agents.middleware.types import ModelRequest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import ModelProfile
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    MessageLikeRepresentation,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.runtime import Runtime

from langchain_ctxbudget import ContextBudgetMiddleware

from .conftest import impls

COUNTS = (
    "budget semantics: ours decides with its own exact counts of the messages (a few tokens each here), not with "
    "the mock token counter or a message count the case sets, so it does not summarize"
)


class ProfileChatModel(BaseChatModel):
    """Mock chat model with profile for testing."""

    profile: ModelProfile | None = ModelProfile(max_input_tokens=1000)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="Summary"))])

    @property
    def _llm_type(self) -> str:
        return "mock"


def _summarized(
    impl: str,
    messages: Sequence[AnyMessage],
    *,
    trigger: Any,
    keep: tuple[str, float] = ("messages", 20),
    token_counter: Any = None,
) -> list[BaseMessage] | None:
    """The conversation replacing ``messages`` after summarization, or ``None`` when nothing was summarized."""
    model = ProfileChatModel()
    if impl == "langchain":
        counting = {"token_counter": token_counter} if token_counter is not None else {}
        middleware = SummarizationMiddleware(model=model, trigger=trigger, keep=keep, **counting)
        result = middleware.before_model(AgentState[Any](messages=list(messages)), Runtime())
        if result is None:
            return None
        update = result["messages"]
        assert isinstance(update[0], RemoveMessage)
        return list(update[1:])
    window = 1000
    if isinstance(trigger, list):  # ours has one threshold: the token one
        trigger = next(clause for clause in trigger if clause[0] == "tokens")
    fraction = None if trigger is None else trigger[1] / (window if trigger[0] == "tokens" else 1)
    fraction = fraction if fraction is not None and fraction <= 1 else 1.0
    policy = CompactionPolicy(
        threshold=fraction,
        target=fraction / 2,
        keep_recent_messages=int(keep[1]) if keep[0] == "messages" else None,
        auto=trigger is not None,
        hard_stop=max(0.95, fraction),
    )
    ours = ContextBudgetMiddleware(max_tokens=window, policy=policy, read_back_tool=False)
    state = list(messages)
    request = ModelRequest(
        model=model,
        system_prompt=None,
        messages=state,
        tool_choice=None,
        tools=[],
        response_format=None,
        state=cast("Any", {"messages": state}),
        runtime=cast("Runtime[Any]", object()),
        model_settings={},
    )
    sent: list[BaseMessage] = []

    def handler(req: ModelRequest[Any]) -> AIMessage:
        sent.extend(req.messages)
        return AIMessage(content="ok")

    ours.wrap_model_call(request, handler)
    return None if [m.content for m in sent] == [m.content for m in messages] else sent


def _five() -> list[AnyMessage]:
    return [HumanMessage(content=str(i)) for i in range(1, 6)]


@pytest.mark.parametrize("impl", impls())
def test_summarization_middleware_no_summarization_cases(impl: str) -> None:
    state = [HumanMessage(content="Hello"), AIMessage(content="Hi")]
    assert _summarized(impl, state, trigger=None) is None  # disabled

    def mock_token_counter(_: Iterable[MessageLikeRepresentation]) -> int:
        return 500  # Below threshold

    assert _summarized(impl, state, trigger=("tokens", 1000), token_counter=mock_token_counter) is None


@pytest.mark.parametrize("impl", impls(COUNTS))
def test_summarization_middleware_profile_inference_triggers_summary(impl: str) -> None:
    def token_counter(messages: Iterable[MessageLikeRepresentation]) -> int:
        return len(list(messages)) * 200

    messages: list[AnyMessage] = [
        HumanMessage(content="Message 1"),
        AIMessage(content="Message 2"),
        HumanMessage(content="Message 3"),
        AIMessage(content="Message 4"),
    ]
    # 4 * 200 = 800 tokens; 0.81 * 1000 = 810 > 800: not triggered
    assert (
        _summarized(impl, messages, trigger=("fraction", 0.81), keep=("fraction", 0.5), token_counter=token_counter)
        is None
    )
    result = _summarized(
        impl, messages, trigger=("fraction", 0.80), keep=("fraction", 0.5), token_counter=token_counter
    )
    assert result is not None
    summary_message = result[0]
    assert isinstance(summary_message, HumanMessage)
    assert summary_message.text.startswith("Here is a summary of the conversation")
    assert [message.content for message in result[1:]] == ["Message 3", "Message 4"]


@pytest.mark.parametrize("impl", impls(COUNTS))
def test_summarization_middleware_token_retention_preserves_ai_tool_pairs(impl: str) -> None:
    def token_counter(messages: Iterable[MessageLikeRepresentation]) -> int:
        return sum(len(getattr(message, "content", "")) for message in messages)

    messages: list[AnyMessage] = [
        HumanMessage(content="H" * 300),
        AIMessage(content="A" * 200, tool_calls=[{"name": "test", "args": {}, "id": "call-1"}]),
        ToolMessage(content="T" * 50, tool_call_id="call-1"),
        HumanMessage(content="H" * 180),
        HumanMessage(content="H" * 160),
    ]
    result = _summarized(impl, messages, trigger=("fraction", 0.1), keep=("fraction", 0.5), token_counter=token_counter)
    assert result is not None
    preserved_messages = result[1:]
    assert preserved_messages == messages[1:]
    assert isinstance(preserved_messages[0], AIMessage)
    assert preserved_messages[0].tool_calls
    assert isinstance(preserved_messages[1], ToolMessage)
    assert preserved_messages[1].tool_call_id == preserved_messages[0].tool_calls[0]["id"]


@pytest.mark.parametrize("impl", impls(COUNTS))
def test_summarization_middleware_keep_messages(impl: str) -> None:
    below = [HumanMessage(content=str(i)) for i in range(1, 5)]
    assert _summarized(impl, below, trigger=("messages", 5), keep=("messages", 2)) is None
    result = _summarized(impl, _five(), trigger=("messages", 5), keep=("messages", 2))
    assert result is not None
    assert [message.type for message in result] == ["human", "human", "human"]
    assert [message.content for message in result[1:]] == ["4", "5"]
    above = [*_five(), HumanMessage(content="6")]
    result = _summarized(impl, above, trigger=("messages", 5), keep=("messages", 2))
    assert result is not None
    assert [message.content for message in result[1:]] == ["5", "6"]
    assert _summarized(impl, above, trigger=None) is None


@pytest.mark.parametrize("impl", impls(COUNTS))
def test_summarization_middleware_multiple_triggers(impl: str) -> None:
    def mock_low_tokens(_: Iterable[MessageLikeRepresentation]) -> int:
        return 100

    def mock_high_tokens(_: Iterable[MessageLikeRepresentation]) -> int:
        return 600

    triggers = [("messages", 10), ("tokens", 500)]
    five = [HumanMessage(content=str(i)) for i in range(5)]
    ten = [HumanMessage(content=str(i)) for i in range(10)]
    assert _summarized(impl, five, trigger=triggers, keep=("messages", 2), token_counter=mock_low_tokens) is None
    assert _summarized(impl, ten, trigger=triggers, keep=("messages", 2), token_counter=mock_low_tokens)
    assert _summarized(impl, five, trigger=triggers, keep=("messages", 2), token_counter=mock_high_tokens)
