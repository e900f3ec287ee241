"""The cumulative ledger: what compaction keeps in view of everything it evicted.

A ledger is a structured Markdown summary (:data:`LEDGER_SECTIONS`) built from :mod:`ctxbudget.salience` items of
each evicted span, merged with the ledger of earlier compactions (parsed back from its text, so a ledger survives
snapshots and is cumulative, never nested). Merging dedupes, lets a later value of the same key supersede an
earlier one (noting what it replaced), and marks an error resolved when the same call later succeeds. When the
items do not fit the token budget, the ledger keeps those that carry the most information: the kind's weight
(user-stated facts and constraints first), the rarity of their tokens within the session, and recency, per token
spent. The goal is never in the ledger (the session pins it once, verbatim).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from .salience import SalienceKind, Salient, clip, informative_tokens, item_key
from .tokens import TokenCounter

__all__ = ["LEDGER_SECTIONS", "Ledger", "parse_ledger"]

LEDGER_SECTIONS = (
    "User facts and constraints",
    "Decisions",
    "Files and artifacts",
    "Commands and results",
    "Errors",
    "Open items",
    "Latest request",
)
"""The sections of a ledger, in order."""

_SECTION_OF: dict[SalienceKind, str] = {
    "constraint": "User facts and constraints",
    "fact": "User facts and constraints",
    "decision": "Decisions",
    "note": "Decisions",
    "artifact": "Files and artifacts",
    "command": "Commands and results",
    "call": "Commands and results",
    "figure": "Commands and results",
    "error": "Errors",
    "open": "Open items",
    "request": "Latest request",
}
_WEIGHT: dict[SalienceKind, float] = {
    "constraint": 4.0,
    "fact": 3.5,
    "error": 2.5,
    "decision": 2.5,
    "artifact": 2.0,
    "open": 1.8,
    "figure": 1.5,
    "note": 1.0,
    "command": 1.6,
    "call": 0.6,
    "request": 0.0,
}
_SHARES = {  # the budget each section is sure of before the rest goes to the best items overall
    "User facts and constraints": 0.34,
    "Decisions": 0.12,
    "Files and artifacts": 0.22,
    "Commands and results": 0.14,
    "Errors": 0.08,
    "Open items": 0.04,
}
_HEADING = re.compile(r"^##\s+(.+?)\s*$")
_LEGACY = {  # sections of summaries written before the ledger (snapshots keep them)
    "Decisions and facts": "Decisions",
    "Files and commands": "Commands and results",
    "Goal": None,
}
_CONSTRAINT_PREFIX = "Constraint: "
_DIGITS = re.compile(r"\d")
_SHELL_CALL = re.compile(r'^\S+ \{[^}]*"(?:command|cmd|script|shell|argv|commands|code)":')
_LEGACY_SKIP = re.compile(r"^User's goal \(pinned")


def _kind_for(section: str, text: str) -> SalienceKind:
    if section == "User facts and constraints":
        return "constraint" if text.startswith(_CONSTRAINT_PREFIX) else "fact"
    if section == "Commands and results":
        if " -> " not in text:
            return "figure"
        return "command" if _SHELL_CALL.match(text) else "call"
    return {
        "Decisions": "decision",
        "Files and artifacts": "artifact",
        "Errors": "error",
        "Open items": "open",
        "Latest request": "request",
    }.get(section, "note")  # type: ignore[return-value]  # values are SalienceKind literals


def parse_ledger(summary: str | None) -> list[Salient]:
    """The items of an earlier summary, oldest first, ordered before anything new (negative ``order``).

    Free text that is not in ledger sections (a summary another summarizer wrote) is kept line by line as notes.
    """
    return list(_parse(summary)) if summary else []


@lru_cache(maxsize=16)
def _parse(summary: str) -> tuple[Salient, ...]:
    parsed: list[tuple[SalienceKind, str]] = []
    section: str | None = None
    for line in summary.splitlines():
        heading = _HEADING.match(line)
        if heading:
            name = heading.group(1)
            section = _LEGACY.get(name, name) if name in _LEGACY else name
            if section is not None and section not in LEDGER_SECTIONS:
                section = "Decisions"
            continue
        if section is None and heading is None and line.strip().startswith("[") and not parsed:
            continue  # a header line such as "[Context Summary]"
        text = line.strip().removeprefix("- ").strip()
        if not text or text == "(none)" or (section is None and heading is None and _LEGACY_SKIP.match(text)):
            continue
        kind = _kind_for(section, text) if section else "note"
        parsed.append((kind, text))
    total = len(parsed)
    return tuple(
        Salient(kind, text, item_key(kind, text), index - total, informative_tokens(text))
        for index, (kind, text) in enumerate(parsed)
    )


@dataclass(frozen=True)
class _Scored:
    item: Salient
    value: float
    tokens: int


class Ledger:
    """Merge, rank and render ledger items within a token budget.

    Args:
        counter: counts bullet tokens so the rendered ledger stays within ``max_tokens``.
        max_tokens: the budget for the rendered ledger.
        goal: the pinned goal; a request equal to it is not repeated.
        max_items: at most this many bullets per section (``None``: the budget decides).
    """

    def __init__(
        self, counter: TokenCounter, max_tokens: int, *, goal: str | None = None, max_items: int | None = None
    ) -> None:
        self.counter = counter
        self.max_tokens = max_tokens
        self.goal = " ".join(goal.split()) if goal else None
        self.max_items = max_items

    def build(self, previous: Iterable[Salient], new: Iterable[Salient]) -> str:
        """The rendered ledger of ``previous`` items merged with ``new`` ones (both in conversation order)."""
        items = self._merge([*previous, *new])
        request = self._latest_request(items)
        kept = self._select([i for i in items if i.kind != "request"], request)
        return self._fit(kept, request)

    # -- merging -------------------------------------------------------------------------------------------------
    def _merge(self, items: list[Salient]) -> list[Salient]:
        """Dedupe and supersede: the last item of a (kind, key) wins and notes the value it replaced."""
        items = sorted(items, key=lambda i: i.order)
        latest: dict[tuple[str, str], int] = {}
        seen_text: dict[str, int] = {}
        out: list[Salient | None] = []
        for given in items:
            item = given
            norm = " ".join(item.text.lower().split())
            if item.kind != "request" and norm in seen_text:
                out[seen_text[norm]] = None  # an exact repeat: keep the later position
            if item.key is not None and item.kind in ("fact", "decision", "artifact", "command", "call", "error"):
                slot = (_SECTION_OF[item.kind], item.key)
                if slot in latest:
                    earlier = out[latest[slot]]
                    out[latest[slot]] = None
                    if earlier is not None and item.kind in ("fact", "decision") and earlier.text != item.text:
                        item = replace(item, text=f"{item.text} (was: {clip(earlier.text.split(' (was: ')[0], 120)})")
                latest[slot] = len(out)
            seen_text[norm] = len(out)
            out.append(item)
        merged = [i for i in out if i is not None]
        return self._resolve_errors(merged)

    @staticmethod
    def _resolve_errors(items: list[Salient]) -> list[Salient]:
        """An error whose call later succeeded is kept, marked resolved (it explains what was tried)."""
        succeeded = {i.key: i.order for i in items if i.kind in ("command", "call") and " -> ok" in i.text and i.key}
        return [
            replace(item, text=f"{item.text} (resolved later)")
            if item.kind == "error"
            and succeeded.get(item.key or "", -math.inf) > item.order
            and "(resolved" not in item.text
            else item
            for item in items
        ]

    def _latest_request(self, items: list[Salient]) -> Salient | None:
        requests = [i for i in items if i.kind == "request"]
        if not requests:
            return None
        last = requests[-1]
        if self.goal and " ".join(last.text.split()) == clip(self.goal, 400):
            return None
        room = max(16, self.max_tokens // 4)  # the request never crowds out the facts
        tokens = self.counter.count_text(last.text)
        if tokens > room:
            last = replace(last, text=clip(last.text, max(40, len(last.text) * room // tokens)))
        return last

    # -- ranking -------------------------------------------------------------------------------------------------
    def _select(self, items: list[Salient], request: Salient | None) -> list[_Scored]:
        """Score every item by information per token and keep the best that fit the budget."""
        if not items:
            return []
        budget = self.max_tokens - self._frame_tokens(request)
        cap = max(24, budget // 2)
        df: Counter[str] = Counter()
        for item in items:
            df.update(item.tokens)
        total = len(items)
        newest = max(i.order for i in items)
        oldest = min(i.order for i in items)
        span = max(1, newest - oldest)
        # Each token's rarity once (an identifier or figure weighs more), not once per item holding it.
        weight = {t: math.log((total + 1) / n) * (1.5 if _DIGITS.search(t) else 1.0) for t, n in df.items()}
        scored = []
        for given in items:
            item = given
            rare = sorted((weight[t] for t in item.tokens), reverse=True)[:4]
            rarity = sum(rare) / (4 * math.log(total + 1)) if rare else 0.0
            recency = (item.order - oldest) / span
            value = _WEIGHT[item.kind] * (0.35 + rarity) + 0.4 * recency
            tokens = self.counter.count_text(f"- {item.text}\n")
            if tokens > cap:  # one long bullet never takes more than a share of a small budget
                item = replace(item, text=clip(item.text, max(40, len(item.text) * cap // tokens)))
                tokens = self.counter.count_text(f"- {item.text}\n")
            scored.append(_Scored(item, value, tokens))
        ranked = sorted(scored, key=lambda s: (-s.value / math.sqrt(max(1, s.tokens)), -s.item.order))
        kept: list[_Scored] = []
        taken: set[int] = set()
        per_section: Counter[str] = Counter()
        spent: Counter[str] = Counter()
        used = 0
        # Two passes: each section first gets its share of the budget (so one kind never crowds out the others),
        # then what is left goes to the best remaining items, whatever their section.
        for shares in (_SHARES, None):
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

    def _frame_tokens(self, request: Salient | None) -> int:
        frame = self._render([], request)
        return self.counter.count_text(frame) + 8

    # -- rendering -----------------------------------------------------------------------------------------------
    def _render(self, kept: Sequence[_Scored], request: Salient | None) -> str:
        by_section: dict[str, list[Salient]] = {name: [] for name in LEDGER_SECTIONS}
        for entry in sorted(kept, key=lambda s: s.item.order):
            item = entry.item
            text = (
                f"{_CONSTRAINT_PREFIX}{item.text}"
                if item.kind == "constraint" and not item.text.startswith(_CONSTRAINT_PREFIX)
                else item.text
            )
            by_section[_SECTION_OF[item.kind]].append(item if text is item.text else replace(item, text=text))
        if request is not None:
            by_section["Latest request"] = [request]
        blocks = []
        for name in LEDGER_SECTIONS:
            bullets = by_section[name]
            if bullets:
                blocks.append(f"## {name}\n" + "\n".join(f"- {b.text}" for b in bullets))
        return "\n\n".join(blocks) if blocks else "## Open items\n- (none)"

    def _fit(self, kept: list[_Scored], request: Salient | None) -> str:
        """Render, then drop the least valuable bullets while the whole is over budget (seams may cost a token)."""
        text = self._render(kept, request)
        order = sorted(kept, key=lambda s: s.value / math.sqrt(max(1, s.tokens)))
        while self.counter.count_text(text) > self.max_tokens and order:
            victim = order.pop(0)
            kept = [k for k in kept if k is not victim]
            text = self._render(kept, request)
        if self.counter.count_text(text) > self.max_tokens and request is not None:
            shorter = replace(request, text=clip(request.text, 80))
            text = self._render(kept, shorter)
        return text
