"""What JSON or a snapshot cannot hold is refused where it enters, with a typed error naming the field (issue 26).

A value a message cannot be written and read back with (JSON nested past 100 levels, an integer past 4,300 digits,
``NaN``/``Infinity``, a lone surrogate) used to be accepted and fail later, raw: tool-call ``arguments`` nested
50,000 deep raised ``RecursionError`` in the OpenAI converters, a 5,000-digit int in metadata was accepted by
``add_user`` and raised ``ValueError`` in ``snapshot().to_json()`` and ``SharedSession.add``, and ``NaN`` in
metadata was written as ``null`` (silently lost). Every converter and metadata path goes through one check
(``ctxbudget.messages._validation``); text that is not JSON at all stays what it was: kept as spelled, never refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from ctxbudget import ContextSession, Message, ToolCall
from ctxbudget.context.fragments import Fragment
from ctxbudget.errors import CtxBudgetError, InvalidFragmentError, InvalidMessageError, SnapshotFormatError
from ctxbudget.messages.tokens import CharCounter
from ctxbudget.providers import (
    message_to_openai,
    messages_from_anthropic,
    messages_from_openai,
    messages_from_responses,
    messages_to_responses,
)
from ctxbudget.session.snapshot import SessionSnapshot
from ctxbudget.shared_session import SharedSession
from ctxbudget.stores import InMemorySnapshotStore
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock

from llamaindex_ctxbudget import BudgetedMemory, from_chat_message

DEEP_TEXT = "[" * 50_000 + "]" * 50_000
HUGE = 10**5_000
HUGE_TEXT = '{"n": ' + "9" * 5_000 + "}"


def _chat_call(arguments: str) -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _responses_call(arguments: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": "c1", "name": "f", "arguments": arguments}


def _llamaindex_call(arguments: str) -> ChatMessage:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [call]})


def _session() -> ContextSession:
    return ContextSession(max_tokens=100_000, counter=CharCounter())


def _shared() -> SharedSession:
    store = InMemorySnapshotStore()
    return SharedSession.create(store, _session())


def _tool_use(tool_input: Any) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": tool_input}]}]


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


# (case id, the call, the error type, what its message must name)
REFUSED: list[tuple[str, Callable[[], object], type[CtxBudgetError], str]] = [
    ("chat-deep-arguments", lambda: messages_from_openai([_chat_call(DEEP_TEXT)]), InvalidMessageError,
     "messages[0].tool_calls[0].function.arguments: nested more than 100 levels deep"),
    ("responses-deep-arguments", lambda: messages_from_responses([_responses_call(DEEP_TEXT)]), InvalidMessageError,
     "input[0].arguments: nested more than 100 levels deep"),
    ("add-openai-deep-arguments", lambda: _session().add_openai(_chat_call(DEEP_TEXT)), InvalidMessageError,
     "function.arguments: nested more than 100 levels deep"),
    ("add-openai-responses-deep", lambda: _session().add_openai(_responses_call(DEEP_TEXT)), InvalidMessageError,
     "input[0].arguments: nested more than 100 levels deep"),
    ("chat-huge-int-arguments", lambda: messages_from_openai([_chat_call(HUGE_TEXT)]), InvalidMessageError,
     "function.arguments: holds an integer of more than 4,300 digits"),
    ("anthropic-huge-int-input", lambda: messages_from_anthropic(_tool_use({"n": HUGE})), InvalidMessageError,
     "args.n holds an integer of about 5,001 digits"),
    ("anthropic-deep-input", lambda: messages_from_anthropic(_tool_use({"n": _deep(5_000)})), InvalidMessageError,
     "args: nested more than 100 levels deep"),
    ("chat-lone-surrogate-escape", lambda: messages_from_openai([_chat_call('{"a": "\\ud800"}')]),
     InvalidMessageError, "contains an unpaired surrogate"),
    ("add-user-huge-int", lambda: _session().add_user("x", k=HUGE), InvalidMessageError,
     "metadata: metadata.k holds an integer of about 5,001 digits"),
    ("add-user-nested-huge-int", lambda: _session().add_user("x", k=[{"n": -HUGE}]), InvalidMessageError,
     "metadata.k[0].n holds an integer"),
    ("add-user-nan", lambda: _session().add_user("x", k=float("nan")), InvalidMessageError,
     "metadata.k holds nan, which is not a JSON value"),
    ("add-user-infinity", lambda: _session().add_user("x", k=[float("-inf")]), InvalidMessageError,
     "metadata.k[0] holds -inf"),
    ("tool-call-args-nan", lambda: ToolCall(id="c", name="f", args={"x": float("inf")}), InvalidMessageError,
     "args.x holds inf"),
    ("block-data-huge-int", lambda: Message(role="user", content=[{"type": "image", "data": {"n": HUGE}}]),
     InvalidMessageError, "data.n holds an integer"),
    ("fragment-metadata-huge-int", lambda: Fragment(id="f", source_id="s", trust="user", value="v", metadata={
        "k": HUGE
    }), InvalidFragmentError, "fragment 'f': metadata: metadata.k holds an integer"),
    ("fragment-metadata-nan", lambda: Fragment(id="f", source_id="s", trust="user", value="v", metadata={
        "k": [float("nan")]
    }), InvalidFragmentError, "metadata.k[0] holds nan"),
    ("shared-add-user-huge-int", lambda: _shared().add_user("x", k=HUGE), InvalidMessageError,
     "metadata.k holds an integer"),
    ("llamaindex-deep-arguments", lambda: from_chat_message(_llamaindex_call(DEEP_TEXT)), InvalidMessageError,
     "tool_calls[0].arguments: nested more than 100 levels deep"),
    ("llamaindex-block-huge-int", lambda: from_chat_message(ChatMessage(
        role="assistant", blocks=[ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs={"n": HUGE})]
    )), InvalidMessageError, "args.n holds an integer"),
    ("llamaindex-memory-put-deep", lambda: BudgetedMemory.from_defaults(max_tokens=8_000).put(
        _llamaindex_call(DEEP_TEXT)
    ), InvalidMessageError, "nested more than 100 levels deep"),
    ("snapshot-json-huge-int", lambda: SessionSnapshot.from_json(
        _with(Message(role="user", content="q")).snapshot().to_json().replace(
            '"metadata":{}', '"metadata":{"n":' + "9" * 5_000 + "}", 1
        )
    ), SnapshotFormatError, "number out of range"),  # a guard: pydantic's parser refuses it
]  # fmt: skip


@pytest.mark.parametrize(("build", "error", "named"), [pytest.param(*case[1:], id=case[0]) for case in REFUSED])
def test_what_json_or_a_snapshot_cannot_hold_is_refused_where_it_enters(
    build: Callable[[], object], error: type[CtxBudgetError], named: str
) -> None:
    with pytest.raises(error) as caught:
        build()
    assert named in str(caught.value)


def test_the_error_names_the_field() -> None:
    with pytest.raises(InvalidMessageError) as caught:
        _session().add_user("x", k=HUGE)
    assert caught.value.field == "metadata"
    with pytest.raises(InvalidMessageError) as caught:
        ToolCall(id="c", name="f", args={"x": float("nan")})
    assert caught.value.field == "args"


@pytest.mark.parametrize(
    "arguments",
    ['{"x": NaN}', '{"x": Infinity}', '{"x": 1', "not json", "[1, 2]"],
    ids=["nan", "infinity", "truncated", "text", "array"],
)
def test_arguments_that_are_not_a_json_object_are_kept_as_spelled(arguments: str) -> None:
    (message,) = messages_from_openai([_chat_call(arguments)])
    assert message.tool_calls[0].args == {}
    assert message_to_openai(message)["tool_calls"][0]["function"]["arguments"] == arguments
    restored = ContextSession.restore(_with(message).snapshot().to_json(), counter=CharCounter())
    assert message_to_openai(restored.history[-1]) == message_to_openai(message)


def _with(message: Message) -> ContextSession:
    session = _session()
    session.add_user("q")
    session.add(message)
    return session


def test_what_is_accepted_at_the_limits_survives_a_snapshot_and_a_shared_log() -> None:
    largest = 10**4_300 - 1  # 4,300 digits
    arguments = "[" * 99 + "1" + "]" * 99  # 100 levels with the object around it
    (call,) = messages_from_openai([_chat_call('{"a": ' + arguments + "}")])
    message = Message(role="user", content="q", metadata={"big": largest, "small": -largest, "f": 1e308})
    session = _session()
    session.add(message)
    session.add(call)
    restored = ContextSession.restore(session.snapshot().to_json(), counter=CharCounter())
    assert restored.history[0].metadata == message.metadata
    assert restored.history[1].tool_calls == call.tool_calls
    shared = _shared()
    shared.add(message, call)
    assert [m.id for m in shared.originals()] == [message.id, call.id]


def test_a_stored_deep_arguments_spelling_is_never_parsed_raw() -> None:
    """Extras hold the original spelling; one edited to nest too deep is not sent (the arguments held are)."""
    call = ToolCall(id="c1", name="f", args={"a": 1})
    extras = {"provider": {"openai_chat": {"calls": {"c1": {"arguments": DEEP_TEXT}}}}}
    message = Message(role="assistant", tool_calls=[call], metadata=extras)
    assert message_to_openai(message)["tool_calls"][0]["function"]["arguments"] == '{"a":1}'
    assert messages_to_responses([message])[0]["arguments"] == '{"a":1}'


def test_a_message_built_past_validation_is_a_typed_error_when_saved() -> None:
    valid = Message(role="user", content="fine", id="sneaky")
    sneaky = Message.model_construct(**{**dict(valid), "metadata": {"n": HUGE}})
    session = _session()
    session.add(sneaky)
    with pytest.raises(SnapshotFormatError, match=r"history\.0: metadata: metadata\.n holds an integer"):
        session.snapshot().to_json()
    with pytest.raises(InvalidMessageError, match=r"messages\[0\]: cannot be serialized: metadata"):
        _shared().add(Message.model_construct(**{**dict(valid), "metadata": {"n": float("nan")}}))
