"""The stateless fit, incremental: a list that extends the previous call's list costs O(new messages).

The fit (:func:`~langchain_ctxbudget.runnable.fit_messages` is the reference) keeps the leading system messages,
bounds each tool output over the limit to head + tail, repairs tool pairs, and drops the oldest messages until the
request fits, starting on a human turn. Every step is local, which is what makes it incremental:

* stamping (an id for an id-less message, from its position and content), conversion, counting and bounding are
  per message: a message is recognised by identity (the object given, at its position), else by its id with an
  equal value (a copy after a checkpoint round trip, or the same message at another position);
* repair works run by run (a run is a non-tool message and the tool messages right after it; a pairing problem
  never crosses a run), so only the runs from the first changed message on are repaired again;
* the kept tail starts on a human message, which is always a safe cut once pairs are repaired: the cut is the first
  human message whose suffix fits, found by bisection over the prefix sums of the sizes;
* a message is sized by the counter's upper bound when it has one (:class:`~ctxbudget.messages.tokens.BoundedCounter`: a
  text's UTF-8 bytes for tiktoken, no tokenizing) and counted only when a fit needs it: while the sizes show the
  whole request fits, nothing is dropped whatever the counts are, so none is needed; once they do not, bounded
  messages are counted, newest first (each once: a bound is only ever replaced by the count), until they do or
  none is left, and only then is a cut chosen. A tool output whose bound is over the output limit is counted at
  once, as it may need cutting. The output is the same as with counts from the start (``fit_messages``), and no
  call sends more than the budget.

Cost per call: O(new messages) conversions and bounds or counts, plus list slices and comparisons done in C. In a
window far larger than the history, the new messages are only bounded; once the bounds stop sufficing, each call
counts its new messages and part of what earlier calls left bounded, until none is left (as much again as its own,
for code and logs of about 2.5 bytes per token). The cache holds the previous call's records only (so it is bounded
by that call's size) behind a lock. Messages are compared by identity, then by value: a message object changed in
place between calls (rather than replaced) is not noticed.
"""

from __future__ import annotations

import hashlib
import threading
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxbudget.compaction.policy import CompactionPolicy
from ctxbudget.context.evidence import excerpt
from ctxbudget.messages import Message, ToolSchema
from ctxbudget.messages.tokens import BoundedCounter, TokenCounter
from ctxbudget.messages.toolpairs import repair_tool_pairs
from langchain_core.messages import BaseMessage, convert_to_messages
from langchain_core.prompt_values import PromptValue

from .convert import from_langchain, lacks_tool_call_ids, role_of, to_langchain
from .errors import LangChainContextOverflowError, NoHumanMessageError

__all__ = ["StatelessCache", "no_human", "overflow", "sent_form", "stable_id"]


def stable_id(index: int, message: BaseMessage) -> str:
    """The id an id-less message gets from its position and content, so a re-rendered prompt matches."""
    digest = hashlib.sha256(f"{index}\x00{message.type}\x00{message.content!r}".encode()).hexdigest()[:32]
    return f"lc_{digest}"


def _stamped(index: int, message: BaseMessage) -> BaseMessage:
    return message if message.id else message.model_copy(update={"id": stable_id(index, message)})


def sent_form(given: BaseMessage, message: Message) -> BaseMessage:
    """What the fit returns for ``given`` when it is kept unchanged: the very object given.

    Unless its tool calls lack ids: then a copy carrying the ids ``message`` gives them, so the call sent and its
    result name the same call.
    """
    if not lacks_tool_call_ids(given):
        return given
    calls = [{**call, "id": tc.id} for call, tc in zip(given.tool_calls, message.tool_calls, strict=True)]  # type: ignore[attr-defined]  # an AIMessage: lacks_tool_call_ids checked it
    return given.model_copy(update={"tool_calls": calls, "id": message.id})


def overflow(used: int, budget: int, window: int) -> LangChainContextOverflowError:
    """The hard stop of a stateless fit, with its figures."""
    return LangChainContextOverflowError(
        f"messages: {used:,} tokens do not fit the budget of {budget:,} (window {window:,}) even after bounding "
        "tool outputs and dropping every older message; shorten the system prompt or the latest user message.",
        used_tokens=used,
        max_tokens=window,
        hard_stop_tokens=budget,
    )


def no_human(messages: Sequence[Message], head: int) -> NoHumanMessageError:
    """The refusal of a list with no human message after its ``head`` leading system messages."""
    return NoHumanMessageError(total=len(messages), system=head, roles=dict(Counter(m.role for m in messages[head:])))


@dataclass(slots=True)
class _Item:
    """One given message, fitted: what it was, its ctxbudget form (bounded if need be), what is sent, its size.

    ``size`` is the count when ``exact``, else the counter's upper bound, replaced by the count (in place, so a
    later call reusing the item has it) once a fit needs it.
    """

    raw: BaseMessage
    message: Message
    lc: BaseMessage
    size: int
    exact: bool = True


class StatelessCache:
    """The previous call's per-message results and derived totals, updated from the first changed message on.

    Args:
        budget: tokens for the whole request.
        counter: the token counter.
        policy: gives the tool-output limit.
        tools: tool schemas the model sees (counted once).
    """

    def __init__(
        self, *, budget: int, counter: TokenCounter, policy: CompactionPolicy, tools: Sequence[ToolSchema]
    ) -> None:
        self._budget = budget
        self._counter = counter
        self._limit = policy.tool_output_limit(budget)
        self._fixed = counter.count_tools(tools) + counter.request_overhead
        self._bound = counter.bound_message if isinstance(counter, BoundedCounter) else None
        self._lock = threading.Lock()
        self.conversions = 0
        """Messages converted and sized so far (a message recognised from an earlier call is not)."""
        self._given: list[Any] = []
        self._converted: list[BaseMessage] | None = None
        self._head: list[_Item] = []
        self._shifted = False
        self._items: list[_Item] = []
        self._run_raw: list[int] = []
        self._run_out: list[int] = []
        self._out: list[BaseMessage] = []
        self._prefix: list[int] = [0]
        self._users: list[int] = []
        self._user_prefix: list[int] = []
        self._loose: list[int] = []
        """Positions in ``_out`` sized by a bound, ascending; ``_loose_items`` holds their items."""
        self._loose_items: list[_Item] = []

    def fit(self, value: Any) -> list[BaseMessage]:
        """The fitted messages for ``value`` (a ``PromptValue``, a str, or a sequence ``convert_to_messages`` reads)."""
        with self._lock:
            messages, previous, common = self._messages(value)
            head = self._fit_head(messages)
            self._fit_body(messages, len(head), previous, common)
            fixed = self._fixed + sum(it.size for it in head)
            if not self._users:  # no human message: only the system messages may be sent, if nothing else is
                if self._out:
                    raise no_human([it.message for it in (*head, *self._items)], len(head))
                if fixed > self._budget:
                    raise overflow(fixed, self._budget, self._budget)
                return [it.lc for it in head]
            total = fixed + self._prefix[-1]
            if total > self._budget and self._loose:  # the bounds do not show it fits: count what was bounded
                self._settle(total - self._budget)
                total = fixed + self._prefix[-1]
            need = total - self._budget
            k = bisect_left(self._user_prefix, need) if need > 0 else 0
            if k == len(self._users):
                raise overflow(total - self._user_prefix[-1], self._budget, self._budget)
            fitted = self._out[self._users[k] :]  # one copy of the kept tail; the system messages go in front
            fitted[:0] = [it.lc for it in head]
            return fitted

    # -- input -------------------------------------------------------------------------------------------------
    def _messages(self, value: Any) -> tuple[list[BaseMessage], list[BaseMessage], int]:
        """This call's messages, the previous call's, and how many leading ones are unchanged since.

        Only the new part is converted, and a list of LangChain messages is used as given. The snapshot kept for
        the next call is extended by the new messages and compared whole with the list given (in C, identity
        first, then by value): a list that extends the previous one is neither copied nor sliced, so its unchanged
        messages are never touched (a copy would update the reference count of each).
        """
        if isinstance(value, PromptValue):
            given: list[Any] = value.to_messages()
        elif isinstance(value, str):
            given = [value]
        else:
            given = value if isinstance(value, list) else list(value)
        snapshot, n = self._given, len(self._given)
        previous = snapshot if self._converted is None else self._converted
        if n and len(given) >= n:
            snapshot += given[n:]
            extends = False
            try:
                extends = given == snapshot
            finally:  # unless it extends the last list (a comparison may raise), the snapshot stays as it was
                if not extends:
                    del snapshot[n:]
            if extends:
                return self._convert(given, previous, n)
        common = _common_prefix(given, snapshot)
        self._given = given.copy()
        return self._convert(given, previous, common)

    def _convert(
        self, given: list[Any], previous: list[BaseMessage], common: int
    ) -> tuple[list[BaseMessage], list[BaseMessage], int]:
        fresh = given[common:]
        converted = convert_to_messages(fresh)
        if self._converted is None and all(a is b for a, b in zip(converted, fresh, strict=True)):
            messages: list[BaseMessage] = given  # LangChain messages all along: nothing to keep but the snapshot
        else:
            messages = previous[:common] + converted
        self._converted = None if messages is given else messages
        return messages, previous, common

    def _item(self, index: int, raw: BaseMessage, *, count: bool = False) -> _Item:
        """Convert ``raw`` and size it.

        By the counter's bound when there is one (for a tool output, a bound within the output limit, so it needs no
        cut), else by its count, cutting an output over the limit to head + tail.
        """
        self.conversions += 1
        message = from_langchain(_stamped(index, raw))
        lc = sent_form(raw, message)
        bound = None if count or self._bound is None else self._bound(message)
        if bound is not None and (bound <= self._limit or message.role != "tool"):
            return _Item(raw, message, lc, bound, exact=False)
        size = self._counter.count_message(message)
        if message.role == "tool" and size > self._limit:
            cut = excerpt(message.text, max_tokens=self._limit, counter=self._counter)
            if cut != message.text:  # else only the framing was over: the text is sent as it is
                message = message.with_content(cut)
                lc = to_langchain(message, lc)
                size = self._counter.count_message(message)
        return _Item(raw, message, lc, size)

    def _fit_head(self, messages: list[BaseMessage]) -> list[_Item]:
        head: list[_Item] = []
        for index, raw in enumerate(messages):
            if role_of(raw) != "system":
                break
            old = self._head[index] if index < len(self._head) else None
            if old is None or not (old.raw is raw or old.raw == raw):
                old = self._item(index, raw, count=True)
            head.append(old)
        self._shifted = len(head) != len(self._head)  # an id-less message's id depends on its position
        self._head = head
        return head

    # -- body --------------------------------------------------------------------------------------------------
    def _fit_body(self, messages: list[BaseMessage], offset: int, previous: list[BaseMessage], common: int) -> None:
        """Refit the messages after the ``offset`` leading system messages, from the run holding the first change.

        ``common`` leading messages equal the ``previous`` call's. ``previous`` is read only when the system
        messages changed, which a list extending the previous call's cannot have.
        """
        length = len(messages) - offset
        shifted = self._shifted
        if shifted:
            same = 0  # positions moved: items are found again by identity or id below
        elif common >= offset:
            same = common - offset
        else:  # the system messages changed, the body may not have
            same = _common_prefix(messages[offset:], previous[offset:])
        if not shifted and same == length == len(self._items):
            return
        run = max(bisect_right(self._run_raw, same) - 1, 0)
        start = self._run_raw[run] if self._run_raw else 0
        spare = self._truncate(start)
        by_id = {it.raw.id: it for it in spare if it.raw.id}
        items = self._items
        for index in range(start, length):
            raw = messages[offset + index]
            back = index - start
            same_place = back < len(spare) and spare[back].raw is raw and (raw.id or not shifted)
            item = spare[back] if same_place else by_id.get(raw.id or "")
            if item is None or not (item.raw is raw or item.raw == raw):
                item = self._item(offset + index, raw)
            items.append(item)
        self._add_runs(start)

    def _truncate(self, start: int) -> list[_Item]:
        """Forget the runs from raw position ``start`` (a run start) on; return their items for reuse."""
        spare = self._items[start:]
        run = bisect_left(self._run_raw, start)
        out = self._run_out[run] if run < len(self._run_out) else len(self._out)
        del self._items[start:], self._run_raw[run:], self._run_out[run:], self._out[out:], self._prefix[out + 1 :]
        users = bisect_left(self._users, out)
        del self._users[users:], self._user_prefix[users:]
        loose = bisect_left(self._loose, out)
        del self._loose[loose:], self._loose_items[loose:]
        return spare

    def _add_runs(self, start: int) -> None:
        items = self._items
        for end in range(start + 1, len(items) + 1):
            if end == len(items) or items[end].message.role != "tool":
                self._add_run(start, items[start:end])
                start = end

    def _add_run(self, start: int, run: list[_Item]) -> None:
        self._run_raw.append(start)
        self._run_out.append(len(self._out))
        messages = [it.message for it in run]
        # A lone message without tool calls (a user turn, a reply) is a run with nothing to repair.
        lone = len(run) == 1 and messages[0].role != "tool" and not messages[0].tool_calls
        repaired = messages if lone else repair_tool_pairs(messages)
        known = {id(it.message): it for it in run}
        for message in repaired:
            item = known.get(id(message))
            if item is None:  # a synthetic result for an unanswered call
                lc, size = to_langchain(message), self._counter.count_message(message)
            else:
                lc, size = item.lc, item.size
            if message.role == "user":
                self._users.append(len(self._out))
                self._user_prefix.append(self._prefix[-1])
            if item is not None and not item.exact:
                self._loose.append(len(self._out))
                self._loose_items.append(item)
            self._out.append(lc)
            self._prefix.append(self._prefix[-1] + size)

    def _settle(self, over: int) -> None:
        """Count bounded messages, newest first, until the sizes are ``over`` tokens smaller or none is left.

        Each message is counted once: a bound is only ever replaced by its count. Newest first, because the kept
        tail is the newest and the prefix sums change from the oldest counted position on: as a history grows past
        the point where bounds suffice, each call counts its own messages and a little more, never the whole
        backlog at once.
        """
        loose, items, prefix = self._loose, self._loose_items, self._prefix
        changed: list[tuple[int, int]] = []
        saved = 0
        try:
            while loose and saved < over:
                position, item = loose[-1], items[-1]
                if not item.exact:  # an item at two positions (a repeated message) is counted once
                    item.size, item.exact = self._counter.count_message(item.message), True
                loose.pop()  # only once counted: a counter that raises leaves it bounded, as it was
                items.pop()
                saved += prefix[position + 1] - prefix[position] - item.size
                changed.append((position, item.size))
        finally:  # the prefix sums always agree with the sizes, even when counting raised
            if changed:
                self._correct(changed)

    def _correct(self, changed: list[tuple[int, int]]) -> None:
        """Set the sizes of ``changed`` (position, size) pairs, newest first, and redo the sums from the oldest."""
        prefix = self._prefix
        first = changed[-1][0]
        sizes = [prefix[i + 1] - prefix[i] for i in range(first, len(self._out))]
        for position, size in changed:
            sizes[position - first] = size
        running = prefix[first]
        for offset, size in enumerate(sizes, start=first + 1):
            running += size
            prefix[offset] = running
        for j in range(bisect_left(self._users, first), len(self._users)):
            self._user_prefix[j] = prefix[self._users[j]]


def _common_prefix(a: list[BaseMessage], b: list[BaseMessage]) -> int:
    """Length of the longest common prefix, by bisection over slice comparisons (done in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
