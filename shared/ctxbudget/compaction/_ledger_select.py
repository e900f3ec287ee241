"""Ranking ledger items by information per token and keeping the best within the ledger's token budget.

An item's value is its kind's weight (what the user stated first), its typed values (ids, paths, amounts, dates,
names: :func:`structure_bonus`), the rarity of its tokens among the items and its recency (:func:`with_rarity`);
items are taken by value per square root of their tokens, each section first getting its share of the budget. The
rendered ledger is then fitted: the least valuable bullets go while it is over budget.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain

from ..messages.tokens import TokenCounter, count_text_by_lines
from ._artifacts import ONLY_LISTED
from ._kept import Kept, Scored
from ._ledger_text import RESOLVED, SECTION_OF, STATEMENTS, SUPERSEDED, read_from_paste, render_ledger
from ._records import record_field, tool_name, word_field
from ._reverts import REVERTED
from ._salient import USER_CHOSE, SalienceKind, Salient
from .calls import is_read_command
from .textscan import clip, scan

__all__ = ["Scored", "Selection", "bullet_size", "structure_bonus", "with_rarity"]

_WEIGHT: dict[SalienceKind, float] = {
    "constraint": 4.0,
    "preference": 3.8,
    "fact": 3.4,
    "task": 3.2,
    "error": 2.6,
    "decision": 2.4,
    "request": 1.8,
    "finding": 1.9,
    "paste": 3.6,
    "artifact": 2.0,
    "open": 1.8,
    "command": 2.0,
    "figure": 1.2,
    "note": 1.0,
    "call": 0.8,
    "question": 1.4,
}
_SHARES = {  # the budget each section is sure of before the rest goes to the best items overall
    "Task": 0.10,
    "User facts and constraints": 0.30,
    "Decisions": 0.08,
    "Findings": 0.08,
    "Files and artifacts": 0.12,
    "Commands and results": 0.14,
    "Errors": 0.08,
    "Open items": 0.04,
    "Notes": 0.04,
}
_HALF = dict.fromkeys(_SHARES, 0.5)
"""The second pass: no section past half the budget while others have items left (the last pass lifts it)."""
_BONUSED = frozenset({*STATEMENTS, "decision", "finding", "task"})
_STRONG_VALUES = frozenset(
    {"path", "money", "date", "person", "email", "url", "hostport", "host", "version", "timezone"}
)
_WORD_FIELD = 0.6
"""A record's word attribute weighs this share of its other fields."""
_SAMPLED = re.compile(r" \(1 of \d+\)$")
_UPPER_LABEL = re.compile(r"^[A-Z][A-Z0-9 _-]{2,30}:")
_LABEL_WORDS = re.compile(r"[\s_-]+")
"""Where the words of a capitals label split (``SAFETY RULE``, ``HARD_CONSTRAINT``, ``USER-PREFERENCE``)."""
_KIND_WORDS = frozenset(
    [
        "fact",
        "facts",
        "constraint",
        "constraints",
        "hard",
        "soft",
        "safety",
        "rule",
        "rules",
        "goal",
        "goals",
        "preference",
        "preferences",
        "user",
        "note",
        "notes",
        "important",
        "info",
        "reminder",
        "requirement",
        "requirements",
        "policy",
        "key",
        "critical",
        "state",
    ]
)
"""Words of a capitals label that only name what kind of statement follows ("HARD CONSTRAINT:", "SAFETY RULE:"):
such a label may go when the section says it; any other label ("DO NOT MODIFY:") is part of the statement."""
_CAUSE = re.compile(r"(?:error|exception)\b", re.IGNORECASE)
"""A failure line that names its cause (``ModuleNotFoundError: ...``, ``ERROR: No matching distribution``), not only
an exit status."""
_PROGRESS = re.compile(r"^[A-Z][a-z]{2,}ing\b(?<!\b[Tt]hing)(?<!\b[Ss]tring)(?<!\b[Nn]othing)(?<!\b[Ee]verything)")


@dataclass(frozen=True)
class Selection:
    """Selecting and fitting ledger items within ``max_tokens`` as counted by ``counter``.

    Args:
        counter: counts bullet tokens.
        max_tokens: the budget for the rendered ledger.
        max_items: at most this many bullets per section (``None``: the budget decides).
        bonus: an item's structure bonus (:func:`structure_bonus`, e.g. remembered per item).
        size: a bullet's shown text and tokens within a cap (:func:`bullet_size` with ``counter``, e.g. remembered).
    """

    counter: TokenCounter
    max_tokens: int
    max_items: int | None
    bonus: Callable[[Salient], float]
    size: Callable[[str, int], tuple[str, int]] | None = None
    answered_below: float = -math.inf
    """Requests ordered before this (the last work recorded) are written as earlier ones, not as still asked."""

    def select(self, items: list[Salient], task: Salient | None, request: Salient | None) -> list[Scored]:
        """Score every item by information per token and keep the best that fit the budget."""
        if not items:
            return []
        budget = self.max_tokens - self.frame_tokens(task, request)
        cap = max(24, budget // 2)
        scored = _diminished([self._scored(item, weights, cap) for item, weights in with_rarity(items)])
        if sum(entry.tokens for entry in scored) > budget:
            # Over budget: a label written in capitals ("SAFETY RULE:", "FACT:") is dropped from statements first.
            # The section already says what they are, and the words after it are the statement itself.
            scored = [self._unlabelled(entry) for entry in scored]
        ranked = sorted(scored, key=lambda s: (-s.value / math.sqrt(max(1, s.tokens)), -s.item.order))
        alone = self._field_costs(ranked, cap)
        # Three passes: each section first gets its share of the budget (so one kind never crowds out the others),
        # then the best remaining items while no section holds more than half, then whatever still fits. A record's
        # field is shown in its call's bullet when that is kept (it costs the field alone), else under the tool's
        # name (``get_order: "tracking_id": "1Z66"``). Each pass goes through the items no pass took yet, best first.
        sections = [SECTION_OF[entry.item.kind] for entry in ranked]
        # What the user pasted (a harness's instruction template, an issue) is not what they said: it has no share of
        # its own and competes with every other section's items. A file a search or a listing only named is not one
        # the work touched: it takes only the room the first two passes leave (it can be found again by searching).
        from_paste = read_from_paste(entry.item for entry in ranked)
        unshared = {i for i, entry in enumerate(ranked) if from_paste(entry.item)}
        listed = {i for i, entry in enumerate(ranked) if _only_listed(entry.item)}
        kept = Kept()
        left = list(range(len(ranked)))
        for shares in (_SHARES, _HALF, None):
            passed: list[int] = []
            for index in left:
                entry, section = ranked[index], sections[index]
                if (self.max_items is not None and kept.per_section[section] >= self.max_items) or (
                    (shares is _SHARES and index in unshared) or (shares is not None and index in listed)
                ):
                    passed.append(index)
                    continue
                if kept.shows(entry.item):
                    continue  # a figure line its call's bullet, kept, shows
                field = alone.get(index)
                cost = field[1] if field is not None and field[0] in kept.calls else entry.tokens
                if (shares is not None and kept.spent[section] + cost > shares.get(section, 0.0) * budget) or (
                    kept.used + cost > budget
                ):
                    passed.append(index)
                    continue
                kept.add(entry, cost, section)
            left = passed
        said = {id(entry): at for at, entry in enumerate(scored)}  # scored is in conversation order
        return sorted(kept.entries(), key=lambda entry: said[id(entry)])  # a message's items as it said them

    def _field_costs(self, ranked: list[Scored], cap: int) -> dict[int, tuple[str, int]]:
        """The record fields among ``ranked`` (``<call> -> ok: "key": value``): each one's call, and its tokens alone.

        A field's own tokens (:func:`_scored`) are those of its fallback bullet, ``<tool>: "key": value``.
        """
        out: dict[int, tuple[str, int]] = {}
        for index, entry in enumerate(ranked):
            field = record_field(entry.item.text) if entry.item.kind == "figure" else None
            if field is not None:
                out[index] = (field[0], self._size(field[1], cap)[1])
        return out

    def _scored(self, given: Salient, rarity: tuple[float, float], cap: int) -> Scored:
        item = given
        rare, recency = rarity
        value = _WEIGHT[item.kind] * (0.35 + rare + self.bonus(item)) + 0.4 * recency
        if (item.kind == "error" and item.text.endswith(RESOLVED)) or item.text.startswith((SUPERSEDED, REVERTED)):
            value *= 0.5
        elif item.kind in ("command", "call") and " -> FAILED" in item.text:
            value *= 1.3
        elif item.kind == "decision" and item.text.startswith(USER_CHOSE):
            value *= _WEIGHT["fact"] / _WEIGHT["decision"]  # the user's own choice weighs as what they stated
        elif item.kind in ("request", "question") and item.order < self.answered_below:
            value *= 0.75  # an earlier request the conversation went on from is history; an open error is not
        elif item.kind == "figure" and _SAMPLED.search(item.text):
            value *= 0.5  # one value of a column ("price": 216.03 (1 of 14)) says little about the other thirteen
        elif item.kind == "artifact" and ONLY_LISTED.search(item.text):
            value *= 0.25  # a file a search or a listing named, nothing done to it: running it again names it
        elif item.kind == "command" and is_read_command(item.text.split(": ", 1)[-1].split(" -> ", 1)[0]):
            value *= 0.6  # it only showed files (sed -n, cat, grep): it can be run again, unlike a pip install
        field = record_field(item.text) if item.kind == "figure" else None
        if field is not None and word_field(field[1]):
            value *= _WORD_FIELD  # "membership": "gold" says what the record is; its ids and amounts come first
        if field is not None:  # a record's field: without its call's bullet it is shown under the tool's name
            _, tokens = self._size(f"{tool_name(field[0])}: {field[1]}", cap)
            return Scored(item, value, tokens)
        shown, tokens = self._size(item.text, cap)
        if shown != item.text:
            item = item._replace(text=shown)
        return Scored(item, value, tokens)

    def _size(self, text: str, cap: int) -> tuple[str, int]:
        return self.size(text, cap) if self.size is not None else bullet_size(self.counter, text, cap)

    def _unlabelled(self, entry: Scored) -> Scored:
        label = _UPPER_LABEL.match(entry.item.text)
        if label is None or entry.item.kind not in STATEMENTS or any(ch.isdigit() for ch in label.group(0)):
            return entry  # a numbered label ("FACT-7:") is the item's id: it stays
        if not set(_LABEL_WORDS.split(label.group(0)[:-1].lower())) <= _KIND_WORDS:
            return entry  # "DO NOT MODIFY:", "MODIFY:" say what the rule is: without them it reads the other way
        item = entry.item._replace(text=entry.item.text[label.end() :].strip())
        return Scored(item, entry.value, self.counter.count_text(f"- {item.text}\n"))

    def frame_tokens(self, task: Salient | None, request: Salient | None) -> int:
        """Tokens of the ledger's frame: the task and latest request with no other bullet, and a margin."""
        return count_text_by_lines(self.counter, self._render([], task, request)) + 8

    def _render(self, kept: Sequence[Scored], task: Salient | None, request: Salient | None) -> str:
        return render_ledger([entry.item for entry in kept], task, request, answered_below=self.answered_below)

    def fit(self, kept: list[Scored], task: Salient | None, request: Salient | None) -> str:
        """Render, then drop the least valuable bullets while the whole is over budget (seams may cost a token).

        Each rendering is counted from its lines (most stood in the rendering before: only new ones are encoded).
        """
        count = functools.partial(count_text_by_lines, self.counter)
        text = self._render(kept, task, request)
        order = sorted(kept, key=lambda s: s.value / math.sqrt(max(1, s.tokens)))
        while count(text) > self.max_tokens and order:
            victim = order.pop(0)
            kept = [k for k in kept if k is not victim]
            text = self._render(kept, task, request)
        for shorten in (request, task):
            if count(text) > self.max_tokens and shorten is not None:
                short = shorten._replace(text=clip(shorten.text, 80))
                task, request = (short, request) if shorten is task else (task, short)
                text = self._render(kept, task, request)
        if count(text) > self.max_tokens:
            text = self._render(kept, None, None)
        return text


def _only_listed(item: Salient) -> bool:
    """``item`` is a file a search or a listing only named (``a.go (found by Grep)``)."""
    return item.kind == "artifact" and ONLY_LISTED.search(item.text) is not None


def _diminished(scored: list[Scored]) -> list[Scored]:
    """Repeats worth less after the first: the n-th of a group keeps 1/n of its value.

    The groups: the findings of one message (ranked by value), the statements read out of one pasted message (a
    harness's instruction template, a pasted issue or document: ranked by value), and the errors that failed the
    same way (the same failure line naming a cause, an exception or an error message, from other commands; the
    newest first). An agent thinking aloud states a dozen specifics in one message ("So `_cstack` is called with
    ..."), and tries five ways round one missing module; each bullet alone reads as worth keeping, and short ones
    rank high per token, so one monologue, one pasted template's dozen rules or one failure would fill the ledger
    while the other errors and outcomes around them drop out (the paste itself is archived, and its bullet names
    where). Nothing is dropped here: with room, repeats stay.
    """
    groups: dict[tuple[str, object], list[int]] = {}
    from_paste = read_from_paste(entry.item for entry in scored)
    for index, entry in enumerate(scored):
        item = entry.item
        if item.kind == "finding" and item.order >= 0:
            groups.setdefault(("finding", item.order), []).append(index)
        elif from_paste(item):
            groups.setdefault(("pasted", item.order), []).append(index)
        elif item.kind == "error" and " -> " in item.text:
            failure = item.text.removesuffix(RESOLVED).split(" -> ", 1)[1]
            if _CAUSE.search(failure):  # "exit code 1" says only that a command failed: it is told by the command
                groups.setdefault(("error", failure.lower()), []).append(index)
    out = list(scored)
    for (kind, _), indices in groups.items():
        first = (lambda i: -scored[i].value) if kind != "error" else (lambda i: -scored[i].item.order)
        for rank, index in enumerate(sorted(indices, key=first)[1:], start=2):
            out[index] = scored[index]._replace(value=scored[index].value / rank)
    return out


def bullet_size(counter: TokenCounter, text: str, cap: int) -> tuple[str, int]:
    """The text a bullet shows within ``cap`` tokens, and its tokens as a bullet.

    One long bullet never takes more than a share of a small budget: it is clipped to about ``cap``.
    """
    tokens = counter.count_text(f"- {text}\n")
    if tokens > cap:
        text = clip(text, max(40, len(text) * cap // tokens))
        tokens = counter.count_text(f"- {text}\n")
    return text, tokens


def with_rarity(items: list[Salient]) -> list[tuple[Salient, tuple[float, float]]]:
    """Each item with its rarity (its rarest tokens within these items, 0..1) and recency (0..1)."""
    df = Counter(chain.from_iterable(item.tokens for item in items))
    total = len(items)
    newest = max(i.order for i in items)
    oldest = min(i.order for i in items)
    span = max(1, newest - oldest)
    top = math.log(total + 1)
    # A value (an id, path, amount, name: anything but a plain word) weighs as a rare word however often it recurs:
    # the same code named in three rules is no less worth keeping; a word weighs by its rarity among the items.
    weight = {t: top if not t.isalpha() else math.log((total + 1) / n) for t, n in df.items()}
    out = []
    scale = 4 * math.log(total + 1)
    for item in items:
        rare = sorted(map(weight.__getitem__, item.tokens), reverse=True)[:4]
        out.append((item, (sum(rare) / scale if rare else 0.0, (item.order - oldest) / span)))
    return out


def structure_bonus(item: Salient) -> float:
    """More for typed values (ids, paths, amounts, dates, names) and for a label the user wrote in capitals."""
    if item.kind not in _BONUSED:
        return 0.0
    found = scan(item.text[:400]).values
    kinds = [v.kind for v in found]
    strong = sum(1 for k in kinds if k in _STRONG_VALUES) + sum(
        1 for v in found if v.kind == "identifier" and any(c.isdigit() for c in v.text)
    )
    weak = len(kinds) - strong
    bonus = 0.3 * min(2, strong) + 0.1 * min(2, max(0, weak))
    if item.kind == "fact" and not kinds:
        bonus -= 0.25  # a fact with no value still counts, after those that name something
    if _PROGRESS.match(item.text):
        bonus -= 0.3  # "Reviewing the module layout": a note of what was being done, not a fact about the work
    return bonus + (0.25 if _UPPER_LABEL.match(item.text) else 0.0)
