"""The context planner: rank -> dedupe -> budget -> render, over :class:`~ctxbudget.context.items.ContextItem`.

* **Rank.** ``score = relevance + 0.25 * priority + 0.15 * trust_score(trust) + 0.10 * freshness``. Order: required
  items first, then score (desc), relevance (desc), fewer tokens, id, input position.
* **Dedupe.** Items sharing a :attr:`~ctxbudget.context.items.ContextItem.dedupe_key` keep one: a required item beats a
  non-required one, then the higher score, then the higher relevance, then the first seen. With
  ``dedupe_content=True`` items whose whitespace-normalized content is identical are deduplicated the same way,
  across sources.
* **Budget.** Greedy in rank order. Required items are always included and counted, even past a limit (the overrun
  is reported in :attr:`PlanResult.required_overflow_tokens`). Once ``max_items`` are in, the rest are dropped. An
  item that would break the total budget, its source's item cap or its source's token cap is skipped, and a
  smaller later item may still fit.
* **Render.** Each item in an escaped ``<context source=".." type="..">`` envelope, blank line between
  (:mod:`ctxbudget.context.render`).

Token costs are of the *rendered* envelope plus its separator, so the budget holds for the text the model reads:
``counter.count_text(result.rendered) <= config.max_tokens`` unless required items alone overrun it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InvalidPolicyError
from ..messages._defaults import default_counter
from ..messages._validation import to_usage_error
from ..messages.tokens import TokenCounter
from .items import TRUST_SCORES, ContextItem, checked_items, not_an_item
from .render import SEPARATOR, envelope

__all__ = ["DropReason", "DroppedItem", "PlanResult", "PlannedItem", "PlannerConfig", "plan_context", "score_item"]

DropReason = Literal["duplicate_of", "over_budget", "source_item_cap", "source_token_cap", "max_items"]
"""Why the planner left an item out."""


def score_item(item: ContextItem) -> float:
    """The planner's score: relevance + 0.25 priority + 0.15 trust score + 0.10 freshness.

    Rounded to 9 decimals, so scores that are equal on paper tie (and fall through to relevance) instead of being
    ordered by floating-point noise.

    Raises:
        InvalidFragmentError: ``item`` is not a :class:`ContextItem`.
    """
    if not isinstance(item, ContextItem):
        raise not_an_item(item)
    return _score(item)


def _score(item: ContextItem) -> float:
    """:func:`score_item` of an item known to be a :class:`ContextItem` (the planner's own, once per item)."""
    raw = item.relevance + 0.25 * item.priority + 0.15 * TRUST_SCORES[item.trust] + 0.10 * item.freshness
    return round(raw, 9)


def _rendered(item: ContextItem) -> str:
    """:func:`~ctxbudget.context.render.render_item` of an item known to be a :class:`ContextItem`."""
    return envelope(item.source, item.type, item.content)


class PlannerConfig(BaseModel):
    """Limits for :func:`plan_context`; keyword-only, ``None`` = no limit.

    Invalid values raise :class:`~ctxbudget.errors.InvalidPolicyError` naming the field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_items: int | None = Field(default=None, ge=0, strict=True)
    """Most items included (required items count, and are included even past it)."""
    max_tokens: int | None = Field(default=None, ge=0, strict=True)
    """Total token budget of the rendered text."""
    max_items_per_source: int | None = Field(default=None, ge=0, strict=True)
    """Most items from one ``source``."""
    max_tokens_per_source: int | None = Field(default=None, ge=0, strict=True)
    """Most tokens from one ``source``."""
    dedupe_content: bool = False
    """Also dedupe items whose whitespace-normalized content is identical, whatever their source."""

    def __init__(self, **data: Any) -> None:
        """Validate the limits; raises :class:`InvalidPolicyError` naming the field."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise to_usage_error(exc, InvalidPolicyError, "planner config") from None

    @classmethod
    def balanced(cls, *, dedupe_content: bool = False) -> PlannerConfig:
        """12 items, 4,000 tokens, 6 items and 2,500 tokens per source."""
        return cls(
            max_items=12,
            max_tokens=4000,
            max_items_per_source=6,
            max_tokens_per_source=2500,
            dedupe_content=dedupe_content,
        )

    @classmethod
    def compact(cls, *, dedupe_content: bool = False) -> PlannerConfig:
        """8 items, 2,500 tokens, 4 items and 1,200 tokens per source."""
        return cls(
            max_items=8,
            max_tokens=2500,
            max_items_per_source=4,
            max_tokens_per_source=1200,
            dedupe_content=dedupe_content,
        )

    @classmethod
    def expansive(cls, *, dedupe_content: bool = False) -> PlannerConfig:
        """20 items, 8,000 tokens, 8 items and 3,500 tokens per source."""
        return cls(
            max_items=20,
            max_tokens=8000,
            max_items_per_source=8,
            max_tokens_per_source=3500,
            dedupe_content=dedupe_content,
        )


class PlannedItem(BaseModel):
    """An included item with its score and its token cost (envelope + separator)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item: ContextItem
    score: float
    tokens: int


class DroppedItem(BaseModel):
    """An item left out, with the reason and the numbers behind it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item: ContextItem
    score: float
    tokens: int = Field(description="Its cost had it been included; 0 for duplicates (never measured).")
    reason: DropReason
    duplicate_of: str | None = Field(default=None, description="For duplicates: the id of the item kept.")
    used: int | None = Field(default=None, description="The running figure the limit was checked against.")
    limit: int | None = Field(default=None, description="The limit that would have been broken.")

    @property
    def detail(self) -> str:
        """A readable sentence: what was dropped and why, with the numbers."""
        if self.reason == "duplicate_of":
            return f"item {self.item.id!r} duplicates {self.duplicate_of!r}, which scored higher or came first"
        return (
            f"item {self.item.id!r} ({self.tokens:,} tokens) dropped by {self.reason}: "
            f"{self.used:,} already used of {self.limit:,}"
        )


class PlanResult(BaseModel):
    """What the planner chose, what it left out and why, and the rendered text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    included: list[PlannedItem]
    dropped: list[DroppedItem]
    total_tokens: int = Field(description="Tokens of `rendered` by the planner's counter.")
    budget_tokens: int = Field(description="Sum of included items' costs (envelope + separator each).")
    required_overflow_tokens: int = Field(description="How far required items alone overrun max_tokens; else 0.")
    rendered: str

    @property
    def items(self) -> list[ContextItem]:
        """The included items, in rendering order."""
        return [planned.item for planned in self.included]


class _Ranked:
    __slots__ = ("index", "item", "score")

    def __init__(self, index: int, item: ContextItem) -> None:
        self.index = index
        self.item = item
        self.score = _score(item)

    def beats(self, other: _Ranked) -> bool:
        """Dedupe precedence: required, then score, then relevance, then first seen."""
        mine = (self.item.required, self.score, self.item.relevance, -self.index)
        theirs = (other.item.required, other.score, other.item.relevance, -other.index)
        return mine > theirs


def _normalized(content: str) -> str:
    return " ".join(content.split())


def _dedupe(
    ranked: Sequence[_Ranked], key: Callable[[ContextItem], Hashable], dropped: list[DroppedItem]
) -> list[_Ranked]:
    winners: dict[Hashable, _Ranked] = {}
    for entry in ranked:
        k = key(entry.item)
        current = winners.get(k)
        if current is None or entry.beats(current):
            winners[k] = entry
    kept = {id(entry) for entry in winners.values()}
    for entry in ranked:
        if id(entry) not in kept:
            winner = winners[key(entry.item)]
            dropped.append(
                DroppedItem(
                    item=entry.item, score=entry.score, tokens=0, reason="duplicate_of", duplicate_of=winner.item.id
                )
            )
    return [entry for entry in ranked if id(entry) in kept]


class _Budget:
    """Running totals and the checks of the greedy pass."""

    def __init__(self, config: PlannerConfig) -> None:
        self.config = config
        self.items = 0
        self.tokens = 0
        self.source_items: dict[str, int] = {}
        self.source_tokens: dict[str, int] = {}

    def violation(self, source: str, cost: int) -> tuple[DropReason, int, int] | None:
        """The first limit ``cost`` more tokens from ``source`` would break, as (reason, used, limit)."""
        c = self.config
        if c.max_items is not None and self.items >= c.max_items:
            return "max_items", self.items, c.max_items
        if c.max_tokens is not None and self.tokens + cost > c.max_tokens:
            return "over_budget", self.tokens, c.max_tokens
        used_items = self.source_items.get(source, 0)
        if c.max_items_per_source is not None and used_items >= c.max_items_per_source:
            return "source_item_cap", used_items, c.max_items_per_source
        used_tokens = self.source_tokens.get(source, 0)
        if c.max_tokens_per_source is not None and used_tokens + cost > c.max_tokens_per_source:
            return "source_token_cap", used_tokens, c.max_tokens_per_source
        return None

    def take(self, source: str, cost: int) -> None:
        """Count one included item."""
        self.items += 1
        self.tokens += cost
        self.source_items[source] = self.source_items.get(source, 0) + 1
        self.source_tokens[source] = self.source_tokens.get(source, 0) + cost


def plan_context(
    items: Iterable[ContextItem], config: PlannerConfig, *, counter: TokenCounter | None = None
) -> PlanResult:
    """Choose, order and render context items within ``config``'s limits.

    Args:
        items: the candidates, in any order (input order only breaks exact ties).
        config: the limits, e.g. :meth:`PlannerConfig.balanced`.
        counter: counts the rendered envelopes; defaults to ``TiktokenCounter("o200k_base")``.

    Returns:
        A :class:`PlanResult`; the same input always gives the same result.

    Raises:
        InvalidFragmentError: ``items`` is not an iterable of :class:`ContextItem`.
        InvalidPolicyError: ``config`` is not a :class:`PlannerConfig`, or ``counter`` is not a
            :class:`~ctxbudget.messages.tokens.TokenCounter`.
    """
    if not isinstance(config, PlannerConfig):
        raise InvalidPolicyError(f"config: must be a PlannerConfig, got {type(config).__name__}", field="config")
    active = default_counter(counter)
    dropped: list[DroppedItem] = []
    ranked = [_Ranked(i, item) for i, item in enumerate(checked_items(items))]
    ranked = _dedupe(ranked, lambda item: item.dedupe_key, dropped)
    if config.dedupe_content:
        ranked = _dedupe(ranked, lambda item: _normalized(item.content), dropped)
    costs = {id(entry): active.count_text(_rendered(entry.item) + SEPARATOR) for entry in ranked}
    ranked.sort(key=lambda e: (not e.item.required, -e.score, -e.item.relevance, costs[id(e)], e.item.id, e.index))
    budget = _Budget(config)
    included: list[PlannedItem] = []
    for entry in ranked:
        cost = costs[id(entry)]
        broken = None if entry.item.required else budget.violation(entry.item.source, cost)
        if broken is None:
            budget.take(entry.item.source, cost)
            included.append(PlannedItem(item=entry.item, score=entry.score, tokens=cost))
            continue
        reason, used, limit = broken
        dropped.append(
            DroppedItem(item=entry.item, score=entry.score, tokens=cost, reason=reason, used=used, limit=limit)
        )
    rendered = SEPARATOR.join(_rendered(planned.item) for planned in included)
    required_tokens = sum(p.tokens for p in included if p.item.required)
    overflow = 0 if config.max_tokens is None else max(0, required_tokens - config.max_tokens)
    return PlanResult(
        included=included,
        dropped=dropped,
        total_tokens=active.count_text(rendered),
        budget_tokens=budget.tokens,
        required_overflow_tokens=overflow,
        rendered=rendered,
    )
