"""LangChain-facing errors: ours, also inheriting LangChain's matching exception.

::

    ctxbudget.ContextOverflowError ─┐
    langchain_core.exceptions.ContextOverflowError ─┴─ LangChainContextOverflowError
    ctxbudget.InvalidMessageError (UsageError, ValueError) ── NoHumanMessageError

Code that catches either family catches the hard stop: ``except ctxbudget.ContextOverflowError`` and LangChain's
own ``except ContextOverflowError`` (model-fallback middleware, retry logic) both see it. A stateless fit refuses a
list with no human message to start on with :class:`NoHumanMessageError` (a caller's mistake, so a ``ValueError``).
"""

from __future__ import annotations

from ctxbudget.errors import ContextOverflowError, InvalidMessageError
from langchain_core.exceptions import ContextOverflowError as _LangChainOverflow

__all__ = ["LangChainContextOverflowError", "NoHumanMessageError"]


class LangChainContextOverflowError(ContextOverflowError, _LangChainOverflow):
    """The hard stop, raised before a request is sent: it would not fit the window even after compaction.

    Attributes:
        used_tokens: tokens the request would use.
        max_tokens: the window size.
        hard_stop_tokens: the limit that was crossed.
    """

    @classmethod
    def from_core(cls, error: ContextOverflowError) -> LangChainContextOverflowError:
        """Wrap the core error, keeping its message and figures."""
        return cls(
            str(error),
            used_tokens=error.used_tokens,
            max_tokens=error.max_tokens,
            hard_stop_tokens=error.hard_stop_tokens,
        )


class NoHumanMessageError(InvalidMessageError):
    """A stateless fit found no human message to start the conversation on.

    Like ``trim_messages(start_on="human")``, the stateless fit sends the leading system messages and then starts on
    a human message (Bedrock and other providers require a user turn first); a list without one cannot be sent.

    Attributes:
        total: messages given.
        system: leading system messages among them.
        roles: how many of the others are of each role (``{"assistant": 3, "tool": 2}``).
    """

    def __init__(self, *, total: int, system: int, roles: dict[str, int]) -> None:
        counted = ", ".join(f"{count} {role}" for role, count in sorted(roles.items())) or "none"
        super().__init__(
            f"messages: no human message to start on: {total:,} message(s) given, {system:,} leading system "
            f"message(s), then {counted} and 0 human; a request must start with a user turn after the system "
            "messages (as trim_messages(start_on='human')); add the user's message",
            field="messages",
        )
        self.total = total
        self.system = system
        self.roles = dict(roles)
