"""What ``ctxbudget inspect`` tallies as the transcript streams by.

Tokens by role and by tool, the largest items, tool-pairing problems and late system messages.

Each message is seen once, with its token count; what is kept is bounded by the number of roles and tools, the
``top`` largest items and the first :data:`MAX_DETAILS` problems (plus the ids of tool calls not yet answered).
The pairing check is :func:`~ctxbudget.messages.toolpairs.find_tool_pair_problems`'s rule, applied one message at a
time.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable
from typing import Any

from ..messages.message import Message
from ..messages.toolpairs import ToolPairProblem

__all__ = ["MAX_DETAILS", "PairCheck", "Tally"]

MAX_DETAILS = 50
"""Problems (and late system messages) listed by index; the counts cover them all."""
_PREVIEW = 80


class PairCheck:
    """The strict provider rule, one message at a time: every call answered right after its message, once."""

    def __init__(self) -> None:
        self.count = 0
        self.problems: list[ToolPairProblem] = []
        self._open: dict[str, tuple[int, str]] = {}  # call id -> (index, message id) of the current run
        self._answered: set[str] = set()

    def add(self, index: int, message: Message) -> None:
        """Check ``message`` (at ``index``) against the run before it."""
        if message.role == "tool":
            call_id = message.tool_call_id or ""
            if call_id in self._open:
                del self._open[call_id]
                self._answered.add(call_id)
            else:
                kind = "duplicate_result" if call_id in self._answered else "orphaned_result"
                self._problem(ToolPairProblem(kind=kind, index=index, message_id=message.id, call_id=call_id))
            return
        self._close()
        self._answered = set()
        if message.role == "assistant":
            self._open = {call.id: (index, message.id) for call in message.tool_calls}

    def finish(self) -> None:
        """The end of the transcript closes the last run."""
        self._close()

    def _close(self) -> None:
        for call_id, (index, message_id) in self._open.items():
            self._problem(ToolPairProblem(kind="unanswered_call", index=index, message_id=message_id, call_id=call_id))
        self._open = {}

    def _problem(self, problem: ToolPairProblem) -> None:
        self.count += 1
        if len(self.problems) < MAX_DETAILS:
            self.problems.append(problem)

    def details(self) -> list[str]:
        """The problems listed, in order."""
        return [p.describe() for p in sorted(self.problems, key=lambda p: p.index)]


class Tally:
    """Tokens by role and by tool, the ``top`` largest items, pairing problems, late system messages.

    With ``thinking`` (the tokens of a message's thinking blocks), the thinking of assistant turns before the last
    user message is counted apart (:attr:`stripped`): the provider strips it from the request (see
    :func:`~ctxbudget.providers.anthropic_tokens.preserves_thinking`), so :attr:`sent` leaves it out.
    """

    def __init__(self, top: int, thinking: Callable[[Message], int] | None = None) -> None:
        self.top = max(0, top)
        self.messages = 0
        self.tokens = 0
        self.stripped = 0
        self._thinking = thinking
        self._turn_thinking = 0
        self.by_role: dict[str, dict[str, int]] = {}
        self._calls: Counter[str] = Counter()
        self._results: dict[str, dict[str, int]] = {}
        self._names: dict[str, str] = {}  # call id -> tool name, until its result is read
        self._largest: list[tuple[int, int, dict[str, Any]]] = []  # a min-heap of (tokens, -index, item)
        self.pairs = PairCheck()
        self.late_system: list[int] = []
        self._leading = True

    def add(self, message: Message, tokens: int) -> None:
        """Count one message of ``tokens`` tokens."""
        index = self.messages
        self.messages += 1
        self.tokens += tokens
        if self._thinking is not None:
            if message.role == "user":  # a new turn: the thinking of the turns before it is no longer sent
                self.stripped += self._turn_thinking
                self._turn_thinking = 0
            elif message.role == "assistant":
                self._turn_thinking += self._thinking(message)
        role = self.by_role.setdefault(message.role, {"messages": 0, "tokens": 0})
        role["messages"] += 1
        role["tokens"] += tokens
        for call in message.tool_calls:
            self._calls[call.name] += 1
            self._names[call.id] = call.name
        tool = None
        if message.role == "tool":
            called = self._names.pop(message.tool_call_id or "", None)  # always forgotten once answered
            tool = message.name or called or "unknown"
            entry = self._results.setdefault(tool, {"results": 0, "result_tokens": 0})
            entry["results"] += 1
            entry["result_tokens"] += tokens
        if message.role == "system" and not self._leading and len(self.late_system) < MAX_DETAILS:
            self.late_system.append(index)
        self._leading = self._leading and message.role == "system"
        self.pairs.add(index, message)
        self._keep_largest(index, message, tokens, tool)

    @property
    def sent(self) -> int:
        """Tokens of the messages as the next request sends them (earlier turns' thinking left out)."""
        return self.tokens - self.stripped

    def _keep_largest(self, index: int, message: Message, tokens: int, tool: str | None) -> None:
        if self.top == 0:
            return
        key = (tokens, -index)
        if len(self._largest) >= self.top and key <= self._largest[0][:2]:
            return
        item = {
            "index": index,
            "id": message.id,
            "role": message.role,
            "tool": tool or (",".join(c.name for c in message.tool_calls) or None),
            "tokens": tokens,
            "preview": " ".join(message.text[: _PREVIEW * 4].split())[:_PREVIEW],
        }
        if len(self._largest) >= self.top:
            heapq.heapreplace(self._largest, (*key, item))
        else:
            heapq.heappush(self._largest, (*key, item))

    def largest(self) -> list[dict[str, Any]]:
        """The largest items, largest first (ties: earliest first)."""
        return [item for _, _, item in sorted(self._largest, key=lambda entry: (-entry[0], -entry[1]))]

    def by_tool(self) -> dict[str, dict[str, int]]:
        """Calls, results and result tokens per tool, the heaviest results first."""
        names = set(self._calls) | set(self._results)
        report = {
            name: {"calls": self._calls.get(name, 0), **self._results.get(name, {"results": 0, "result_tokens": 0})}
            for name in names
        }
        return dict(sorted(report.items(), key=lambda kv: (-kv[1]["result_tokens"], kv[0])))
