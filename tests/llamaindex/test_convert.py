"""ChatMessage <-> Message: every tool-call shape, tool results, roles, ids, and the identity-preserving cache."""

from __future__ import annotations

from types import SimpleNamespace

from ctxbudget import Message, ToolCall
from llama_index.core.base.llms.types import ImageBlock, TextBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage

from llamaindex_ctxbudget import ChatMessageConverter, from_chat_message, to_chat_message, tool_calls_of


def test_openai_dict_calls() -> None:
    chat = ChatMessage(
        role="assistant",
        content="",
        additional_kwargs={
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "grep", "arguments": '{"q": "x"}'}},
                {"id": "b", "type": "function", "function": {"name": "ls", "arguments": "not json"}},
            ]
        },
    )
    message = from_chat_message(chat)
    assert message.tool_calls == (
        ToolCall(id="a", name="grep", args={"q": "x"}),
        ToolCall(id="b", name="ls", args={"_raw_arguments": "not json"}),
    )


def test_sdk_objects_blocks_and_anthropic_dicts() -> None:
    sdk = SimpleNamespace(id="s1", function=SimpleNamespace(name="run", arguments='{"n": 1}'))
    chat = ChatMessage(
        role="assistant",
        blocks=[TextBlock(text="calling"), ToolCallBlock(tool_call_id="b1", tool_name="read", tool_kwargs={"p": "a"})],
        additional_kwargs={
            "tool_calls": [sdk, {"id": "t1", "name": "find", "input": {"k": 2}}, {"id": "b1", "name": "read"}]
        },
    )
    message = from_chat_message(chat)
    assert [(c.id, c.name, c.args) for c in message.tool_calls] == [
        ("b1", "read", {"p": "a"}),
        ("s1", "run", {"n": 1}),
        ("t1", "find", {"k": 2}),
    ]
    assert message.text == "calling"
    assert tool_calls_of(chat) == message.tool_calls


def test_roles_results_and_opaque_blocks() -> None:
    result = from_chat_message(
        ChatMessage(role="tool", content="42", additional_kwargs={"tool_call_id": "a", "name": "calc"})
    )
    assert (result.role, result.tool_call_id, result.name, result.text) == ("tool", "a", "calc", "42")
    orphan = from_chat_message(ChatMessage(role="tool", content="no id"))  # answers no call: kept, never sent
    assert (orphan.role, orphan.text) == ("tool", "no id")
    assert orphan.tool_call_id is not None
    assert orphan.tool_call_id.startswith("ctxbudget-no-call:")
    assert from_chat_message(ChatMessage(role="developer", content="d")).role == "system"
    assert from_chat_message(ChatMessage(role="chatbot", content="c")).role == "assistant"
    image = from_chat_message(
        ChatMessage(role="user", blocks=[TextBlock(text="see"), ImageBlock(url="http://x/y.png")])
    )
    assert isinstance(image.content, tuple)
    assert image.text == "see"
    assert image.content[1].type == "image"


def test_ids_only_when_asked() -> None:
    message = Message(role="assistant", content="x", tool_calls=(ToolCall(id="c", name="f", args={"a": 1}),))
    plain = to_chat_message(message)
    assert "ctxbudget_id" not in plain.additional_kwargs  # integrations copy additional_kwargs onto the wire
    assert plain.additional_kwargs["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a":1}'}
    with_id = to_chat_message(message, include_id=True)
    assert from_chat_message(with_id).id == message.id
    assert from_chat_message(with_id).tool_calls == message.tool_calls


def test_converter_returns_originals_and_copies_changed_messages() -> None:
    converter = ChatMessageConverter()
    chat = ChatMessage(role="tool", content="long output " * 100, additional_kwargs={"tool_call_id": "a"})
    message = converter.to_message(chat)
    assert converter.to_message(chat) is message  # cached by identity
    assert converter.to_chat(message) is chat  # unchanged: the very original
    bounded = message.with_content("short", ctxbudget_archived="ctx://archive/x")
    copy = converter.to_chat(bounded)
    assert copy is not chat
    assert (copy.content, copy.additional_kwargs) == ("short", {"tool_call_id": "a"})
    assert converter.to_chat(bounded) is copy
    assert chat.content == "long output " * 100
