"""What the fuzz tests share: the values they draw, and running one call under an alarm.

Values are arbitrary JSON-ish and Python values (``None``, bools, huge ints, NaN/inf, bytes, text with lone
surrogates and special-token strings, nested lists/dicts with non-string keys, deep nesting, plain objects). Values
hypothesis cannot print or that are costly to draw (a nest past the recursion limit, a 5,000-digit int, JSON text
nested 50,000 deep) are drawn as a :class:`Lazy` stand-in and built only when the call is made.
"""

from __future__ import annotations

import json
import math
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ctxbudget.errors import CtxBudgetError
from hypothesis import strategies as st
from pydantic import BaseModel

ALARM_SECONDS = 20
"""CPU seconds one call may burn before it counts as a hang (the slowest call takes a few ms)."""


# -- values ----------------------------------------------------------------------------------------------------------
class Opaque:
    """A plain object: not JSON, not a model, not iterable."""

    def __repr__(self) -> str:
        return "Opaque()"


class Lazy:
    """A value built only when the call is made (hypothesis prints the stand-in, not the value)."""

    def build(self) -> Any:
        """The value itself."""
        raise NotImplementedError


@dataclass(frozen=True)
class Deep(Lazy):
    """A list/dict nest ``depth`` levels deep."""

    depth: int

    def build(self) -> Any:
        value: Any = "leaf"
        for level in range(self.depth):
            value = {"k": value} if level % 2 else [value]
        return value


@dataclass(frozen=True)
class Huge(Lazy):
    """An integer of ``digits`` digits: past 4,300 neither ``repr()`` nor JSON takes it."""

    digits: int

    def build(self) -> Any:
        return 10 ** (self.digits - 1)


@dataclass(frozen=True)
class DeepText(Lazy):
    """JSON text (tool-call arguments, a transcript) nested ``depth`` levels deep: past any parser's recursion."""

    depth: int

    def build(self) -> Any:
        return "[" * self.depth + "]" * self.depth


_TEXT = st.one_of(
    st.text(max_size=40),
    st.lists(
        st.sampled_from(["a", " ", "\ud800", "\udfff", "<|endoftext|>", "\x00", "é", "😀", "</context>", "{"]),
        max_size=8,
    ).map("".join),
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=12),
    _TEXT,
    st.builds(Opaque),
    st.sampled_from([object(), math.nan, -0.0, 10**400, float("inf"), (), frozenset({1}), b"\xff", bytearray(b"x")]),
    st.sampled_from(['{"a": NaN}', '{"n": ' + "9" * 5_000 + "}", "[" * 500, "Infinity"]),
)
_KEYS = st.one_of(_TEXT, st.integers(-3, 3), st.none(), st.booleans(), st.tuples(st.integers(0, 2)))
VALUES = st.one_of(
    st.recursive(
        _SCALARS,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.tuples(children, children),
            st.dictionaries(_KEYS, children, max_size=4),
            st.dictionaries(_TEXT, children, max_size=4),
        ),
        max_leaves=12,
    ),
    st.sampled_from([Deep(60), Deep(200), DeepText(50_000)]),
)
DEEP_VALUES = st.one_of(VALUES, st.sampled_from([Deep(3000), Huge(5_000)]))
"""For JSON payload slots (metadata, arguments, block data): past Python's recursion limit, and an int past what
JSON and a snapshot hold. Elsewhere a value that deep or that long only tests ``repr()`` in error messages, which
every ``!r`` would fail (both raise); ``ctxbudget.messages._validation.short_repr`` is the bounded repr to use."""


# -- running one call ------------------------------------------------------------------------------------------------
class Hang(Exception):
    """The call burnt ``ALARM_SECONDS`` of CPU time without returning."""


@contextmanager
def alarm(seconds: float = ALARM_SECONDS) -> Iterator[None]:
    """Raise :class:`Hang` in the calling (main) thread once the block has burnt ``seconds`` of CPU time.

    Process CPU time (``ITIMER_PROF``), not wall-clock time: other work on the machine does not advance it.
    """

    def fire(signum: int, frame: Any) -> None:
        raise Hang(f"no result after {seconds} s of CPU time")

    previous = signal.signal(signal.SIGPROF, fire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


@dataclass(frozen=True)
class Entry:
    """One argument slot of one public entry point."""

    name: str
    call: Callable[[Any], object]
    allowed: tuple[type[BaseException], ...] = (CtxBudgetError,)
    seeds: tuple[Any, ...] = ()
    marks: tuple[Any, ...] = field(default=())
    deep: bool = False
    then: Callable[[Any], object] | None = None
    """Run on what the call returned (e.g. :func:`round_trips`): what was accepted must hold up."""


def check(entry: Entry, value: Any) -> None:
    """Call ``entry`` with ``value`` under the alarm: a result or an allowed (typed) error, nothing else."""
    if isinstance(value, Lazy):
        value = value.build()
    with alarm():
        try:
            result = entry.call(value)
        except entry.allowed:
            return
        if entry.then is not None:
            entry.then(result)


def round_trips(result: object) -> None:
    """A model that was accepted comes back through JSON as it was (a tuple as a list), as a snapshot carries it."""
    if isinstance(result, BaseModel):
        restored = type(result).model_validate(json.loads(result.model_dump_json()))
        assert _json_shape(restored.model_dump()) == _json_shape(result.model_dump())


def _json_shape(value: Any) -> Any:
    """``value`` as JSON shapes it: tuples as lists; NaN stands for itself (JSON would have written null)."""
    if isinstance(value, (list, tuple)):
        return [_json_shape(item) for item in value]
    if isinstance(value, dict):
        return {key: _json_shape(item) for key, item in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value
