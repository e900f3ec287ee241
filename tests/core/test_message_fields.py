"""Message/ToolCall/ToolSchema fields that could never be sent or persisted are refused when built (issue 14 item 16).

Each used to be accepted and fail later, raw (``snapshot().to_json()``, counting), or to fail raw at once
(``TypeError``, ``RecursionError``). Now: :class:`InvalidMessageError`, naming the field and where inside it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from ctxbudget.errors import InvalidMessageError
from ctxbudget.messages import Message, ToolCall, ToolSchema
from ctxbudget.messages.tokens import CharCounter
from ctxbudget.session import ContextSession


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


CASES: list[Any] = [
    ("metadata-bytes", lambda: Message(role="user", metadata={"a": b"x"}), "metadata.a holds a 'bytes' value"),
    ("metadata-object", lambda: Message(role="user", metadata={"a": [object()]}), "metadata.a[0] holds a 'object'"),
    ("metadata-nested-int-key", lambda: Message(role="user", metadata={"a": {1: "x"}}), "keys must be strings"),
    ("metadata-3000-deep", lambda: Message(role="user", metadata=_deep(3000)), "metadata: nested more than 100"),
    ("metadata-surrogate-key", lambda: Message(role="user", metadata={"a": {"\ud800": 1}}), "metadata: contains"),
    ("args-object", lambda: ToolCall(id="c", name="n", args={"a": object()}), "args: args.a holds a 'object'"),
    ("args-3000-deep", lambda: ToolCall(id="c", name="n", args=_deep(3000)), "args: nested more than 100"),
    ("args-set", lambda: ToolCall(id="c", name="n", args={"a": {1, 2}}), "args.a holds a 'set' value"),
    ("tool-call-id-surrogate", lambda: Message(role="tool", tool_call_id="c\ud800", content="r"), "tool_call_id:"),
    ("tool-calls-int-key", lambda: Message(role="assistant", tool_calls=[{1: "x"}]), "tool_calls: item 0"),
    ("content-int-key", lambda: Message(role="user", content=[{1: "x"}]), "content: item 0"),
    ("block-data-bytes", lambda: Message(role="user", content=[{"type": "image", "data": {"b": b"x"}}]), "content"),
    ("schema-parameters-object", lambda: ToolSchema(name="n", parameters={"a": object()}), "parameters: parameters.a"),
    ("schema-from-none", lambda: ToolSchema.from_openai(None), "tool spec: expected an OpenAI tool spec"),
    ("schema-without-name", lambda: ToolSchema.from_openai({}), "tool spec: 'name' is missing"),
    ("model-validate-int-key", lambda: Message.model_validate({1: "x"}), "keys must be field names"),
]


@pytest.mark.parametrize(("build", "expected"), [pytest.param(b, e, id=i) for i, b, e in CASES])
def test_unsendable_fields_are_refused_naming_the_field(build: Callable[[], object], expected: str) -> None:
    with pytest.raises(InvalidMessageError) as info:
        build()
    assert expected in str(info.value)


def test_what_a_message_accepts_survives_a_snapshot_round_trip() -> None:
    metadata = {"a": [1, 2.5, None, True, {"b": "é😀"}], "deep": _deep(90)}
    session = ContextSession(max_tokens=4_000, counter=CharCounter())
    session.add(Message(role="user", content="q", metadata=metadata, id="u1"))
    session.add_assistant(tool_calls=[ToolCall(id="c1", name="n", args={"x": _deep(90)})])
    restored = ContextSession.restore(session.snapshot().to_json(), counter=CharCounter())
    assert restored.history[0].metadata == metadata
