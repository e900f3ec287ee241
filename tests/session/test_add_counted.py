"""``ContextSession.add_counted``: messages a caller counted already are added with those counts, not counted again.

Everything else is :meth:`ContextSession.add`'s: the same history, sizes, total and bounding of an oversized output
(decided from the count given).
"""

from __future__ import annotations

from typing import Any

import pytest
from ctxbudget import ContextSession, Message, ToolCall
from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.errors import InvalidMessageError
from ctxbudget.messages.tokens import TiktokenCounter


class Counting(TiktokenCounter):
    def __init__(self) -> None:
        super().__init__()
        self.counted: list[str] = []

    def count_message(self, message: Message) -> int:
        self.counted.append(message.id)
        return super().count_message(message)


def _turn() -> list[Message]:
    return [
        Message(role="user", content="find the retry setting", id="u"),
        Message(role="assistant", tool_calls=(ToolCall(id="c1", name="grep", args={"q": "retry"}),), id="a"),
        Message(role="tool", tool_call_id="c1", content="src/retry.py:12: RETRIES = 3\n" * 400, id="t"),
        Message(role="assistant", content="RETRIES is 3, in src/retry.py.", id="f"),
    ]


@pytest.mark.parametrize("limit", [None, 500])
def test_adding_counted_messages_is_adding_them_without_counting_them_again(limit: int | None) -> None:
    policy = CompactionPolicy(max_tool_output_tokens=limit)
    exact = TiktokenCounter()
    sizes = [exact.count_message(m) for m in _turn()]
    counted, plain = Counting(), ContextSession(max_tokens=100_000, policy=policy)
    session = ContextSession(max_tokens=100_000, counter=counted, policy=policy)
    session.add_counted(_turn(), sizes)
    plain.add(*_turn())
    assert not {"u", "a", "f"} & set(counted.counted)
    assert counted.counted.count("t") == (0 if limit is None else 1)  # only its bounded copy, when bounded
    assert [m.text for m in session.history] == [m.text for m in plain.history]
    assert session.conversation.live.sizes == plain.conversation.live.sizes
    assert session.counted_tokens() == plain.counted_tokens()
    assert (limit is not None) == (session.history[2].text != _turn()[2].text)  # bounded when over the limit


@pytest.mark.parametrize(
    ("messages", "sizes", "field"),
    [
        (_turn()[:1], [], "sizes"),
        (_turn()[:1], [-1], "sizes"),
        (_turn()[:1], [True], "sizes"),
        (_turn()[:1], "5", "sizes"),
        ("not messages", [1], "messages"),
        ([{"role": "user", "content": "x"}], [1], "messages[0]"),
    ],
)
def test_wrong_arguments_are_typed_errors_and_add_nothing(messages: Any, sizes: Any, field: str) -> None:
    session = ContextSession(max_tokens=100_000)
    with pytest.raises(InvalidMessageError) as raised:
        session.add_counted(messages, sizes)
    assert raised.value.field == field
    assert session.history == []
