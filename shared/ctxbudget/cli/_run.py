"""A transcript's run through a session (:class:`Run`), as the CLI was asked for it (:class:`Settings`).

:func:`~ctxbudget.cli._analysis.run_transcript` fills a :class:`Run`; ``inspect`` reports it
(:mod:`ctxbudget.cli._report`) and ``compact`` writes it.

``compact`` does nothing (:attr:`Run.worth` is ``False``, and it says why) when the transcript never reached the
threshold and the compaction would save less than :data:`MIN_GAIN_OF_WINDOW` of the window or
:data:`MIN_GAIN_OF_PROMPT` of the prompt: a compaction rewrites the prompt from its first compacted message on, so
the provider's prompt cache (cached input is billed at about a tenth) is lost for all of it, and a small saving
does not pay for rebuilding it. ``--force`` compacts anyway.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..compaction.policy import CompactionPolicy
from ..messages.message import Message
from ..session.session import ContextSession
from ..transcripts.formats._items import Head
from ._archive import ArchiveSink
from ._stats import Tally

__all__ = ["MIN_GAIN_OF_PROMPT", "MIN_GAIN_OF_WINDOW", "Run", "Settings", "Usage", "percent"]

MIN_GAIN_OF_WINDOW = 0.05
"""``compact`` below the threshold must save at least this share of the window..."""
MIN_GAIN_OF_PROMPT = 0.25
"""... and this share of the prompt it rewrites (whose prompt cache it loses)."""


@dataclass(frozen=True)
class Settings:
    """What ``inspect`` and ``compact`` were asked for (the flags)."""

    model: str | None = None
    """``--model``; ``None``: the transcript's, else :data:`~ctxbudget.cli._analysis.DEFAULT_MODEL`."""
    max_tokens: int | None = None
    policy: CompactionPolicy | None = None
    instructions: str | None = None
    top: int = 10
    force: bool = False


@dataclass
class Usage:
    """A prompt size the transcript records, beside our count of the same request."""

    reported: int
    ours: int
    messages: int
    where: str

    def json(self) -> dict[str, Any]:
        """This figure as the report shows it, with our count's difference in percent."""
        difference = 100.0 * (self.ours - self.reported) / self.reported if self.reported else 0.0
        return {
            "reported_tokens": self.reported,
            "our_tokens": self.ours,
            "messages": self.messages,
            "where": self.where,
            "difference_percentage": round(difference, 1),
        }


@dataclass
class Run:
    """One transcript streamed into a session and compacted: what ``inspect`` reports and ``compact`` writes."""

    head: Head
    model: str
    model_from: str
    session: ContextSession
    sink: ArchiveSink
    tally: Tally
    system: list[Message] = field(default_factory=list)
    sent: list[Message] = field(default_factory=list)
    used: int = 0
    harness: int = 0
    replaced: int = 0
    replaced_tokens: int = 0
    compactions: int = 0
    live_compactions: int = 0
    """Compactions while reading (the transcript reached the threshold), before the final one."""
    tiers: list[str] = field(default_factory=list)
    after: int = 0
    error: str | None = None
    usage: list[Usage] = field(default_factory=list)

    @property
    def window(self) -> int:
        """The prompt budget."""
        return self.session.max_tokens

    @property
    def policy(self) -> CompactionPolicy:
        """The compaction policy."""
        return self.session.policy

    @property
    def threshold(self) -> int:
        """Where a live session compacts on its own."""
        return int(self.policy.threshold * self.window)

    @property
    def gain(self) -> int:
        """Tokens the compaction saves."""
        return max(0, self.used - self.after)

    @property
    def minimum_gain(self) -> int:
        """The least saving worth a compaction below the threshold (see :mod:`ctxbudget.cli._run`)."""
        return max(math.ceil(MIN_GAIN_OF_WINDOW * self.window), math.ceil(MIN_GAIN_OF_PROMPT * self.used))

    @property
    def needed(self) -> bool:
        """The transcript reached the threshold: a live session would have compacted."""
        return self.live_compactions > 0 or self.used >= self.threshold

    @property
    def worth(self) -> bool:
        """Whether compacting is worth writing out (always when it was needed)."""
        return self.error is None and (self.needed or self.gain >= self.minimum_gain)

    def why_not(self) -> str:
        """Why ``compact`` does nothing, in a sentence."""
        return (
            f"at {self.used:,} tokens ({percent(self.used, self.window)}% of the {self.window:,}-token window, under "
            f"the {self.threshold:,} where a session compacts) a compaction would save {self.gain:,} tokens, less than "
            f"the {self.minimum_gain:,} that would pay for it ({MIN_GAIN_OF_WINDOW:.0%} of the window and "
            f"{MIN_GAIN_OF_PROMPT:.0%} of the prompt it rewrites, losing the provider's prompt cache); pass --force "
            "to compact anyway"
        )


def percent(used: int, window: int) -> float:
    """``used`` as a share of ``window``, uncapped (158.9 for a transcript past the window)."""
    return round(100.0 * used / window, 1)
