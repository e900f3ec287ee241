"""Reading a span costs what the span holds, not what the history around it holds (hostile review 6).

A cleared tool output's key lines are read as a span of one message beside the session's calls by id, once per
output cleared: copying those mappings for each read made clearing quadratic in the history's length.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ctxbudget import Message, ToolCall
from ctxbudget.compaction.salience import salient_items


class Untouchable(Mapping[str, ToolCall]):
    """Calls by id that may be looked up but never iterated, copied or measured."""

    def __init__(self, calls: dict[str, ToolCall]) -> None:
        self._calls = calls
        self.lookups = 0

    def __getitem__(self, key: str) -> ToolCall:
        self.lookups += 1
        return self._calls[key]

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("the history's calls were iterated (copied) to read one message")

    def __len__(self) -> int:
        raise AssertionError("the history's calls were measured to read one message")

    def __bool__(self) -> bool:
        return True


def test_a_span_of_one_output_reads_the_history_calls_without_copying_them() -> None:
    history = {f"c{i}": ToolCall(id=f"c{i}", name="Bash", args={"command": f"cat m{i}.py"}) for i in range(5_000)}
    calls = Untouchable(history)
    output = Message(role="tool", tool_call_id="c4999", content="Traceback (most recent call last):\nKeyError: 'a'")
    items = salient_items([output], calls=calls)
    assert calls.lookups >= 1  # the call it answers was found, by id
    assert any("KeyError: 'a'" in item.text for item in items)


def test_the_spans_own_calls_win_over_those_outside_it() -> None:
    outside = {"c1": ToolCall(id="c1", name="Bash", args={"command": "cat old.py"})}
    own = Message(role="assistant", tool_calls=(ToolCall(id="c1", name="Bash", args={"command": "pytest -q"}),))
    result = Message(
        role="tool", tool_call_id="c1", content="1 failed, 2 passed\nExit code 1", metadata={"is_error": True}
    )
    texts = [item.text for item in salient_items([own, result], calls=outside)]
    assert any("pytest -q" in text for text in texts)
    assert not any("cat old.py" in text for text in texts)
