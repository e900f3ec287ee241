"""Compaction policy: when to compact, how far, what to keep, and when to refuse a request."""

from __future__ import annotations

import math
from typing import NoReturn

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

from ..errors import InvalidPolicyError
from ..messages._validation import short_repr

__all__ = ["CompactionPolicy"]


def _fail(field: str, problem: str) -> NoReturn:
    raise InvalidPolicyError(f"{field}: {problem}", field=field)


class CompactionPolicy(BaseModel):
    """Keyword-only, validated settings for a :class:`~ctxbudget.session.session.ContextSession`.

    ``None`` means "derive from the window" for the token sizes (documented per field). Build one with keywords;
    invalid values raise :class:`~ctxbudget.errors.InvalidPolicyError` naming the field and the value.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    auto: StrictBool = Field(default=True, description="Compact automatically before a request once over threshold.")
    threshold: float = Field(default=0.8, description="Fraction of the window, in (0, 1], that triggers compaction.")
    target: float = Field(default=0.6, description="Fraction compaction aims for, in (0, threshold].")
    hard_stop: float = Field(default=0.95, description="Fraction, in [threshold, 1], past which no request is built.")
    keep_recent_messages: int | None = Field(
        default=None,
        description="At least this many recent messages survive summarization (>= 1); None: the kept tail is sized "
        "by tokens so the request lands at the target.",
    )
    keep_recent_tokens: int | None = Field(default=None, description="Tokens of recent tail to keep; None: no floor.")
    max_tool_output_tokens: int | None = Field(
        default=None, description="A tool output over this is bounded to head/tail; None: min(8000, window/8)."
    )
    protected_tool_tokens: int | None = Field(
        default=None, description="Newest tool outputs kept whole up to this total; None: min(40000, window/4)."
    )
    summary_max_tokens: int | None = Field(
        default=None, description="Largest summary accepted; None: min(8000, window/6)."
    )
    summarizer_input_tokens: int | None = Field(
        default=None, description="Largest span sent to the summarizer at once (larger spans are chunked)."
    )
    summarizer_timeout: float | None = Field(default=60.0, description="Seconds before a summarizer call fails.")
    bound_tool_outputs_on_add: StrictBool = Field(
        default=True, description="Bound oversized tool outputs as they arrive, archiving the full text."
    )
    never_clear_tools: tuple[str, ...] = Field(
        default=(),
        description="Tools whose results the clear tier leaves whole (as ClearToolUsesEdit.exclude_tools); they "
        "are still bounded when oversized and summarized with the rest of their turn.",
    )

    @field_validator("never_clear_tools", mode="before")
    @classmethod
    def _tool_names(cls, value: object) -> object:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, set, frozenset)):
            raise ValueError("must be a list of tool names")
        for index, name in enumerate(value):
            if not isinstance(name, str) or not name:
                raise ValueError(f"item {index} must be a non-empty tool name, got {short_repr(name)}")
        return tuple(sorted(value)) if isinstance(value, (set, frozenset)) else tuple(value)

    @field_validator("threshold", "target", "hard_stop", "summarizer_timeout", mode="before")
    @classmethod
    def _no_bools(cls, value: object) -> object:
        if isinstance(value, bool):
            raise ValueError("must be a number, not a bool")
        return value

    def __init__(self, **data: object) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "policy"
            raise InvalidPolicyError(
                f"{field}: {first['msg'].removeprefix('Value error, ')} (got {short_repr(first.get('input'))})",
                field=field,
            ) from None
        self._check_ranges()

    def _check_ranges(self) -> None:
        for name in ("threshold", "target", "hard_stop"):
            value = getattr(self, name)
            if not math.isfinite(value) or not 0 < value <= 1:
                _fail(name, f"must be a fraction in (0, 1], got {value!r}")
        if self.target > self.threshold:
            _fail("target", f"must be <= threshold ({self.threshold}), got {self.target}")
        if self.hard_stop < self.threshold:
            _fail("hard_stop", f"must be >= threshold ({self.threshold}), got {self.hard_stop}")
        if self.keep_recent_messages is not None and self.keep_recent_messages < 1:
            _fail("keep_recent_messages", f"must be >= 1, got {self.keep_recent_messages}")
        for name in (
            "keep_recent_tokens",
            "max_tool_output_tokens",
            "protected_tool_tokens",
            "summary_max_tokens",
            "summarizer_input_tokens",
        ):
            value = getattr(self, name)
            if value is not None and value < 1:
                _fail(name, f"must be >= 1 or None, got {value}")
        timeout = self.summarizer_timeout
        if timeout is not None and (not math.isfinite(timeout) or timeout <= 0):
            _fail("summarizer_timeout", f"must be > 0 seconds or None, got {timeout!r}")

    def tool_output_limit(self, window: int) -> int:
        """Tokens above which one tool output is bounded."""
        return self.max_tool_output_tokens or max(256, min(8000, window // 8))

    def protected_tool_budget(self, window: int) -> int:
        """Tokens of newest tool output kept whole when clearing old results."""
        return self.protected_tool_tokens or max(256, min(40000, window // 4))

    def summary_limit(self, window: int) -> int:
        """Largest summary, in tokens.

        A sixth of the window (at most 8,000), and at least 2,560 or, in a window too small for that, 90% of the
        compaction target (a small window keeps what matters in the summary).
        """
        if self.summary_max_tokens:
            return self.summary_max_tokens
        return max(16, min(8000, max(window // 6, min(2560, int(window * self.target * 0.9)))))

    def summarizer_chunk(self, window: int) -> int:
        """Largest transcript chunk, in tokens, sent to the summarizer at once."""
        return self.summarizer_input_tokens or max(2000, window // 2)

    def with_changes(self, **changes: object) -> CompactionPolicy:
        """Return a validated copy with ``changes`` applied (e.g. a new threshold on a live session)."""
        return CompactionPolicy(**{**self.model_dump(), **changes})
