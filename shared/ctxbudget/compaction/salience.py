"""What carries information in a transcript, found without a model: :class:`Salient` items, one pass per message.

* **User messages** (harness text removed: :mod:`ctxbudget.compaction.harness`) yield the user's statements in their own
  words (:mod:`ctxbudget.compaction.statements`): facts, constraints, preferences, and requests and questions (the
  latest one is the "latest request"; an imperative one is also the current task). A long paste is one item pointing to
  the archived original.
* **Assistant messages** yield decisions and open items; narration yields nothing. Each tool call yields a
  command, file operation or call item with its outcome (:mod:`ctxbudget.compaction.outcomes`), and a file operation
  also an artifact keyed by its path.
* **Tool results** yield an error item when their structure says they failed, and the paths, result lines, figures
  and record fields they report (:mod:`ctxbudget.compaction.outputs`); a file that was read reports no facts.
* A harness's own continuation summary (Claude Code's, after its compaction) is read as an earlier summary.

Items carry a supersession key where one exists (the path of an artifact, the label of a call), so a later item
with the same key replaces an earlier one; statements are matched by subject in
:mod:`ctxbudget.compaction.supersession`. Every function here is linear in the message's length.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

from ..messages.message import Message, ToolCall
from ._salient import (
    ASKED,
    PASTED_FAILURE,
    RECORD_CALL,
    SHOWN_BY_CALL,
    USER_CHOSE,
    SalienceKind,
    Salient,
    item_key,
)
from ._salient import item as _item
from ._text_protocol import REJECTED_META, as_tool_use, harness_turn
from ._tool_use import call_items, tool_items
from .agent_statements import assistant_statements
from .calls import call_label, is_thought
from .harness import is_continuation_summary, strip_harness, subagent_reports
from .memo import ReadMemo
from .outcomes import failure_key, failure_line, rejected
from .outputs import output_items
from .statements import Statement, user_statements
from .textscan import clip, informative_tokens, sentences

__all__ = [
    "ASKED",
    "RECORD_CALL",
    "SHOWN_BY_CALL",
    "USER_CHOSE",
    "SalienceKind",
    "Salient",
    "failure_line",
    "informative_tokens",
    "item_key",
    "key_lines",
    "salient_items",
    "statements_reader",
]

HandleOf = Callable[[Message], "str | None"]
"""The archive handle a message of the span will have once compacted (``None``: not known)."""
Said = Callable[[str], Sequence[Statement]]
"""Reads the statements of a user message's text (:func:`~ctxbudget.compaction.statements.user_statements`)."""
"""Message metadata flags a transcript reader sets on text the harness, not the person, wrote."""


def key_lines(message: Message, max_lines: int) -> list[str]:
    """The lines of a tool output worth keeping in view when the output itself is not (a cleared result's marker).

    Its failure first, then the paths it wrote and its result and figure lines, at most ``max_lines``.
    """
    lines: list[str] = []
    failed = failure_line(message)
    if failed is not None:
        lines.append(f"FAILED: {failed}")
    for found in output_items(message.text, message.name or "tool"):
        if len(lines) >= max_lines:
            break
        text = found.text.split(": ", 1)[1] if found.kind == "figure" and ": " in found.text else found.text
        if text not in lines:
            lines.append(clip(text, 200))
    return lines[:max_lines]


def salient_items(
    messages: Sequence[Message],
    results: Mapping[str, Message] | None = None,
    *,
    handle_of: HandleOf | None = None,
    memo: ReadMemo | None = None,
    calls: Mapping[str, ToolCall] | None = None,
) -> list[Salient]:
    """Every salient item of ``messages``, in conversation order.

    Args:
        messages: the span (originals, not bounded or cleared copies, for full coverage).
        results: tool results by call id from outside the span (a call's result may sit after the cut).
        handle_of: the archive handle of a message of the span, named in the item of a long paste.
        memo: what earlier compactions of the session read; a message met again is not read again.
        calls: tool calls by id from outside the span (a result's call may sit before it).
    """
    # a command written as a code block, its result sent back as a user turn; one the user ran in a terminal
    messages = as_tool_use(messages)
    # The span's own results and calls over those from outside it, without copying those: a cleared output's key
    # lines read a span of one message beside the whole history's calls, once per output cleared.
    by_call = _over(results, {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id})
    calls = _over(calls, {call.id: call for m in messages for call in m.tool_calls})
    items: list[Salient] = []
    asked: str | None = None  # the question the latest assistant reply ended on, until the user replies
    for order, message in enumerate(messages):
        if message.metadata.get("ctxbudget"):
            continue  # our own summary, notices and pinned copies are not conversation
        if memo is None:
            found = list(message_items(message, order, by_call, calls, handle_of))
        else:
            handle = handle_of(message) if handle_of is not None and message.role == "user" else None
            read = memo.get(
                _read_key(message, by_call, calls, handle), _reader(message, by_call, calls, handle, memo), _chars
            )
            found = [Salient(kind=i.kind, text=i.text, key=i.key, order=order, tokens=i.tokens) for i in read]
        if message.role == "user":
            found = found or _short_answer(message, asked, order)
            asked = None
        elif message.role == "assistant":
            asked = _last_question(message)
        items.extend(found)
    return items


_V = TypeVar("_V")


class _Over(Mapping[str, _V]):
    """``own``'s entries over ``outside``'s: a view, built in O(own) whatever the size of ``outside``."""

    def __init__(self, own: Mapping[str, _V], outside: Mapping[str, _V]) -> None:
        self._own, self._outside = own, outside

    def __getitem__(self, key: str) -> _V:
        return self._own[key] if key in self._own else self._outside[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._own
        yield from (key for key in self._outside if key not in self._own)

    def __len__(self) -> int:
        return len(self._own) + sum(1 for key in self._outside if key not in self._own)


def _over(outside: Mapping[str, _V] | None, own: dict[str, _V]) -> Mapping[str, _V]:
    """``own`` over ``outside`` (either alone when the other is empty), without copying ``outside``."""
    if not outside:
        return own
    return _Over(own, outside) if own else outside


_ANSWER_WORDS = 12
"""Words of a reply, at most, that says nothing alone but answers the question before it ("yes for both, go ahead")."""


def _short_answer(message: Message, asked: str | None, order: int) -> list[Salient]:
    """A short reply that states nothing alone, as the user's choice on the question it answers, or nothing.

    "yes for both, go ahead" after "Want me to skip the formal write-up?" is the user's decision:
    ``User chose: yes for both, go ahead (to: Want me to skip ...?)``. A harness's turn is no reply.
    """
    if asked is None or harness_turn(message):
        return []
    text = " ".join(strip_harness(message.text).split())
    if not text or len(text.split()) > _ANSWER_WORDS:
        return []
    return [_item("decision", clip(f"{USER_CHOSE}{text} (to: {asked})", 280), None, order)]


def _reader(
    message: Message,
    by_call: Mapping[str, Message],
    calls: Mapping[str, ToolCall],
    handle: str | None,
    memo: ReadMemo,
) -> Callable[[], tuple[Salient, ...]]:
    def failure(result: Message) -> str | None:
        # A result's failure is read once: for its own items (when it is cleared) and for its call's outcome.
        return memo.get(failure_key(result), lambda: failure_line(result), lambda line: len(line or ""))

    def read() -> tuple[Salient, ...]:
        items = message_items(
            message, 0, by_call, calls, lambda _message: handle, failure=failure, said=statements_reader(memo)
        )
        return tuple(items)

    return read


def _read_key(
    message: Message, by_call: Mapping[str, Message], calls: Mapping[str, ToolCall], handle: str | None
) -> tuple[object, ...]:
    """What a message's items depend on: the message itself, its calls' results, the call it answers, its handle."""
    text = message.text
    if message.role == "assistant":
        results = tuple(
            (call.id, result.id, hash(result.text), result.metadata.get("is_error") is True)
            for call in message.tool_calls
            if (result := by_call.get(call.id)) is not None
        )
        return (message.id, hash(text), len(text), tuple(c.id for c in message.tool_calls), results, message.state)
    if message.role == "tool":
        call = calls.get(message.tool_call_id or "")
        return (message.id, hash(text), len(text), call_label(call) if call is not None else message.name)
    return (message.id, hash(text), len(text), handle)


def statements_reader(memo: ReadMemo) -> Said:
    """:func:`~ctxbudget.compaction.statements.user_statements`, remembered in ``memo`` by text.

    A user message is read for its statements once: while it is in view in the kept tail, and again when it is
    evicted (whatever handle its items then name).
    """

    def said(text: str) -> tuple[Statement, ...]:
        return memo.get(
            ("said", text),
            lambda: tuple(user_statements(text)),
            lambda found: len(text) + sum(len(statement.text) for statement in found),
        )

    return said


def _chars(items: tuple[Salient, ...]) -> int:
    return sum(len(item.text) + 48 for item in items)


def message_items(
    message: Message,
    order: int,
    by_call: Mapping[str, Message],
    calls: Mapping[str, ToolCall],
    handle_of: HandleOf | None = None,
    *,
    failure: Callable[[Message], str | None] = failure_line,
    said: Said = user_statements,
) -> Iterator[Salient]:
    """The items of one message at position ``order`` (``by_call``: results by call id; ``calls``: calls by id).

    ``failure`` reads a tool result's failure line (:func:`~ctxbudget.compaction.outcomes.failure_line`, or a
    remembered one); ``said`` a user message's statements (:func:`statements_reader`, or read afresh).
    """
    if message.role == "user":
        yield from _user_items(message, order, handle_of, said)
    elif message.role == "assistant":
        yield from _assistant_items(message, order, by_call, failure)
    elif message.role == "tool":
        yield from tool_items(message, order, calls, failure)
        words = _rejection_words(message)
        if words:  # the user stopped the call and said why: their words, as in a turn of their own
            yield from _statement_items(words, order, said=said)


_USER_SAID = "To tell you how to proceed, the user said:"
"""Where Claude Code's result of a call the user rejected gives the user's own words (the rest is its wrapper)."""


def _rejection_words(result: Message) -> str:
    """What the user said when they rejected a call (the words after Claude Code's "the user said:"), else ``""``."""
    if not rejected(result):
        return ""
    _, found, words = result.text.partition(_USER_SAID)
    return words.strip() if found else ""


def _user_items(message: Message, order: int, handle_of: HandleOf | None, said: Said) -> Iterator[Salient]:
    rejected = message.metadata.get(REJECTED_META)
    if isinstance(rejected, str) and rejected:  # a harness rejected the reply before: it ran nothing
        yield _item("error", f"the harness rejected the reply -> {rejected}", "the harness rejected the reply", order)
    if harness_turn(message):
        return
    if is_continuation_summary(message.text):
        yield from _continuation(message.text, order)
        return
    for report in subagent_reports(message.text):  # a subagent's work handed back as a user turn: the agent's findings
        for statement in assistant_statements(report):
            yield _item(statement.kind, statement.text, item_key(statement.kind, statement.text), order)
    yield from _statement_items(message.text, order, handle_of(message) if handle_of is not None else None, said)


def _statement_items(
    text: str, order: int, handle: str | None = None, said: Said = user_statements
) -> Iterator[Salient]:
    for statement in said(text):
        shown = statement.text
        if statement.kind == "decision":
            shown = f"{USER_CHOSE}{shown}"  # beside the assistant's decisions, whose choice it was
        if statement.kind == "paste":
            shown = f"User {shown}" + (f" (full text: {handle})" if handle else "")
            # A run's output the user pasted ("--- FAIL: TestX ... error = no agents installed"): what failed is open
            failed = failure_line(Message(role="tool", tool_call_id="pasted", content=text))
            if failed is not None:
                yield _item("error", f"{PASTED_FAILURE}{failed}", PASTED_FAILURE, order)
        yield _item(statement.kind, shown, item_key(statement.kind, shown), order)


def _continuation(text: str, order: int) -> Iterator[Salient]:
    """A harness's continuation summary: its lines are notes from an earlier summary (kept, ranked low)."""
    body = strip_harness(text)
    for raw in body.splitlines()[1:400]:
        line = raw.strip().lstrip("-*• ").strip()
        if len(line.split()) >= 3 and not line.startswith("#"):
            yield _item("note", clip(line, 280), None, order)


def _assistant_items(
    message: Message, order: int, by_call: Mapping[str, Message], failure: Callable[[Message], str | None]
) -> Iterator[Salient]:
    for statement in assistant_statements(message.text):
        yield _item(statement.kind, statement.text, item_key(statement.kind, statement.text), order)
    asked = _closing_question(message) if not message.tool_calls else None
    if asked is not None:  # what a user's "Yes, please proceed" answers (never a bullet of its own)
        yield _item("open", asked, ASKED, order)
    if message.state == "interrupted":
        yield _item("open", "The assistant's reply was interrupted before it finished.", "open", order)
    for call in message.tool_calls:
        result = by_call.get(call.id)
        if is_thought(call, result.text if result is not None else None):
            # a call that only carries the agent's reasoning (a think tool) did and found nothing: its start is a
            # note of what the agent was weighing, the archive keeps the rest
            (reasoning,) = call.args.values()
            yield _item("note", clip(f"Thought: {' '.join(str(reasoning).split())}", 200), None, order)
        else:
            yield from call_items(call, result, order, failure)


_QUESTION_TAIL = 600
"""Characters of a reply's end a question it asks the user is looked for in ("Want me to skip ...? If both yes, I'll
proceed.")."""


def _last_question(message: Message) -> str | None:
    """The last question near the end of an assistant's reply with no tool call: what the user's next turn answers."""
    if message.tool_calls:
        return None
    asked = [s for s in sentences(message.text[-_QUESTION_TAIL:]) if s.rstrip("*_ ").endswith("?")]
    question = " ".join(asked[-1].split()).lstrip("*_-# ") if asked else ""
    return clip(question, 240) if len(question.split()) >= 3 else None


def _closing_question(message: Message) -> str | None:
    """The question an assistant's reply ends on ("Would you like to proceed with this booking arrangement?")."""
    text = message.text.rstrip().rstrip("*_ ")
    if not text.endswith("?"):
        return None
    start = max(text.rfind(end, 0, len(text) - 1) for end in (". ", "! ", "? ", "\n", ": "))
    question = " ".join(text[start + 1 :].split()).lstrip("*_-# ")
    return clip(question, 240) if len(question.split()) >= 3 else None


def tail_statements(texts: Iterable[str], said: Said = user_statements) -> list[Salient]:
    """The statements of user messages still in view, by their texts (``said`` reads them: :func:`statements_reader`).

    They supersede older statements, and are not repeated in the summary.
    """
    items: list[Salient] = []
    for order, text in enumerate(texts, start=1_000_000):
        items.extend(_statement_items(text, order, None, said))
    return items
