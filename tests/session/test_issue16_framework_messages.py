"""A LangChain or LlamaIndex message handed to the core fails short and names the adapter's converter (issue 16).

The core never imports a framework: it recognises their messages by class, and refuses them with an
``InvalidMessageError`` naming the argument, instead of a pydantic dump of the object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from ctxbudget import ContextSession, Message
from ctxbudget.errors import InvalidMessageError
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from llama_index.core.llms import ChatMessage

LC = "langchain_ctxbudget.from_langchain(message)"
LI = "llamaindex_ctxbudget.from_chat_message(message)"
NO_ID = "message (no id):"
ITEM_0 = f"{NO_ID} content: item 0: expected a content block"


def _session() -> ContextSession:
    return ContextSession(model="gpt-4o", max_tokens=8_000)


def _case(name: str, call: Callable[[ContextSession], Any], field: str, start: str, converter: str) -> Any:
    return pytest.param(call, field, start, converter, id=name)


CASES = [
    _case("add-lc", lambda s: s.add(HumanMessage("hi")), "message", "message: expected ctxbudget.Message", LC),
    _case("add-li", lambda s: s.add(ChatMessage(content="hi")), "message", "message: expected ctxbudget.Message", LI),
    _case("add-user-lc", lambda s: s.add_user(HumanMessage("hi")), "text", "text: expected a str", LC),
    _case("add-user-li", lambda s: s.add_user(ChatMessage(content="hi")), "text", "text: expected a str", LI),
    _case("add-assistant", lambda s: s.add_assistant(AIMessage("x")), "text", "text: expected a str", LC),
    _case("tool", lambda s: s.add_tool_result("c", ToolMessage("r", tool_call_id="c")), "content", "content", LC),
    _case("sync-item-lc", lambda s: s.sync([HumanMessage("hi")]), "messages[0]", "messages[0]: expected", LC),
    _case("sync-item-li", lambda s: s.sync([ChatMessage(content="hi")]), "messages[0]", "messages[0]: expected", LI),
    _case("sync-one-lc", lambda s: s.sync(HumanMessage("hi")), "messages", "messages: expected a sequence", LC),
    _case("message-lc", lambda _: Message(role="user", content=HumanMessage("hi")), "content", f"{NO_ID} content:", LC),
    _case("message-li", lambda _: Message(role="user", content=ChatMessage()), "content", f"{NO_ID} content:", LI),
    _case("message-block", lambda _: Message(role="user", content=[SystemMessage("s")]), "content", ITEM_0, LC),
    _case("validate-lc", lambda _: Message.model_validate(HumanMessage("hi")), "", f"{NO_ID} expected a mapping", LC),
]  # fmt: skip


@pytest.mark.parametrize(("call", "field", "start", "converter"), CASES)
def test_a_framework_message_in_the_core_names_the_argument_and_the_converter(
    call: Callable[[ContextSession], Any], field: str, start: str, converter: str
) -> None:
    session = _session()
    with pytest.raises(InvalidMessageError) as caught:
        call(session)

    message = str(caught.value)
    assert message.startswith(start)
    assert converter in message
    assert caught.value.field == (field or None)
    assert len(message) < 200, "short: no dump of the object"
    assert "additional_kwargs" not in message
    assert session.history == []  # nothing changed


def test_the_converted_message_is_accepted_where_the_error_points() -> None:
    from langchain_ctxbudget import from_langchain
    from llamaindex_ctxbudget import from_chat_message

    session = _session()
    session.add(from_langchain(HumanMessage("from langchain")))
    session.add(from_chat_message(ChatMessage(role="assistant", content="from llamaindex")))
    assert [m.text for m in session.history] == ["from langchain", "from llamaindex"]


class HumanMessageLookalike:
    """A class named like LangChain's, from elsewhere: not recognised as a framework message."""


def test_only_framework_classes_are_recognised() -> None:
    with pytest.raises(InvalidMessageError) as caught:
        _session().add(HumanMessageLookalike())  # type: ignore[arg-type]
    assert str(caught.value) == "message: expected ctxbudget.Message, got HumanMessageLookalike"
