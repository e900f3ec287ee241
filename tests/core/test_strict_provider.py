"""The shipped StrictProvider rejects what a real provider rejects, even for messages built without validation.

Issue 14 item 7: a tool call with a missing or empty id, and a result whose id answers no call, are a 400 at OpenAI
and Anthropic. ``Message`` validation already refuses empty ids, but ``model_construct`` (or a framework adapter
bug) can still produce them, and the test double must not accept what the provider would not.
"""

from __future__ import annotations

import pytest
from ctxbudget.errors import InvalidMessageError
from ctxbudget.messages import Message, ToolCall
from ctxbudget.messages.tokens import CharCounter
from ctxbudget.testing import StrictProvider, check_provider_request


def _call(call_id: str | None) -> Message:
    call = ToolCall.model_construct(id=call_id, name="grep", args={})
    return Message.model_construct(
        role="assistant", content="", tool_calls=(call,), tool_call_id=None, state="complete", metadata={}, id="a1"
    )


def _result(call_id: str | None) -> Message:
    return Message.model_construct(
        role="tool", content="r", tool_calls=(), tool_call_id=call_id, state="complete", metadata={}, id="r1"
    )


@pytest.mark.parametrize(
    "messages",
    [
        [Message(role="user", content="q"), _call(""), _result("")],
        [Message(role="user", content="q"), _call(None), _result(None)],
        [Message(role="user", content="q"), _result("nobody")],
        [Message(role="user", content="q"), _call("c1"), _result("c1"), _result("")],
    ],
    ids=["empty-ids", "missing-ids", "result-answers-no-call", "extra-result-without-id"],
)
def test_strict_provider_rejects_missing_ids_and_unmatched_results(messages: list[Message]) -> None:
    provider = StrictProvider(max_tokens=10_000, counter=CharCounter())
    with pytest.raises(InvalidMessageError, match="messages"):
        provider.complete(messages)


def test_a_valid_pair_is_accepted() -> None:
    messages = [Message(role="user", content="q"), _call("c1"), _result("c1")]
    assert check_provider_request(messages, max_tokens=10_000, counter=CharCounter()) > 0
