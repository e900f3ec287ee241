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
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..messages.tokens import TokenCounter
from .memo import ReadMemo
from .salience import SalienceKind, Salient, item_key
from .statements import classify
from .supersession import PREFIX as _VALUE_PREFIX
from .supersession import Subject, SupersessionIndex, subject_of
from .textscan import clip, content_words, informative_tokens, scan

__all__ = ["LEDGER_SECTIONS", "Ledger", "parse_ledger"]

LEDGER_SECTIONS = (
    "Task",
    "User facts and constraints",
    "Decisions",
    "Findings",
    "Files and artifacts",
    "Commands and results",
    "Errors",
    "Open items",
    "Latest request",
    "Notes",
)
"""The sections of a ledger, in order. ``Notes`` holds free text from a summary written elsewhere (untrusted)."""

_SECTION_OF: dict[SalienceKind, str] = {
    "task": "Task",
    "constraint": "User facts and constraints",
    "preference": "User facts and constraints",
    "fact": "User facts and constraints",
    "paste": "User facts and constraints",
    "decision": "Decisions",
    "finding": "Findings",
    "artifact": "Files and artifacts",
    "command": "Commands and results",
    "call": "Commands and results",
    "figure": "Commands and results",
    "error": "Errors",
    "open": "Open items",
    "request": "Task",
    "question": "Task",
    "note": "Notes",
}
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
_STATEMENTS = frozenset({"fact", "constraint", "preference", "paste"})
_SPOKEN = frozenset({*_STATEMENTS, "request", "question", "decision", "finding", "task"})
_BONUSED = frozenset({*_STATEMENTS, "decision", "finding", "task"})
_STRONG_VALUES = frozenset(
    {"path", "money", "date", "person", "email", "url", "hostport", "host", "version", "timezone"}
)
_HEADING = re.compile(r"^#{1,4}\s+(\S.*)$")
_LEGACY = {  # sections of summaries written before this ledger (snapshots keep them)
    "Decisions and facts": "Decisions",
    "Files and commands": "Commands and results",
    "Goal": "Task",
}
_NOW = "Now: "
_ASKED = "Asked: "
_ORIGIN = "Origin: "
_RESOLVED = " (resolved later)"
_SAMPLED = re.compile(r" \(1 of \d+\)$")
_OPS_SPLIT = re.compile(r" -> | — ")
_COUNT = re.compile(r"^(.*?) x(\d+)$")
_UPPER_LABEL = re.compile(r"^[A-Z][A-Z0-9 _-]{2,30}:")
_TASK_WORDS = 5
_CONTAINMENT_ITEMS = 600
"""Statements past this many are deduped by exact text only (containment is checked pairwise)."""
_PROGRESS = re.compile(r"^[A-Z][a-z]{2,}ing\b(?<!\b[Tt]hing)(?<!\b[Ss]tring)(?<!\b[Nn]othing)(?<!\b[Ee]verything)")


_KIND_OF_SECTION: dict[str, SalienceKind] = {
    "Decisions": "decision",
    "Findings": "finding",
    "Files and artifacts": "artifact",
    "Errors": "error",
    "Open items": "open",
    "Latest request": "request",
    "Notes": "note",
}


def _kind_for(section: str, text: str) -> SalienceKind | None:
    """The kind of a bullet read back from ``section`` (``None``: skip it)."""
    if section == "User facts and constraints":
        kind = "paste" if text.startswith("User pasted ") else classify(text)
        return kind if kind in _STATEMENTS else "fact"
    if section == "Task":
        # the task then ("Now: ...") is a request like any other now; a newer one makes it "Asked"
        return None if text.startswith(_ORIGIN) else "request"
    if section == "Commands and results":
        if " -> " not in text:
            return "figure"
        return "command" if text.split(" -> ", 1)[0].split(":", 1)[0].count(" ") == 0 and ": " in text else "call"
    return _KIND_OF_SECTION.get(section, "note")


def parse_ledger(summary: str | None, *, memo: ReadMemo | None = None) -> list[Salient]:
    """The items of an earlier summary, oldest first, ordered before anything new (negative ``order``).

    Bullets under an unknown heading, and free text outside any heading (a summary another summarizer wrote), are
    read as notes: they never enter a section a ledger trusts (facts, decisions, errors ...). With ``memo``, a
    summary read before is not read again.
    """
    if not summary:
        return []
    if memo is not None:
        return list(
            memo.get(("ledger", summary), lambda: tuple(_parse(summary, memo)), lambda _items: 2 * len(summary))
        )
    return _parse(summary)


def _parse(summary: str, memo: ReadMemo | None = None) -> list[Salient]:
    parsed: list[tuple[SalienceKind, str]] = []
    section: str | None = None
    for line in summary.splitlines():
        heading = _HEADING.match(line)
        if heading:
            name = heading.group(1).strip().rstrip(":").strip()
            section = _LEGACY.get(name, name if name in LEDGER_SECTIONS else "Notes")
            continue
        text = line.strip().removeprefix("- ").strip()
        if not text or text == "(none)" or (section is None and text.startswith("[")):
            continue
        kind = _kind_for(section, text) if section else "note"
        if kind is not None:
            parsed.append((kind, text.removeprefix(_NOW).removeprefix(_ASKED)))
    total = len(parsed)
    tokens_of = informative_tokens
    if memo is not None:  # a bullet usually stood in the summary before this one too: its tokens are known
        tokens_of = lambda text: memo.get(("tokens", text), lambda: informative_tokens(text), len)  # noqa: E731
    return [
        Salient(kind, text, item_key(kind, text), index - total, tokens_of(text))
        for index, (kind, text) in enumerate(parsed)
    ]


@dataclass(frozen=True)
class _Scored:
    item: Salient
    value: float
    tokens: int


_NOT_WORD = re.compile(r"[^\w$€£%./:@-]+")


def _normal_form(text: str) -> str:
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


_NORMAL_CACHE = 8_192
_NORMAL_CHARS = 600
"""Bullets up to this long have their normal form remembered (:data:`_NORMAL_CACHE` of them: at most about 10 MB)."""
_normal_cached = functools.lru_cache(maxsize=_NORMAL_CACHE)(_normal_form)


def _normal(text: str) -> str:
    """``text`` lower-cased, its punctuation (but that of values) a space, its spaces collapsed: how repeats match.

    A bullet's form is remembered: each merge compares every item of the ledger, most of them seen before.
    """
    return _normal_cached(text) if len(text) <= _NORMAL_CHARS else _normal_form(text)


class Ledger:
    """Merge, rank and render ledger items within a token budget.

    Args:
        counter: counts bullet tokens so the rendered ledger stays within ``max_tokens``.
        max_tokens: the budget for the rendered ledger.
        goal: the pinned goal; a request equal to it is not repeated.
        max_items: at most this many bullets per section (``None``: the budget decides).
    """

    def __init__(
        self,
        counter: TokenCounter,
        max_tokens: int,
        *,
        goal: str | None = None,
        max_items: int | None = None,
        memo: ReadMemo | None = None,
    ) -> None:
        self.counter = counter
        self.max_tokens = max_tokens
        self.goal = _normal(goal) if goal else None
        self.max_items = max_items
        self.memo = memo if memo is not None else ReadMemo(max_chars=0)

    def _subject(self, text: str) -> tuple[Subject, list[str]]:
        """The subject of a statement and the keys it is found by (:func:`_posting_keys`), read once per text."""
        return self.memo.get(("subject", text), lambda: _subject_keys(text), lambda _s: 2 * len(text))

    def _words(self, text: str) -> int:
        """How many content words ``text`` has."""
        return self.memo.get(("words", text), lambda: len(content_words(text)), lambda _n: len(text))

    def _bonus(self, item: Salient) -> float:
        return self.memo.get(("bonus", item.kind, item.text), lambda: _structure_bonus(item), lambda _b: len(item.text))

    def build(self, previous: Iterable[Salient], new: Iterable[Salient], tail: Sequence[Salient] = ()) -> str:
        """The rendered ledger of ``previous`` items merged with ``new`` ones (both in conversation order).

        ``tail`` holds the user statements still in view after this compaction: they supersede older statements
        and make the summary's current task and latest request redundant, but are not repeated in it.
        """
        items = self.merge([*previous, *new], tail)
        task, request = self._task(items, tail), self._latest_request(items, tail)
        if task is not None and request is not None and _normal(request.text) in _normal(task.text):
            request = None  # the latest request is the current task: shown once, as the task
        shown = {_normal(s.text) for s in (task, request) if s is not None}
        asked = [
            i
            for i in items
            if i.kind in ("request", "question")
            and _normal(i.text) not in shown
            and not self._in_goal(i)
            and (any(c.isdigit() for c in i.text) or self._words(i.text) >= 3)  # not "Could you help?"
        ]
        rest = [i for i in items if i.kind not in ("request", "question", "task") and not self._in_goal(i)]
        kept = self._select([*rest, *asked], task, request)
        return self._fit(kept, task, request)

    # -- merging -------------------------------------------------------------------------------------------------
    def merge(self, items: list[Salient], tail: Sequence[Salient] = ()) -> list[Salient]:
        """Dedupe, supersede and aggregate ``items`` (see the module docstring); the result is in order."""
        items = self._dedupe(sorted(items, key=lambda i: i.order))
        items = self._supersede(items, tail)
        items = self._keyed(items)
        items = self._latest_open(items)
        return _resolve_errors(items)

    @staticmethod
    def _dedupe(items: list[Salient]) -> list[Salient]:
        """The same text twice (however spaced, cased or punctuated) is one bullet, at its later position.

        A statement whose words another one of its section holds whole ("Let's focus on X." beside "Let's focus on
        X. Can we check Y?") is that one.
        """
        slots = [(_SECTION_OF[item.kind], _normal(item.text)) for item in items]
        last = {slot: index for index, slot in enumerate(slots)}
        kept = [item for index, item in enumerate(items) if last[slots[index]] == index]
        spoken = [item for item in kept if item.kind in _SPOKEN]
        if len(spoken) > _CONTAINMENT_ITEMS:
            return kept
        texts = [(_SECTION_OF[i.kind], f" {_normal(i.text)} ") for i in spoken]
        inside = {
            id(item)
            for item, (section, text) in zip(spoken, texts, strict=True)
            if any(other != text and section == where and text in other for where, other in texts)
        }
        return [item for item in kept if id(item) not in inside]

    def _supersede(self, items: list[Salient], tail: Sequence[Salient]) -> list[Salient]:
        """Drop each statement (and decision) a later one replaces, the tail's statements included."""
        dead: set[int] = set()
        pools = (
            (_STATEMENTS, False),
            (frozenset({"decision", "finding"}), True),
            (frozenset({"request", "question"}), True),
        )
        for kinds, counters_change in pools:
            pool = [i for i, item in enumerate(items) if item.kind in kinds]
            later = [t for t in tail if t.kind in kinds]
            read = [self._subject(items[i].text) for i in pool] + [self._subject(t.text) for t in later]
            index = SupersessionIndex([subject for subject, _ in read], counters_change=counters_change)
            postings: dict[str, list[int]] = {}
            for position, (_, keys) in enumerate(read):
                # An earlier summary's statements were resolved when it was built: only new ones replace anything.
                fresh = position >= len(pool) or items[pool[position]].order >= 0
                candidates = {p for key in keys for p in postings.get(key, ())} if fresh else set()
                candidates -= {p for p in candidates if p < len(pool) and pool[p] in dead}
                earlier = index.replaced_by(position, sorted(candidates)) if candidates else None
                if earlier is not None and earlier < len(pool):
                    dead.add(pool[earlier])
                for key in keys:
                    postings.setdefault(key, []).append(position)
        return [item for i, item in enumerate(items) if i not in dead]

    @staticmethod
    def _keyed(items: list[Salient]) -> list[Salient]:
        """One bullet per key: a file's operations aggregated, a command's or call's latest outcome."""
        latest: dict[tuple[str, str], int] = {}
        out: list[Salient | None] = []
        for item in items:
            if item.key is None or item.kind not in ("artifact", "command", "call", "error"):
                out.append(item)
                continue
            slot = (_SECTION_OF[item.kind], item.key)
            if slot in latest:
                earlier = out[latest[slot]]
                out[latest[slot]] = None
                if item.kind == "artifact" and earlier is not None:
                    item = _merge_artifact(earlier, item)  # noqa: PLW2901  # the merged bullet takes its place
            latest[slot] = len(out)
            out.append(item)
        return [item for item in out if item is not None]

    @staticmethod
    def _latest_open(items: list[Salient]) -> list[Salient]:
        """Open items of the latest message that left any (an earlier "next step" was taken or replaced)."""
        opens = [item.order for item in items if item.kind == "open" and item.key == "open"]
        newest = max(opens, default=None)
        return [item for item in items if item.kind != "open" or item.key != "open" or item.order == newest]

    def _task(self, items: list[Salient], tail: Sequence[Salient]) -> Salient | None:
        """The current task: the latest substantial request, unless a newer one is in view or it is the goal."""
        if any(t.kind == "request" and len(t.text.split()) >= _TASK_WORDS for t in tail):
            return None
        tasks = [
            i
            for i in items
            if ((i.kind == "request" and len(i.text.split()) >= _TASK_WORDS) or i.kind == "task")
            and not self._in_goal(i)
        ]
        if not tasks:
            return None
        last = tasks[-1]
        return Salient("task", clip(last.text, 400), "task", last.order, last.tokens)

    def _in_goal(self, item: Salient) -> bool:
        """The item is part of the pinned goal (shown beside the summary), so the ledger need not repeat it."""
        return self.goal is not None and _normal(item.text) in self.goal

    def _latest_request(self, items: list[Salient], tail: Sequence[Salient]) -> Salient | None:
        """The user's latest request or question (all of that message's), unless one is still in view."""
        if any(t.kind in ("request", "question") for t in tail):
            return None
        requests = [i for i in items if i.kind in ("request", "question") and not self._in_goal(i)]
        if not requests:
            return None
        newest = requests[-1].order
        text = " ".join(i.text for i in requests if i.order == newest)
        room = max(16, self.max_tokens // 4)  # the request never crowds out the facts
        tokens = self.counter.count_text(text)
        if tokens > room:
            text = clip(text, max(40, len(text) * room // tokens))
        return Salient("request", text, "request", newest, requests[-1].tokens)

    # -- ranking -------------------------------------------------------------------------------------------------
    def _select(self, items: list[Salient], task: Salient | None, request: Salient | None) -> list[_Scored]:
        """Score every item by information per token and keep the best that fit the budget."""
        if not items:
            return []
        budget = self.max_tokens - self._frame_tokens(task, request)
        cap = max(24, budget // 2)
        scored = [self._scored(item, weights, cap) for item, weights in _with_rarity(items)]
        if sum(entry.tokens for entry in scored) > budget:
            # Over budget: a label written in capitals ("SAFETY RULE:", "FACT:") is dropped from statements first.
            # The section already says what they are, and the words after it are the statement itself.
            scored = [self._unlabelled(entry) for entry in scored]
        ranked = sorted(scored, key=lambda s: (-s.value / math.sqrt(max(1, s.tokens)), -s.item.order))
        kept: list[_Scored] = []
        taken: set[int] = set()
        per_section: Counter[str] = Counter()
        spent: Counter[str] = Counter()
        used = 0
        # Three passes: each section first gets its share of the budget (so one kind never crowds out the others),
        # then the best remaining items while no section holds more than half, then whatever still fits.
        for shares in (_SHARES, _HALF, None):
            for index, entry in enumerate(ranked):
                section = _SECTION_OF[entry.item.kind]
                if index in taken or (self.max_items is not None and per_section[section] >= self.max_items):
                    continue
                if shares is not None and spent[section] + entry.tokens > shares.get(section, 0.0) * budget:
                    continue
                if used + entry.tokens <= budget:
                    kept.append(entry)
                    taken.add(index)
                    used += entry.tokens
                    spent[section] += entry.tokens
                    per_section[section] += 1
        return kept

    def _scored(self, given: Salient, rarity: tuple[float, float], cap: int) -> _Scored:
        item = given
        rare, recency = rarity
        value = _WEIGHT[item.kind] * (0.35 + rare + self._bonus(item)) + 0.4 * recency
        if item.kind == "error" and item.text.endswith(_RESOLVED):
            value *= 0.5
        elif item.kind in ("command", "call") and " -> FAILED" in item.text:
            value *= 1.3
        elif item.kind == "figure" and _SAMPLED.search(item.text):
            value *= 0.5  # one value of a column ("price": 216.03 (1 of 14)) says little about the other thirteen
        tokens = self.counter.count_text(f"- {item.text}\n")
        if tokens > cap:  # one long bullet never takes more than a share of a small budget
            item = replace(item, text=clip(item.text, max(40, len(item.text) * cap // tokens)))
            tokens = self.counter.count_text(f"- {item.text}\n")
        return _Scored(item, value, tokens)

    def _unlabelled(self, entry: _Scored) -> _Scored:
        label = _UPPER_LABEL.match(entry.item.text)
        if label is None or entry.item.kind not in _STATEMENTS or any(ch.isdigit() for ch in label.group(0)):
            return entry  # a numbered label ("FACT-7:") is the item's id: it stays
        item = replace(entry.item, text=entry.item.text[label.end() :].strip())
        return _Scored(item, entry.value, self.counter.count_text(f"- {item.text}\n"))

    def _frame_tokens(self, task: Salient | None, request: Salient | None) -> int:
        return self.counter.count_text(self._render([], task, request)) + 8

    # -- rendering -----------------------------------------------------------------------------------------------
    @staticmethod
    def _render(kept: Sequence[_Scored], task: Salient | None, request: Salient | None) -> str:
        by_section: dict[str, list[str]] = {name: [] for name in LEDGER_SECTIONS}
        if task is not None:
            by_section["Task"].append(_NOW + task.text)
        for entry in sorted(kept, key=lambda s: s.item.order):
            asked = entry.item.kind in ("request", "question")
            by_section[_SECTION_OF[entry.item.kind]].append(_ASKED + entry.item.text if asked else entry.item.text)
        if request is not None:
            by_section["Latest request"] = [request.text]
        blocks = [
            f"## {name}\n" + "\n".join(f"- {b}" for b in bullets) for name, bullets in by_section.items() if bullets
        ]
        return "\n".join(blocks) if blocks else "## Open items\n- (none)"

    def _fit(self, kept: list[_Scored], task: Salient | None, request: Salient | None) -> str:
        """Render, then drop the least valuable bullets while the whole is over budget (seams may cost a token)."""
        text = self._render(kept, task, request)
        order = sorted(kept, key=lambda s: s.value / math.sqrt(max(1, s.tokens)))
        while self.counter.count_text(text) > self.max_tokens and order:
            victim = order.pop(0)
            kept = [k for k in kept if k is not victim]
            text = self._render(kept, task, request)
        for shorten in (request, task):
            if self.counter.count_text(text) > self.max_tokens and shorten is not None:
                short = replace(shorten, text=clip(shorten.text, 80))
                task, request = (short, request) if shorten is task else (task, short)
                text = self._render(kept, task, request)
        if self.counter.count_text(text) > self.max_tokens:
            text = self._render(kept, None, None)
        return text


def _subject_keys(text: str) -> tuple[Subject, list[str]]:
    subject = subject_of(text)
    return subject, _posting_keys(subject)


def _posting_keys(subject: Subject) -> list[str]:
    """What a statement can be found by as a candidate for supersession: its words, slots and value prefixes."""
    prefixes = {f"value:{value[:_VALUE_PREFIX]}" for value in subject.values if len(value) > _VALUE_PREFIX}
    label = [f"label:{subject.label_id}"] if subject.label_id else []
    return [*subject.words, *(f"slot:{slot}" for slot in subject.slots), *prefixes, *label]


def _with_rarity(items: list[Salient]) -> list[tuple[Salient, tuple[float, float]]]:
    """Each item with its rarity (its rarest tokens within these items, 0..1) and recency (0..1)."""
    df: Counter[str] = Counter()
    for item in items:
        df.update(item.tokens)
    total = len(items)
    newest = max(i.order for i in items)
    oldest = min(i.order for i in items)
    span = max(1, newest - oldest)
    top = math.log(total + 1)
    # A value (an id, path, amount, name: anything but a plain word) weighs as a rare word however often it recurs:
    # the same code named in three rules is no less worth keeping; a word weighs by its rarity among the items.
    weight = {t: top if not t.isalpha() else math.log((total + 1) / n) for t, n in df.items()}
    out = []
    for item in items:
        rare = sorted((weight[t] for t in item.tokens), reverse=True)[:4]
        rarity = sum(rare) / (4 * math.log(total + 1)) if rare else 0.0
        out.append((item, (rarity, (item.order - oldest) / span)))
    return out


def _structure_bonus(item: Salient) -> float:
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


def _merge_artifact(earlier: Salient, later: Salient) -> Salient:
    """One bullet for a file: its operations in order (``read, edited x2``), the latest result line or failure."""
    path = later.text.split(": ", 1)[0] if ": " in later.text else later.key or ""
    ops = _ops(earlier.text) + _ops(later.text)
    detail = _detail(later.text) if " -> " in later.text or not _ops(later.text) else None  # the latest state
    counted: dict[str, int] = {}
    for op, count in ops:
        counted[op] = counted.get(op, 0) + count
    shown = ", ".join(op if n == 1 else f"{op} x{n}" for op, n in counted.items())
    text = f"{path}: {shown}" if shown else later.text
    if detail:
        text = f"{text} -> {detail}"
    return replace(later, text=clip(text, 280), tokens=informative_tokens(text))


def _ops(text: str) -> list[tuple[str, int]]:
    """The operations of an artifact bullet ``path: read, edited x2 -> ...``; ``[]`` for an output line."""
    if ": " not in text:
        return []
    head = _OPS_SPLIT.split(text.split(": ", 1)[1], maxsplit=1)[0]
    out = []
    for part in head.split(", "):
        match = _COUNT.match(part)
        op, count = (match.group(1), int(match.group(2))) if match else (part, 1)
        if op.isalpha() and len(op) <= 10:
            out.append((op, count))
    return out if len(out) == len(head.split(", ")) else []


def _detail(text: str) -> str | None:
    """What an artifact bullet says beyond its operations: a failure, or an output line that named the file."""
    if " -> " in text:
        return text.split(" -> ", 1)[1]
    return None if _ops(text) else text


def _resolve_errors(items: list[Salient]) -> list[Salient]:
    """An error whose call (or file) later succeeded is kept, marked resolved (it explains what was tried)."""
    succeeded: dict[str, int] = {}
    for item in items:
        ok = " -> ok" in item.text or (item.kind == "artifact" and "FAILED" not in item.text)
        if item.kind in ("command", "call", "artifact") and item.key and ok:
            succeeded[item.key] = max(item.order, succeeded.get(item.key, -(10**9)))
    out = []
    for item in items:
        key = item.key or ""
        later = max(succeeded.get(key, -(10**9)), succeeded.get(key.split(" ", 1)[-1], -(10**9)))
        resolved = item.kind == "error" and later > item.order and _RESOLVED not in item.text
        out.append(replace(item, text=item.text + _RESOLVED) if resolved else item)
    return out
