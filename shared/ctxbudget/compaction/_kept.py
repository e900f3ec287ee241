"""The items a :class:`~ctxbudget.compaction._ledger_select.Selection` keeps, as it takes them (:class:`Kept`).

What each section and the whole spent, the calls whose bullets are kept, and the figure lines that stand in for a
call's bullet while that bullet is not kept (:data:`~ctxbudget.compaction._salient.SHOWN_BY_CALL`).
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from ._records import call_of
from ._salient import SHOWN_BY_CALL, Salient

__all__ = ["Kept", "Scored", "shown_by"]


class Scored(NamedTuple):
    """An item as selected: its (possibly shortened) text, its value and its tokens as a bullet."""

    item: Salient
    value: float
    tokens: int


class Kept:
    """The items a :class:`Selection` keeps, as it takes them: what each section and the whole spent, and the calls.

    A figure line its call's bullet shows (keyed :data:`~ctxbudget.compaction._salient.SHOWN_BY_CALL`) stands in for
    that bullet: it is kept only while the bullet is not, or is clipped short of it; a bullet taken after it takes
    its place, and its room is given back.
    """

    def __init__(self) -> None:
        self._kept: list[Scored | None] = []
        self.per_section: Counter[str] = Counter()
        self.spent: Counter[str] = Counter()
        self.used = 0
        self.calls: set[str] = set()
        """The labels of the successful calls whose bullet is kept (:func:`~ctxbudget.compaction._records.call_of`)."""
        self._bullets: dict[str, str] = {}  # lower-cased call label: its bullet as kept
        self._standing: dict[str, list[tuple[int, int, str]]] = {}  # call label: stand-ins' (place, cost, section)

    def shows(self, item: Salient) -> bool:
        """``item`` is a figure line that a kept call's bullet shows."""
        label = shown_by(item)
        return label is not None and _line(item) in self._bullets.get(label, "")

    def add(self, entry: Scored, cost: int, section: str) -> None:
        """Keep ``entry`` at ``cost`` tokens in ``section``."""
        label = shown_by(entry.item)
        if label is not None:
            self._standing.setdefault(label, []).append((len(self._kept), cost, section))
        self._kept.append(entry)
        self.used += cost
        self.spent[section] += cost
        self.per_section[section] += 1
        text = entry.item.text
        if entry.item.kind not in ("call", "command") or " -> " not in text:
            return
        if (called := call_of(text)) is not None:
            self.calls.add(called)
        bullet = self._bullets[text.split(" -> ", 1)[0].lower()] = text
        for place, given_back, where in self._standing.pop(text.split(" -> ", 1)[0].lower(), ()):
            stand_in = self._kept[place]
            if stand_in is not None and _line(stand_in.item) in bullet:
                self._kept[place] = None
                self.used -= given_back
                self.spent[where] -= given_back
                self.per_section[where] -= 1

    def entries(self) -> list[Scored]:
        """What is kept, in the order taken."""
        return [entry for entry in self._kept if entry is not None]


def _line(item: Salient) -> str:
    """The output line a figure bullet shows (``<tool>: <line>``)."""
    return item.text.split(": ", 1)[-1]


def shown_by(item: Salient) -> str | None:
    """The (lower-cased) label of the call whose bullet shows ``item``, a figure line, else ``None``."""
    key = item.key
    if item.kind != "figure" or key is None or not key.startswith(SHOWN_BY_CALL):
        return None
    return key[len(SHOWN_BY_CALL) :]
