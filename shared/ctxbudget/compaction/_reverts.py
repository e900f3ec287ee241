"""A change the user asked to undo: the decisions that made it read as reverted.

"can you revert this change?", "undo that", "please roll it back": once the agent has done it, what it decided since
the request before that order describes code that is gone. A summary that still lists "Made the test pick a
letter-bearing prefix" under Decisions tells the model the reverted heuristic stands. Those decisions stay in the
ledger (what was tried is worth knowing, and a revert can itself be undone) but read :data:`REVERTED` and weigh as a
superseded statement does.

Which decisions: the agent's own (not the user's choices) after the user's previous request and before the order.
An order that names what to revert (a path, an identifier in backticks, a name with ``_`` or ``.``) reverts the
decisions that name it, as a whole word, too; one that says "this", "that", "it" or "the change" reverts them all.
"""

from __future__ import annotations

import re

from ._ledger_text import SUPERSEDED
from ._salient import USER_CHOSE, Salient

__all__ = ["REVERTED", "mark_reverted", "revert_order"]

REVERTED = "(reverted) "
"""Marks a decision of work the user then asked to undo."""

_LEAD = r"(?:(?:ok(?:ay)?|yes|no|hmm+|actually|then|so|alright|right|please|pls|let'?s|go ahead and|just)[,.!]?\s+)*"
_ASK = r"(?:(?:can|could|would|will) you\s+(?:please\s+)?|i(?:'d| would)? (?:like|want) you to\s+|please\s+)?"
_VERB = r"(?:revert|undo|roll\s?back|back\s+out)(?=\s|[.!?,:]|$)"
_NOT_ORDER = (
    r"(?:is|are|was|were|isn't|aren't|wasn't|does|doesn't|do|don't|did|didn't|has|have|had|should|would|could|"
    r"can|can't|cannot|will|won't|seems|still|never|also|not|fails|failed|failing|works|worked|working|breaks|broke|"
    r"broken|button|feature|support|history|stack)\b"
)
"""What follows the verb of a sentence about undo, not an order to undo: "Undo doesn't work anymore, please fix it"."""
_ORDER = re.compile(rf"^{_LEAD}{_ASK}{_VERB}(?!\s*{_NOT_ORDER})\s*(?P<rest>.*)", re.IGNORECASE | re.DOTALL)
_NAMED = re.compile(r"`([^`\n]{2,80})`|(?<![\w/.-])([\w-]*[./_][\w./-]*\w)")
"""What a revert order names: a span in backticks, or a word holding ``.``, ``/`` or ``_`` (a path, an identifier)."""
_KINDS_ASKED = frozenset({"request", "task"})


def revert_order(text: str) -> tuple[str, ...] | None:
    """``None`` unless ``text`` orders a revert; else what it names (``()``: the latest change, whatever it was)."""
    order = _ORDER.match(text.strip())
    if order is None:
        return None
    return tuple(quoted or bare for quoted, bare in _NAMED.findall(order.group("rest")))


def mark_reverted(items: list[Salient]) -> list[Salient]:
    """``items`` (in order) with each decision a later revert order undid marked :data:`REVERTED`.

    Only an order read in this compaction acts (an earlier summary's marks were made when it was built).
    """
    marked: set[int] = set()
    since = -1  # position of the latest request before the one read now
    for position, item in enumerate(items):
        if item.kind not in _KINDS_ASKED:
            continue
        named = revert_order(item.text) if item.order >= 0 else None
        if named is not None:
            for index in range(since + 1, position):
                decision = items[index]
                if _undone(decision, named):
                    marked.add(index)
        since = position
    if not marked:
        return items
    return [item._replace(text=REVERTED + item.text) if i in marked else item for i, item in enumerate(items)]


def _undone(item: Salient, named: tuple[str, ...]) -> bool:
    if item.kind != "decision" or item.text.startswith((USER_CHOSE, REVERTED, SUPERSEDED)):
        return False
    return not named or any(_names(item.text, name) for name in named)


def _names(text: str, name: str) -> bool:
    """``text`` names ``name`` as a whole (``a.py`` is not named by ``data.py`` nor by ``a.pyc``)."""
    return re.search(rf"(?<![\w./-]){re.escape(name)}(?![\w/-])", text, re.IGNORECASE) is not None
