"""Which archived entries make one search hit: a tool call, its result, and the short texts that belong to them.

A model asks about what happened, not about messages: "which certificate was issued" is answered by a call
(``send_certificate``), its result (``Certificate certificate_3221322 added``) and the agent's reply that read it out
("A certificate worth $50 has been issued"). :class:`UnitTable` groups entries, as they are archived, into
:class:`Unit` objects, one per hit:

* a tool call and its result, in either archiving order (matched by call id);
* with them, the assistant's line that introduced the call (at most :data:`NARRATION_CHARS`), and a short reply
  (at most :data:`REPLY_CHARS`) archived right after a call whose result is a value (at most :data:`VALUE_CHARS`)
  that names a term of the call or the result (it reads the value out);
* every other message, and every archived text, alone.

A call the harness never ran (Claude Code's "Sibling tool call errored") says nothing of its own: when the agent
re-runs it (the same tool, most of the same argument words: :data:`RETRY_OVERLAP`) before the user speaks again,
the unit names the retry (:attr:`Unit.retry`), and a search that finds the call shows what the retry returned.

Versions of one part archived for several reasons (``.bounded`` then ``.summarized``) share its key, so they stay one
part. The table decides placement only; :class:`~ctxbudget.archive.search.ArchiveIndex` counts the terms.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, ItemsView
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..messages._text_actions import action, is_result_turn
from ..messages.toolpairs import not_run
from ._fixes import Fixes, overlap
from ._text import Tokenizer, analyze, tokenize

if TYPE_CHECKING:
    from ..messages.message import ToolCall
    from .entry import ArchiveEntry

__all__ = [
    "MAX_WAITING",
    "NARRATION_CHARS",
    "REPLY_CHARS",
    "RETRY_OVERLAP",
    "VALUE_CHARS",
    "WORDS_CHARS",
    "Part",
    "Placement",
    "Unit",
    "UnitTable",
    "call_text",
]

NARRATION_CHARS = 240
"""An assistant text of at most this many characters beside tool calls is part of its first call's hit."""
REPLY_CHARS = 400
"""An assistant text of at most this many characters, with no calls, archived right after a call whose result is a
value (:data:`VALUE_CHARS`), is part of that call's hit: the reply that reads the value out."""
VALUE_CHARS = 120
"""A tool result of at most this many characters is a value (``1047.0``, ``Certificate certificate_3221322 added``):
the words a question asks are in the reply that reads it out. A longer output is a document of its own, and what the
assistant says after it is a hit of its own (its reading, a decision)."""
RETRY_OVERLAP = 0.5
"""A call re-runs one that never ran when it uses the same tool and the two calls' argument words overlap this much
(shared words over all words): ``pgrep -lf "Sourcetree|GitKraken|Tower|git"`` re-runs
``pgrep -lf "Sourcetree|GitKraken|Tower|vscode.*git"``."""
MAX_WAITING = 8
"""Calls of one tool that never ran and wait for a retry, at most (the newest)."""
WORDS_CHARS = 2_000
"""Characters of a call's text compared with another's to tell a retry."""


@dataclass
class Part:
    """The fullest archived version of one part of a unit: a message's text, one call, or an archived text."""

    entry: ArchiveEntry
    text: str
    counts: Counter[str]
    size: int
    digest: int


@dataclass
class Unit:
    """What one hit stands for: its parts, their summed term counts, and the call that links them."""

    order: int
    parts: dict[str, Part] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    length: int = 0
    call: ToolCall | None = None
    result: str | None = None
    """Part key of the tool result, once archived."""
    replies: set[str] = field(default_factory=set)
    """Part keys of the short replies that read the result out."""
    retry: int | None = None
    """The unit of the call that re-ran this one, when this call never ran (its hits are the retry's)."""
    words: frozenset[str] = frozenset()
    """The distinct tokens of the call (its first :data:`WORDS_CHARS`): the ids and paths it names."""
    command: frozenset[str] = frozenset()
    """The call's whitespace-separated words as written (its first :data:`WORDS_CHARS`): what tells a run of the same
    command (``cat src/a.py`` and ``git diff src/a.py`` share a path, not a command)."""
    made: int = -1
    """When the call was made, as far as the archive knows: the position, in archiving order, of the entry that holds
    it. Compaction clears old results before it summarizes their calls, so a result's position is not its call's
    place in the conversation; the calls of the spans it summarizes are archived in the conversation's order."""

    def primary(self, terms: Collection[str]) -> Part:
        """The part a hit shows and reads back: the tool result when there is one, else the fullest part.

        A result that holds none of ``terms`` (the query's) gives way to a reply in the unit that does (the agent's
        reading of a bare ``1047.0``): the hit shows where the query matched.
        """
        if self.result is None:
            return max(self.parts.values(), key=_size)
        result = self.parts[self.result]
        if any(term in result.counts for term in terms):
            return result
        replies = [part for key in self.replies if any(term in (part := self.parts[key]).counts for term in terms)]
        return max(replies, key=_size) if replies else result

    def call_handle(self) -> str | None:
        """Handle of the archived message that made this unit's call, if it is archived."""
        return next((part.entry.handle for key, part in self.parts.items() if "#call:" in key), None)


@dataclass(frozen=True)
class Placement:
    """Where one part of an entry goes: the unit, the part's key, its text, and the call when the part is one."""

    unit: int
    key: str
    text: str
    call: ToolCall | None = None
    output: bool = False
    """The part is what a call or a command printed (a tool result, a harness's result turn, an archived text)."""


class UnitTable:
    """Units in archiving order, and the placement of each new entry's parts among them (see the module)."""

    def __init__(self, tokenizer: Tokenizer = tokenize) -> None:
        self._tokenizer = tokenizer
        self.units: list[Unit] = []
        self._where: dict[str, int] = {}  # part key -> unit
        self._open_calls: dict[str, int] = {}  # call id -> unit of a call whose result is not archived yet
        self._open_results: dict[str, int] = {}  # call id -> unit of a result whose call is not archived yet
        self._last_call: int | None = None  # unit of the call (or result) archived last, while no text followed
        self._unrun: dict[str, dict[int, frozenset[str]]] = {}  # tool -> calls that never ran -> their words
        self._retry_of: dict[int, int] = {}  # a retry whose result is not archived yet -> the call it re-runs
        self._written: str | None = None  # call id of a command written as text, until the next message
        self._entries = 0  # entries placed so far
        self.fixes = Fixes(RETRY_OVERLAP)
        """Which calls fixed a failed call (:mod:`ctxbudget.archive._fixes`)."""

    def __len__(self) -> int:
        """Units so far."""
        return len(self.units)

    def __getitem__(self, unit: int) -> Unit:
        return self.units[unit]

    def where(self, key: str) -> int | None:
        """The unit that holds the part ``key`` (a message id, ``<message id>#call:<call id>``, a text's handle)."""
        return self._where.get(key)

    def placed(self) -> ItemsView[str, int]:
        """Every part key placed so far, with its unit (a live, read-only view)."""
        return self._where.items()

    def place(self, entry: ArchiveEntry) -> list[Placement]:
        """The parts of ``entry`` and their units (new units are made here); called once per entry, in order."""
        self._entries += 1
        message = entry.message
        after_call, self._last_call = self._last_call, None
        written, self._written = self._written, None
        if message is None:
            self._written = written  # an archived text between a reply and its result turn
            return [self._at(self._unit_of(f"text:{entry.handle}"), entry.handle, entry.full_text, output=True)]
        if message.role == "tool" and message.tool_call_id:
            return [self._result(entry, message.tool_call_id)]
        if is_result_turn(message) and (written is not None or message.id in self._where):
            return [self._result(entry, written or "")]  # a version archived again is found by its key
        if message.role == "user":
            self._unrun.clear()  # a retry comes before the user speaks again
        calls, text = list(message.tool_calls), entry.full_text
        command = action(message)
        if command is not None:  # a command written as a code block: its call, and the reply's text without it
            calls, text = [command[0]], command[1]
            self._written = command[0].id
        placed = [self._call(entry, call) for call in calls]
        if placed:
            self._last_call = placed[-1].unit
            if not text.strip():
                return placed
        # A line that introduces a call ("Let me check the config.") is part of the call's hit, and so is a short
        # reply that reads out the value the call just before it returned ("A $50 certificate has been issued."); a
        # longer text is one of its own (reasoning, a plan, a decision).
        unit = self._where.get(message.id)
        if unit is None:
            if placed:
                introduces = len(text) <= NARRATION_CHARS and not self._reports_on(after_call, placed, text)
                unit = placed[0].unit if introduces else self._new_unit()
            elif after_call is not None and message.role == "assistant" and self._reads_out(after_call, text):
                unit = after_call
                self.units[unit].replies.add(message.id)
            else:
                unit = self._new_unit()
        return [*placed, self._at(unit, message.id, text)]

    def indexed(self, unit_id: int) -> None:
        """The index counted a new part of ``unit_id``: once it holds its call and its result, settle its fix links.

        The call's words are its part's terms, as counted (nothing is tokenized again).
        """
        unit = self.units[unit_id]
        result = unit.parts.get(unit.result) if unit.result is not None else None
        said = next((part for key, part in unit.parts.items() if "#call:" in key), None)
        if unit.call is not None and result is not None and said is not None:
            self.fixes.settle(unit_id, unit.call.name, frozenset(said.counts), result.entry)

    def _reports_on(self, unit_id: int | None, placed: list[Placement], text: str) -> bool:
        """Whether ``text``, beside the calls ``placed``, reports on the call of ``unit_id`` (the call before them).

        It names an identifier (an id, a path, a dotted or snake_case name) of that call's arguments or output which
        its own calls do not name: "I've retrieved order #W5400801: it is cancelled. Let's check #W4597054" beside
        ``get_order_details(#W4597054)``, or "`test_xfail_unexpected` failed with `[XPASS(strict)]`. Let me check
        pyproject.toml" beside ``cat pyproject.toml``, reads out the call before. Plain words do not count.
        """
        if unit_id is None or not self.units[unit_id].words:
            return False
        before = self.units[unit_id]
        own = frozenset().union(*(self.units[place.unit].words for place in placed))
        result = before.parts.get(before.result) if before.result is not None else None
        printed = result.counts.keys() if result is not None else frozenset()
        return any(
            (word in before.words or word in printed) and word not in own
            for word in analyze(self._tokenizer(text))
            if not word.isalpha()
        )

    def _reads_out(self, unit_id: int, text: str) -> bool:
        """Whether ``text`` reads out the value ``unit_id``'s call returned.

        A short reply that names a term of the call or of its result (``$1,047`` for ``1047.0``, ``certificate`` for
        ``send_certificate``), the result being a value (an id, a number, a one-line status).
        """
        unit = self.units[unit_id]
        if len(text) > REPLY_CHARS or unit.result is None or unit.result not in unit.parts:
            return False
        if unit.parts[unit.result].size > VALUE_CHARS:
            return False
        return any(term in unit.counts for term in analyze(self._tokenizer(text)))

    def _result(self, entry: ArchiveEntry, call_id: str) -> Placement:
        key = entry.message.id if entry.message is not None else entry.handle
        unit = self._where.get(key)
        if unit is None:
            unit = self._open_calls.pop(call_id, None)
            if unit is None:
                unit = self._new_unit()
                self._open_results[call_id] = unit
        self.units[unit].result = key
        self._last_call = unit
        earlier = self._retry_of.pop(unit, None)  # a call taken for a retry before its result came
        if self._wait(unit, entry) and earlier is not None:  # it never ran either: no retry
            self.units[earlier].retry = None
            unrun = self.units[earlier].parts.get(self.units[earlier].result or "")
            if unrun is not None:
                self._wait(earlier, unrun.entry)
        return self._at(unit, key, entry.full_text, output=True)

    def _call(self, entry: ArchiveEntry, call: ToolCall) -> Placement:
        key = f"{entry.message.id if entry.message is not None else entry.handle}#call:{call.id}"
        unit = self._where.get(key)
        if unit is None:
            unit = self._open_results.pop(call.id, None)
            if unit is None:
                unit = self._new_unit()
                self._open_calls[call.id] = unit
        self.units[unit].call = call
        text = call_text(call)
        placed = self.units[unit]
        if placed.made < 0:
            placed.made, placed.words = self._entries, self._words(text)
            placed.command = frozenset(text[:WORDS_CHARS].split())
        result = self.units[unit].result
        known = self.units[unit].parts.get(result) if result is not None else None
        self.fixes.called(unit)
        if known is not None and self._wait(unit, known.entry):
            return self._at(unit, key, text, call)  # it never ran either: it waits, and is no retry
        waiting = self._unrun.get(call.name)
        if waiting:  # calls of this tool that never ran wait for a retry: is this one?
            words = self._words(text)
            shared, earlier = max(((overlap(w, words), u) for u, w in waiting.items() if u != unit), default=(0, -1))
            if shared >= RETRY_OVERLAP:
                self.units[earlier].retry = unit
                del waiting[earlier]
                if known is None:
                    self._retry_of[unit] = earlier  # undone if its result says it never ran
        return self._at(unit, key, text, call)

    def _wait(self, unit_id: int, result: ArchiveEntry) -> bool:
        """Whether ``result`` says ``unit_id``'s call never ran; if so (and the call is known) it waits for a retry.

        At most :data:`MAX_WAITING` calls of one tool wait (the newest): a retry follows the call it repeats.
        """
        if result.message is None or not not_run(result.message):
            return False
        call = self.units[unit_id].call
        if call is not None and self.units[unit_id].retry is None:  # a re-archived version of one already retried
            waiting = self._unrun.setdefault(call.name, {})
            waiting[unit_id] = self._words(call_text(call))
            if len(waiting) > MAX_WAITING:
                del waiting[next(iter(waiting))]
        return True

    def _words(self, text: str) -> frozenset[str]:
        """The distinct words of a call's text (its first :data:`WORDS_CHARS`: a heredoc's body is not read whole)."""
        return frozenset(self._tokenizer(text[:WORDS_CHARS]))

    def _at(self, unit: int, key: str, text: str, call: ToolCall | None = None, *, output: bool = False) -> Placement:
        self._where[key] = unit
        return Placement(unit=unit, key=key, text=text, call=call, output=output)

    def _unit_of(self, key: str) -> int:
        unit = self._where.get(key)
        return self._new_unit() if unit is None else unit

    def _new_unit(self) -> int:
        self.units.append(Unit(order=len(self.units)))
        return len(self.units) - 1


def call_text(call: ToolCall) -> str:
    """A call as it is indexed and shown in a hit: its name and JSON arguments."""
    return f"{call.name} {call.args_json()}"


def _size(part: Part) -> int:
    return part.size
