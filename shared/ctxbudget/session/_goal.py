"""The user's goal: which user message can be it, and how the summary message shows it.

The goal is the first user message that asks for something (a request or a question); until one does, the first
user message stands in. It is shown before the summary once its message has left the live history: verbatim, or,
when it alone would crowd the window (a pasted document as the first message), as head and tail naming the archive
handle of its full text.
"""

from __future__ import annotations

import hashlib

from ..archive.store import Archive
from ..compaction.statements import user_statements
from ..context.evidence import excerpt
from ..messages.message import Message
from ..messages.tokens import TokenCounter

__all__ = ["GOAL_HEADING", "is_request", "shown_goal"]

GOAL_HEADING = "## Goal (the user's first request)"
"""The heading the pinned goal is shown under, before the summary (whose ``## Task`` says what is being done now)."""


def is_request(message: Message) -> bool:
    """A user message the caller wrote that asks for something (a request or a question): it can be the goal.

    A message that only states things ("The retry logic uses backoff.") is not a goal; the goal is the first one
    that asks (harness text, such as Claude Code's command tags, is not read).
    """
    if message.role != "user" or message.metadata.get("ctxbudget"):
        return False
    return any(s.kind in ("request", "question") for s in user_statements(message.text))


def shown_goal(goal: str, *, counter: TokenCounter, max_tokens: int, archive: Archive) -> str:
    """``goal`` as the summary message shows it: verbatim, or an excerpt when it alone would crowd the window.

    The cap is a quarter of the window, at most 4k tokens; a longer goal is archived (as text, under a handle
    derived from its content) and shown as head and tail naming that handle.
    """
    cap = max(32, min(4_096, max_tokens // 4))
    if counter.count_text(goal) <= cap:
        return " ".join(goal.split()) if "\n" not in goal.strip() else goal.strip()
    digest = hashlib.sha256(goal.encode("utf-8")).hexdigest()[:16]
    handle = archive.put_text(f"goal-{digest}", goal, source="goal")
    text = excerpt(goal, max_tokens=cap, counter=counter, handle=handle)
    return f"(shortened; the full text is archived at {handle})\n{text}"
