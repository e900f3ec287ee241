"""The user's goal: which user message can be it, and how the summary message shows it.

The goal is the first user message that asks for something (a request or a question); until one does, the first user
message stands in, and it is the goal once the assistant works on it (a tool call) before any user message asks. It
is shown before the summary once its message has left the live history: verbatim, or, when it alone would crowd the
window (a pasted document as the first message), as head and tail naming the archive handle of its full text.
"""

from __future__ import annotations

import hashlib
import re
import threading

from ..archive.store import Archive
from ..compaction._text_protocol import harness_turn, is_observation
from ..compaction.harness import INSTRUCTIONS_ARCHIVED, strip_comments, strip_harness, task_of
from ..compaction.statements import user_statements
from ..context.evidence import excerpt
from ..messages.message import Message
from ..messages.tokens import TokenCounter

__all__ = ["GOAL_HEADING", "GOAL_TAG", "Goal", "goal_block", "is_request", "shown_goal"]

_WANTS = re.compile(
    r"(?:(?:hi|hello|hey|good (?:morning|afternoon|evening))(?: there)?\s*[,!.]?\s+)?"
    r"(?:i(?:'d| would) like to|i want to|i need to|i(?:'m| am) (?:looking|trying|hoping) to|i wish to)\s+\w",
    re.IGNORECASE,
)
"""A statement of what the user wants to do, a request in all but form ("I'd like to change my flight.")."""

GOAL_HEADING = "## Goal (the user's first request)"
"""The heading the pinned goal is shown under, before the summary (whose ``## Task`` says what is being done now)."""


def is_request(message: Message) -> bool:
    """A user message the caller wrote that asks for something (a request or a question): it can be the goal.

    A message that only states things ("The retry logic uses backoff.") is not a goal; the goal is the first one
    that asks, or that says what the user wants to do ("Hi! I'd like to book a flight from San Francisco to New
    York."); harness text, such as Claude Code's command tags, is not read.
    """
    if message.role != "user" or message.metadata.get("ctxbudget") or is_observation(message):
        return False  # ours, or a text-protocol harness's result turn (``<returncode>0</returncode> ...``)
    return any(
        s.kind in ("request", "question") or (s.kind in ("preference", "fact") and _WANTS.match(s.text) is not None)
        for s in user_statements(message.text)
    )


class Goal:
    """The user's goal as messages arrive: its text, the id of its message, and whether that message is live.

    The first user message stands in until one that asks for something is read; then that one is the goal. Reading
    a message's statements is the costliest part of adding it, so a user message is only queued when it arrives
    (O(1)), and read when the goal is next needed (:attr:`text`, :attr:`id`, :attr:`live`) or before the live
    history is replaced. Every waiting message is still live when read (nothing removes live messages without
    :meth:`replacing_history` first), so the goal is the one reading each on arrival gives, and the queue keeps
    alive nothing the live history does not. A session that never needs its goal (nothing compacted, no snapshot)
    never reads one: the reads wait, in one pass, for the first compaction, snapshot or goal lookup.
    """

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._text: str | None = None
        self._id: str | None = None
        self._live = False
        self._tentative = False  # the goal is a first message that asks nothing: the first that asks replaces it
        self._unread: list[Message] = []

    @property
    def text(self) -> str | None:
        """The goal, or ``None`` before any user message."""
        self._read()
        return self._text

    @property
    def id(self) -> str | None:
        """Id of the message the goal was taken from, or ``None``."""
        self._read()
        return self._id

    @property
    def live(self) -> bool:
        """The goal's message is in the live history (so the summary need not show it)."""
        self._read()
        return self._live

    @property
    def live_unread(self) -> bool:
        """:attr:`live` as it stands, without reading waiting messages (one that asks would be live as well)."""
        return self._live

    def arrived(self, message: Message) -> None:
        """A new message is being appended to the live history: a user message the caller wrote can be the goal.

        A first message that asks nothing ("I got this feedback: ..." and a pasted review) stands in until one that
        asks is read, or until the assistant works on it (calls a tool): then it is the task the work is for.
        """
        if message.role == "assistant" and message.tool_calls and self._tentative:
            self._read()
            self._tentative = False  # the assistant acted on what was said so far: a later question is no goal
            return
        if message.role != "user" or message.metadata.get("ctxbudget") or not (self._text is None or self._tentative):
            return
        if harness_turn(message) or not strip_harness(message.text).strip():
            return  # the harness's turn (Claude Code's caveat before a local command): nothing the user said
        if self._text is None:  # the first user message stands in until one that asks is read
            self._text, self._id, self._live, self._tentative = message.text, message.id, True, True
        self._unread.append(message)

    def appended(self, message: Message) -> None:
        """``message`` is in the live history (new, or again after a rebuild)."""
        if message.id == self._id:
            self._live = True

    def replacing_history(self) -> None:
        """The live history is about to be replaced: read what waits, then no message is live until re-appended."""
        self._read()
        self._live = False

    def set(self, text: str | None, message_id: str | None, *, live: bool) -> None:
        """Take ``text`` as the goal (``message_id``: its message, ``live``: in the live history), or none."""
        with self._lock:
            self._unread = []
            self._text, self._id, self._live, self._tentative = text, message_id, live, False

    def _read(self) -> None:
        unread = self._unread
        if not unread:
            return
        with self._lock:
            self._unread = []
            for message in unread:
                if is_request(message):
                    if message.id != self._id:
                        self._text, self._id, self._live = message.text, message.id, True
                    self._tentative = False
                    return


GOAL_TAG = "goal"
"""The tag a goal of several lines is written between, under :data:`GOAL_HEADING`."""


def goal_block(shown: str) -> str:
    """The goal as the summary message writes it under its heading: one line as a bullet, several between tags.

    A pasted task or plan has Markdown of its own (``## Overview``, ``## Submission``): between ``<goal>`` and
    ``</goal>`` its headings are not read as the summary's sections, which follow it. A closing tag in the goal's
    own text is escaped, so it cannot end the block early.
    """
    if "\n" not in shown:
        return f"- {shown}"
    text = re.sub(rf"</({GOAL_TAG})", r"&lt;/\1", shown, flags=re.IGNORECASE)
    return f"<{GOAL_TAG}>\n{text}\n</{GOAL_TAG}>"


def shown_goal(goal: str, *, counter: TokenCounter, max_tokens: int, archive: Archive) -> str:
    """``goal`` as the summary message shows it: verbatim, or an excerpt when it alone would crowd the window.

    Verbatim without what its author did not write: a harness's wrapper and a template's HTML comments.

    The cap is an eighth of the window, at most 4k tokens (a window under 32k tokens has room for less: a quarter
    of a 10%-of-transcript budget went to a mini-swe-agent task's template); a longer goal is archived (as text,
    under a handle derived from its content) and shown as head and tail naming that handle.
    """
    goal = strip_harness(goal) or goal  # what the person asked: a harness's prompt or reminder around it is not
    goal = strip_comments(goal) or goal  # nor a template's guidance in comments, which its author never saw
    cap = max(32, min(4_096, max_tokens // 8))
    if counter.count_text(goal) <= cap:
        return " ".join(goal.split()) if "\n" not in goal.strip() else goal.strip()
    digest = hashlib.sha256(goal.encode("utf-8")).hexdigest()[:16]
    handle = archive.put_text(f"goal-{digest}", goal, source="goal")
    split = task_of(goal)  # too long with a harness's instructions on how to work: the task first, then their rules
    if split is not None:
        task, instructions = split
        rules = dict.fromkeys(s.text for s in user_statements(instructions) if s.kind == "constraint")
        shown = f"{INSTRUCTIONS_ARCHIVED}{handle})\n{task}"
        with_rules = shown + "".join(["\n\nTheir rules:", *(f"\n- {rule}" for rule in rules)] if rules else [])
        for candidate in (with_rules, shown):
            if counter.count_text(candidate) <= cap:
                return candidate
        goal = task
    text = excerpt(goal, max_tokens=cap, counter=counter, handle=handle)
    return f"(shortened; the full text is archived at {handle})\n{text}"
