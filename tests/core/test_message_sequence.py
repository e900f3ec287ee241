"""MessageSequence behaves exactly like the tuple it stands for, without copying the history."""

from __future__ import annotations

from ctxbudget.messages import Message, MessageSequence
from hypothesis import given
from hypothesis import strategies as st

HISTORY = [Message(role="user", content=f"m{i}", id=f"h{i}") for i in range(12)]
PREFIX = [Message(role="system", content="s", id="p0"), Message(role="user", content="summary", id="p1")]


@given(
    prefix=st.integers(0, 2),
    length=st.integers(0, 12),
    start=st.none() | st.integers(-20, 20),
    stop=st.none() | st.integers(-20, 20),
    step=st.none() | st.integers(1, 3) | st.integers(-3, -1),
)
def test_a_view_indexes_slices_and_iterates_like_its_tuple(
    prefix: int, length: int, start: int | None, stop: int | None, step: int | None
) -> None:
    view = MessageSequence(PREFIX[:prefix], HISTORY, length)
    expected = (*PREFIX[:prefix], *HISTORY[:length])
    assert len(view) == len(expected)
    assert tuple(view) == expected
    assert view == expected
    assert view[start:stop:step] == expected[start:stop:step]
    for index in range(-len(expected), len(expected)):
        assert view[index] is expected[index]


def test_appending_to_the_history_does_not_change_an_earlier_view() -> None:
    history = list(HISTORY[:3])
    view = MessageSequence(PREFIX, history)
    history.append(HISTORY[3])
    assert len(view) == 5
    assert tuple(view)[-1] is HISTORY[2]
