"""The cumulative ledger: what compaction keeps in view of everything it evicted.

A ledger is a structured Markdown summary (:data:`LEDGER_SECTIONS`) built from :mod:`ctxbudget.compaction.salience`
items of each evicted span, merged with the ledger of earlier compactions (parsed back from its text with the same
readers, so a ledger survives snapshots and is cumulative, never nested). Merging

* drops repeats (the same text twice, however spaced or cased);
* lets a later statement replace the one it supersedes (:mod:`ctxbudget.compaction.supersession`), including statements
  still in view in the kept tail: a value the tail corrects is not shown stale in the summary;
* keeps one bullet per file (its operations in order: ``src/a.py: read, edited x2``), per command and per call
  (the latest outcome), marks an error resolved when the same call or file later succeeds, and keeps the open
  items of the latest message that left any;
* takes the current task (the latest substantial request) and the latest request, shown only when no newer one is
  in view.

When the items do not fit the token budget, the ledger keeps those that carry the most information per token: the
kind's weight (what the user stated first), typed values (ids, paths, amounts, dates, names), the rarity of their
tokens within the session, and recency. The user's first request (the origin) is not in the ledger: the session pins
it beside the summary.

This module builds a ledger; its text form (sections, rendering, reading back) is in ``_ledger_text``, merging in
``_ledger_merge``, ranking and fitting in ``_ledger_select``. :func:`parse_ledger` and :data:`LEDGER_SECTIONS` are
re-exported here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from ..messages.tokens import TokenCounter
from ._ledger_merge import merge as merge_items
from ._ledger_merge import normal, posting_keys
from ._ledger_select import Selection, bullet_size, structure_bonus
from ._ledger_text import LEDGER_SECTIONS, PASTED_STATEMENTS, STATEMENTS, parse_ledger
from ._salient import ASKED, PASTED_FAILURE, USER_CHOSE, Salient
from .harness import INSTRUCTIONS_ARCHIVED
from .memo import ReadMemo
from .statements import says_yes
from .supersession import Subject, subject_of
from .textscan import clip, content_words

__all__ = ["LEDGER_SECTIONS", "Ledger", "parse_ledger"]

_TASK_WORDS = 5
_ASSENT_WORDS = 10
"""The most words a reply that only says yes has (a longer one says what it wants)."""
_ANSWERS = " (to: "
_AFTER = " (after: "
_SHORT_REQUEST_WORDS = 3
"""Content words a latest request has fewer of when it leans on the reply before it ("commit this", "commit")."""
_ASK_WORDS = 3
"""Content words an earlier request or question has at least, to be listed ("Could you help?" has one)."""
_TERSE_WORDS = 4
"""The most words of a terse order, which is listed with two content words ("do the proper fix")."""
_ORDER = re.compile(
    r"^(?:(?:ok(?:ay)?|now|then|please|great|thanks)[,!.]?\s+)*(?:(?:can|could|would|will) you\s+(?:please\s+)?)?"
    r"(?:commit|push|merge|rebase|deploy|release|publish|revert|undo|amend|squash|ship|tag|open a pr|create a pr|"
    r"make a pr|pr)\b[^?]{0,40}\??$",
    re.IGNORECASE,
)
"""A terse order to do a step of the work's own ("commit this", "commit, push and pr it", "can you revert this
change?"): it steered the work."""
_REPORTED = frozenset({"finding", "decision", "open"})
"""What an assistant's reply reports (the items a short request after it refers to)."""
"""How the task shows the question a bare yes answers."""
_WORK = frozenset({"finding", "call", "command", "figure", "artifact", "error", "open"})
"""Kinds of item the assistant's side of the conversation produces: a request before one of them was worked on."""


class Ledger:
    """Merge, rank and render ledger items within a token budget.

    Args:
        counter: counts bullet tokens so the rendered ledger stays within ``max_tokens``.
        max_tokens: the budget for the rendered ledger.
        goal: the pinned goal; a request equal to it is not repeated.
        goal_order: the position among the new items' messages of the goal's own message (``None``: not among
            them). What it asks is the goal, shown beside the summary (an excerpt, when long): a request of its
            omitted middle (a harness template's "Verify your fix works") is never the task or the latest request.
        max_items: at most this many bullets per section (``None``: the budget decides).
    """

    def __init__(
        self,
        counter: TokenCounter,
        max_tokens: int,
        *,
        goal: str | None = None,
        goal_order: int | None = None,
        max_items: int | None = None,
        memo: ReadMemo | None = None,
    ) -> None:
        self.counter = counter
        self.max_tokens = max_tokens
        self.goal = normal(goal) if goal else None
        self._goal_words = frozenset(content_words(goal)) if goal else frozenset()
        # a goal shown as its task and its instructions' rules: the instructions' other lines are archived with it
        self._goal_split = goal is not None and goal.startswith(INSTRUCTIONS_ARCHIVED)
        self.goal_order = goal_order
        self.max_items = max_items
        self.memo = memo if memo is not None else ReadMemo(max_chars=0)

    def _subject(self, text: str) -> tuple[Subject, list[str]]:
        """The subject of a statement and the keys it is found by (``posting_keys``), read once per text."""
        return self.memo.get(("subject", text), lambda: _subject_keys(text), lambda _s: 2 * len(text))

    def _words(self, text: str) -> int:
        """How many content words ``text`` has."""
        return self.memo.get(("words", text), lambda: len(content_words(text)), lambda _n: len(text))

    def _bonus(self, item: Salient) -> float:
        return self.memo.get(("bonus", item.kind, item.text), lambda: structure_bonus(item), lambda _b: len(item.text))

    def _size(self, text: str, cap: int) -> tuple[str, int]:
        """A bullet's shown text and tokens within ``cap`` (:func:`bullet_size`), remembered for this counter.

        The whole bullet's tokens are remembered by text alone (a ledger's cap moves with its budget from one
        compaction to the next); only a bullet over the cap is clipped, and that is counted for its cap.
        """
        counter, tokens = self.memo.get(
            ("bullet", text), lambda: (self.counter, self.counter.count_text(f"- {text}\n")), lambda _s: len(text)
        )
        if counter is not self.counter:  # remembered for another counter: count again
            return bullet_size(self.counter, text, cap)
        if tokens <= cap:
            return text, tokens
        return bullet_size(self.counter, text, cap)

    def build(self, previous: Iterable[Salient], new: Iterable[Salient], tail: Sequence[Salient] = ()) -> str:
        """The rendered ledger of ``previous`` items merged with ``new`` ones (both in conversation order).

        ``tail`` holds the user statements still in view after this compaction: they supersede older statements
        and make the summary's current task and latest request redundant, but are not repeated in it.
        """
        items = self.merge([*previous, *new], tail)
        task, request = self._task(items, tail), self._latest_request(items, tail)
        if task is not None and request is not None and normal(request.text) in normal(task.text):
            request = None  # the latest request is the current task: shown once, as the task
        elif task is not None and request is not None and request.order > task.order and self._asks(request):
            task = None  # a newer request ("can you document it?") is what is asked now: "Now:" would be stale
        # the task and the latest request are shown: a request of theirs (a sentence of the latest message) is not
        shown = [f" {normal(s.text.split(_ANSWERS, 1)[0])} " for s in (task, request) if s is not None]
        asked = [
            i
            for i in items
            if i.kind in ("request", "question")
            and not any(f" {normal(i.text)} " in text for text in shown)  # whole words of it
            and not self._asked_in_goal(i)
            and (any(c.isdigit() for c in i.text) or self._says_enough(i))  # not "Could you help?"
        ]
        asks = ("request", "question", "task")
        rest = [i for i in items if i.kind not in asks and i.key != ASKED and not self._in_goal(i)]
        worked = (
            i.order for i in items if i.kind in _WORK or (i.kind == "decision" and not i.text.startswith(USER_CHOSE))
        )
        selection = Selection(
            self.counter,
            self.max_tokens,
            self.max_items,
            self._bonus,
            self._size,
            answered_below=max(worked, default=-math.inf),
        )
        return selection.fit(selection.select([*rest, *asked], task, request), task, request)

    # -- merging -------------------------------------------------------------------------------------------------
    def merge(self, items: list[Salient], tail: Sequence[Salient] = ()) -> list[Salient]:
        """Dedupe, supersede and aggregate ``items`` (see the module docstring); the result is in order."""
        return merge_items(items, tail, self._subject)

    def _task(self, items: list[Salient], tail: Sequence[Salient]) -> Salient | None:
        """The current task: the latest substantial request, unless a newer one is in view or it is the goal."""
        if any(t.kind == "request" and len(t.text.split()) >= _TASK_WORDS for t in tail):
            return None
        tasks = [
            i
            for i in items
            if ((i.kind == "request" and len(i.text.split()) >= _TASK_WORDS) or i.kind == "task")
            and not self._asked_in_goal(i)
        ]
        if not tasks:
            return None
        last = tasks[-1]
        text = last.text
        if says_yes(text) and len(text.split()) <= _ASSENT_WORDS:
            # "Yes, please proceed with this arrangement.": what it says yes to is the question before it
            asked = [i for i in items if i.key == ASKED and i.order < last.order]
            said = max((i.order for i in items if _users(i) and i.order < last.order), default=-math.inf)
            if asked and asked[-1].order > said:  # not a question the user answered before ("Yes, modify it.")
                text = f"{text}{_ANSWERS}{asked[-1].text})"
        return Salient("task", clip(text, 400), "task", last.order, last.tokens)

    def _says_enough(self, item: Salient) -> bool:
        """An earlier request worth a line: three content words, or a terse order of two words.

        "commit this" and "please research and verify" steered the work; "Could you check flights for that day?" is
        a polite ask the reply has answered, and "better way?" a question that says nothing alone.
        """
        text = item.text
        words = self._words(text)
        terse = not text.rstrip().endswith("?") and len(text.split()) <= _TERSE_WORDS
        return words >= _ASK_WORDS or (words == _ASK_WORDS - 1 and terse) or _ORDER.match(text.strip()) is not None

    def _asks(self, item: Salient) -> bool:
        """``item`` asks for work (at least :data:`_TASK_WORDS` words), not only a short question ("why?")."""
        return len(item.text.split()) >= _TASK_WORDS

    def _in_goal(self, item: Salient) -> bool:
        """The item is part of the pinned goal (shown beside the summary), so the ledger need not repeat it.

        A statement read out of the goal's own message is, when the goal shows every word of it (a list joined into
        one statement), or when the goal is shown as its task and its instructions' rules and it is no rule; so is
        the bullet saying that message was a paste.
        """
        if self.goal is None:
            return False
        if item.order == self.goal_order and item.kind == "paste":
            return True  # "User pasted 224 lines ...": the goal is that paste, shown (or its excerpt and handle)
        if item.order == self.goal_order and item.key == PASTED_FAILURE:  # the bug the goal reports, if it shows it
            return normal(item.text.removeprefix(PASTED_FAILURE).split(" (at line ", 1)[0]) in self.goal
        if item.order == self.goal_order and item.kind in PASTED_STATEMENTS:
            if self._goal_split and item.kind != "constraint":
                return True
            if set(content_words(item.text)) <= self._goal_words:
                return True
        return normal(item.text) in self.goal

    def _asked_in_goal(self, item: Salient) -> bool:
        """A request or question of the goal's own message (all of it, the part an excerpt omits too)."""
        return item.order == self.goal_order or self._in_goal(item)

    def _latest_request(self, items: list[Salient], tail: Sequence[Salient]) -> Salient | None:
        """The user's latest request or question (all of that message's), unless one is still in view."""
        if any(t.kind in ("request", "question") for t in tail):
            return None
        requests = [i for i in items if i.kind in ("request", "question") and not self._asked_in_goal(i)]
        if not requests:
            return None
        newest = requests[-1].order
        text = ""
        for request in (i.text for i in requests if i.order == newest):  # a list's items stay apart: "a; b"
            text = f"{text}{'' if not text else ' ' if text[-1] in '.?!:;' else '; '}{request}"
        if self._words(text) < _SHORT_REQUEST_WORDS and "?" not in text and not says_yes(text):
            # "commit this" asks for what the reply before it reported: the first thing that reply said goes with it
            said = [i for i in items if i.kind in _REPORTED and i.order < newest]
            before = [i for i in said if i.order == said[-1].order] if said else []
            if before:
                text = f"{text}{_AFTER}{clip(before[0].text, 160)})"
        room = max(16, self.max_tokens // 4)  # the request never crowds out the facts
        tokens = self.counter.count_text(text)
        if tokens > room:
            text = clip(text, max(40, len(text) * room // tokens))
        return Salient("request", text, "request", newest, requests[-1].tokens)


def _users(item: Salient) -> bool:
    """``item`` is something the user said: a statement, a request or question, a choice."""
    return item.kind in STATEMENTS or item.kind in ("request", "question", "task") or item.text.startswith(USER_CHOSE)


def _subject_keys(text: str) -> tuple[Subject, list[str]]:
    subject = subject_of(text)
    return subject, posting_keys(subject)
