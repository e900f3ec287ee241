"""Reading a message for compaction costs time linear in its length, whatever the text (issue 26, finding 1).

A user message holding a run of letters without digits once made compaction quadratic in the run (5,000 chars:
1.3 s; 60,000: 295 s): a pattern retried its greedy part from every start position inside the run. These tests count
what the regular expressions of ctxbudget are given, instead of timing them: every compiled pattern of the package
is wrapped, and each call records the characters it may scan and the longest run without a space among them. A
pattern that can retry within a run then only ever meets runs of at most ``MAX_RUN`` characters (the run-splitting
patterns themselves are single character classes, linear on any input), and the characters scanned grow with the
message, not with its square.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from ctxbudget import ContextSession, Message, TiktokenCounter, ToolCall
from ctxbudget.compaction.textscan import MAX_RUN

COUNTER = TiktokenCounter()
LINEAR_ON_ANY_INPUT = {
    r"[\w$€£~][\w./:@#%$€£+~'-]*",  # textscan._RUN: one character class after the first
    rf"(?<!\S)\S{{{MAX_RUN + 1},}}",  # _bounds._LONG_RUN: what bounds runs
    r"(?<![ \t])[ \t]{16,}",  # _bounds._LONG_SPACE
    r"[A-Za-z]+",  # textscan._WORDS
    r"\n(?=[^\s/])",  # TiktokenCounter's line cut: one character and one looked at after it
}
"""Patterns whose cost is linear in their input however long its runs are (a run of one class, tried at run starts)."""


def _linear(pattern: str) -> bool:
    """One of the patterns above, or a single character class (``[\\ud800-\\udfff]``): linear on any input."""
    return pattern in LINEAR_ON_ANY_INPUT or re.fullmatch(r"\[[^\[\]]+\][+*]?", pattern) is not None


@dataclass
class Reads:
    chars: int = 0
    longest: dict[str, int] = field(default_factory=dict)


class _Counting:
    """A compiled pattern that records what it is asked to scan, then does it."""

    def __init__(self, pattern: re.Pattern[str], reads: Reads) -> None:
        self._pattern = pattern
        self._reads = reads
        self.pattern = pattern.pattern
        self.flags = pattern.flags
        self.groups = pattern.groups
        self.groupindex = pattern.groupindex

    def _record(self, string: Any, pos: int = 0, endpos: int | None = None) -> None:
        if isinstance(string, str):
            region = string[pos:endpos]
            self._reads.chars += len(region)
            run = max(map(len, region.split()), default=0)
            key = self._pattern.pattern
            self._reads.longest[key] = max(run, self._reads.longest.get(key, 0))

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._pattern, name)
        if name in ("search", "match", "fullmatch", "finditer", "findall", "split"):

            def counted(string: Any, *args: Any, **kwargs: Any) -> Any:
                self._record(string, *args[:2]) if name != "split" else self._record(string)
                return method(string, *args, **kwargs)

            return counted
        if name in ("sub", "subn"):

            def replaced(repl: Any, string: Any, *args: Any, **kwargs: Any) -> Any:
                self._record(string)
                return method(repl, string, *args, **kwargs)

            return replaced
        return method


@contextmanager
def counted() -> Iterator[Reads]:
    """Every module-level compiled pattern of the loaded ctxbudget modules, counting, for the block."""
    reads = Reads()
    swapped: list[tuple[Any, str, Any]] = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("ctxbudget") or module is None:
            continue
        for attribute, value in list(vars(module).items()):
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                swapped.append((module, attribute, value))
                setattr(module, attribute, _Counting(value, reads))
            elif (
                isinstance(value, tuple)
                and value
                and all(isinstance(entry, tuple) and entry and isinstance(entry[0], re.Pattern) for entry in value)
            ):
                swapped.append((module, attribute, value))
                setattr(module, attribute, tuple((_Counting(p, reads), *rest) for p, *rest in value))
    try:
        yield reads
    finally:
        for module, attribute, value in swapped:
            setattr(module, attribute, value)


def _compact_a_message_with_a_run(length: int) -> Reads:
    session = ContextSession(max_tokens=16_000, counter=COUNTER)
    session.add_user(f"Keep this: {'x' * length} and the rest of what I said: the deploy region is eu-west-3.")
    for turn in range(4):
        call = ToolCall(id=f"c{turn}", name="bash", args={"command": f"cat notes_{turn}.txt"})
        session.add_assistant(tool_calls=[call])
        session.add_tool_result(call.id, f"line of output {turn}\n" * 200, name="bash")
        session.add_user(f"next step {turn}")
    with counted() as reads:
        session.compact()
    return reads


@pytest.mark.parametrize("length", [20_000, 60_000])
def test_no_pattern_that_can_retry_within_a_run_ever_meets_a_long_run(length: int) -> None:
    reads = _compact_a_message_with_a_run(length)
    assert reads.longest, "no pattern was counted"
    too_long = {p: n for p, n in reads.longest.items() if n > MAX_RUN + 1 and not _linear(p)}
    assert not too_long, too_long


def test_the_characters_read_grow_with_the_message_not_with_its_square() -> None:
    small, large = _compact_a_message_with_a_run(15_000), _compact_a_message_with_a_run(60_000)
    assert large.chars <= 4.5 * small.chars, (small.chars, large.chars)


def test_the_counting_itself_sees_what_a_pattern_is_given() -> None:
    reads = Reads()
    pattern = _Counting(re.compile(r"a+b"), reads)
    assert pattern.search("xx aaaa", 0) is None
    assert reads.chars == 7
    assert reads.longest["a+b"] == 4
    assert [m.group(0) for m in pattern.finditer("ab aab")] == ["ab", "aab"]
    assert Message(role="user", content="x").text == "x"
