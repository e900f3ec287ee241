"""How full the window is, at every moment: own counts, provider-reported usage and a caller floor."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import InvalidPolicyError
from ..messages.tokens import Calibration

__all__ = ["ContextState", "ContextWindowTracker"]


@dataclass(frozen=True, slots=True)
class ContextState:
    """A reading of the window: ``used_percentage`` is capped at 100 and rounded to 2 decimals.

    ``used_tokens`` is the figure every decision uses: the largest of our own count, our count calibrated by
    provider reports, the last report plus what was added since, and the caller's floor. The fields after it say
    where that figure comes from: ``counted_tokens`` is our own count and ``exact`` whether the counter is the
    model's own tokenizer (``False``: an estimate, e.g. for Anthropic or Gemini models); ``reported_tokens`` is the
    provider's last billed prompt (``None`` before any ``record_usage``), ``calibration_ratio`` the learnt ratio of
    reported to counted tokens (1.0 until a provider billed more than we counted).

    A slotted dataclass rather than a pydantic model: one is built on every turn, and that must stay cheap.
    """

    max_tokens: int
    used_tokens: int
    used_percentage: float
    remaining_percentage: float
    counted_tokens: int | None = None
    exact: bool | None = None
    reported_tokens: int | None = None
    calibration_ratio: float = 1.0

    @classmethod
    def of(
        cls,
        used_tokens: int,
        max_tokens: int,
        *,
        counted_tokens: int | None = None,
        exact: bool | None = None,
        reported_tokens: int | None = None,
        calibration_ratio: float = 1.0,
    ) -> ContextState:
        """Build a state from raw figures."""
        # Exact integer arithmetic: a figure far past the window (a bogus report, a huge floor) reads 100%, it
        # never overflows a float.
        used = 100.0 if used_tokens >= max_tokens else round(100 * used_tokens / max_tokens, 2)
        return cls(
            max_tokens,
            used_tokens,
            used,
            round(100.0 - used, 2),
            counted_tokens,
            exact,
            reported_tokens,
            calibration_ratio,
        )

    def model_dump(self) -> dict[str, int | float]:
        """The figures as a plain dict (the same spelling as the pydantic models around it)."""
        return asdict(self)

    @property
    def fraction(self) -> float:
        """Used tokens over the window, unrounded and uncapped."""
        return self.used_tokens / self.max_tokens


class ContextWindowTracker:
    """Combines our own count with what the provider reported, so usage is never under-stated.

    used = max(own count, calibrated own count, last reported + own count of what was added since, caller floor).
    Our own count of the request as it stands is a floor: a provider that reports fewer tokens never pulls the
    reading below it, and a big prompt that has not been sent yet never hides behind an older, smaller figure. A
    provider that bills more than we count is trusted, and teaches :class:`Calibration` the ratio; calibration only
    ever scales our count up (a lower report is learnt as a ratio of 1), so the compaction target it feeds stays
    consistent with the reading. When the request shrank since the report (a replaced history, fewer tools), the
    report is scaled down with it instead of pinning usage at a stale high.
    """

    def __init__(self, max_tokens: int, *, calibration: Calibration | None = None) -> None:
        if max_tokens <= 0:
            raise InvalidPolicyError(f"max_tokens: must be > 0, got {max_tokens}", field="max_tokens")
        self.max_tokens = max_tokens
        self.calibration = calibration or Calibration()
        self.last_reported: int | None = None
        self.counted_at_report = 0
        self.floor = 0

    def report(self, *, counted: int, reported: int) -> None:
        """Record the provider's prompt tokens for a request we counted as ``counted``."""
        if reported < 0:
            raise InvalidPolicyError(f"prompt_tokens: must be >= 0, got {reported}", field="prompt_tokens")
        # Learn only ratios >= 1 (never scale our own count down); past 4x the ratio is clamped to 4 anyway, so clamp
        # the figure first: a bogus astronomic report must not overflow the float division.
        self.calibration.observe(counted, min(max(reported, counted), 4 * counted))
        self.last_reported = reported
        self.counted_at_report = counted

    def set_floor(self, tokens: int) -> None:
        """A caller-supplied minimum (e.g. tokens a framework adds that we cannot see)."""
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise InvalidPolicyError(f"floor: must be an int >= 0, got {tokens!r}", field="floor")
        self.floor = tokens

    def reset(self) -> None:
        """Forget the last report (after compaction replaced the history it described)."""
        self.last_reported = None
        self.counted_at_report = 0

    def used(self, counted: int) -> int:
        """Tokens in use, given our own count of the request as it stands now."""
        used = max(counted, self.calibration.apply(counted), self.floor)
        if self.last_reported is not None:
            if counted >= self.counted_at_report:
                used = max(used, self.last_reported + counted - self.counted_at_report)
            else:  # the request shrank since the report (history replaced, tools removed): scale it down too
                used = max(used, -(-self.last_reported * counted // self.counted_at_report))  # exact ceil
        return used

    def state(self, counted: int, *, exact: bool | None = None) -> ContextState:
        """The :class:`ContextState` for our own count ``counted`` (``exact``: whether the counter is exact)."""
        return ContextState.of(
            self.used(counted),
            self.max_tokens,
            counted_tokens=counted,
            exact=exact,
            reported_tokens=self.last_reported,
            calibration_ratio=self.calibration.ratio if self.calibration.samples else 1.0,
        )
