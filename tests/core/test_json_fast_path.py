"""The flat-dict fast path of the JSON check accepts exactly what the general walk accepts, never more.

Message metadata and most tool arguments are flat dicts of ASCII strings and scalars; they skip the walk. Any dict
the fast path lets through must be one the walk would have let through, and everything else still meets the walk,
with its typed error naming the field.
"""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import pytest
from ctxbudget.errors import InvalidMessageError
from ctxbudget.messages import Message, ToolCall, _validation
from hypothesis import given
from hypothesis import strategies as st

_SCALARS = st.one_of(st.text(max_size=8), st.integers(), st.floats(), st.booleans(), st.none())
_VALUES = st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3), st.binary(max_size=4), st.sets(st.integers(), max_size=2))
_KEYS = st.one_of(st.text(max_size=8), st.integers(), st.none())


def _walk_accepts(value: Any) -> bool:
    with patch.object(_validation, "_flat_ascii", lambda _value: False):
        try:
            _validation.check_json("metadata", value)
        except ValueError:
            return False
    return True


@given(st.dictionaries(_KEYS, _VALUES, max_size=4))
def test_what_the_fast_path_accepts_the_walk_accepts(value: dict[Any, Any]) -> None:
    if _validation._flat_ascii(value):
        assert _walk_accepts(value)


@given(st.dictionaries(st.text(max_size=8), st.one_of(_SCALARS, st.binary(max_size=4)), max_size=4))
def test_a_message_is_accepted_or_refused_as_the_walk_decides(metadata: dict[str, Any]) -> None:
    if _walk_accepts(metadata):
        assert Message(role="user", content="hi", metadata=metadata).metadata == metadata
    else:
        with pytest.raises(InvalidMessageError) as caught:
            Message(role="user", content="hi", metadata=metadata)
        assert caught.value.field == "metadata"


@pytest.mark.parametrize(
    "args",
    [{"path": "caf\u00e9"}, {"n": [1, 2]}, {"bad": "\ud800"}, {"x": b"raw"}],
    ids=["non-ascii", "nested", "lone-surrogate", "bytes"],
)
def test_arguments_off_the_fast_path_still_meet_the_walk(args: dict[str, Any]) -> None:
    accepted = _walk_accepts(args)
    if accepted:
        assert ToolCall(id="c1", name="grep", args=args).args == args
    else:
        with pytest.raises(InvalidMessageError, match="args"):
            ToolCall(id="c1", name="grep", args=args)
