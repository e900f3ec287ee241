"""What compaction has already read, kept for one session: each message is read once in its life.

A message is read when it is first cleared or summarized; a later compaction that meets it again (the same span
summarized after a failed model call, a tail message later evicted, the previous summary parsed back) takes what
was found then. :class:`ReadMemo` holds it, bounded by the characters it keeps (never by entry count): the oldest
entries go first once the bound is reached. One memo belongs to one session's offline summarizer, so nothing is
shared between sessions.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

__all__ = ["ReadMemo"]

_V = TypeVar("_V")

DEFAULT_CHARS = 8_000_000
"""Characters of results one memo keeps (about 16 MB of strings)."""


class ReadMemo:
    """A least-recently-used memo of computed results, bounded by the characters they hold.

    Args:
        max_chars: the most characters kept (each entry counts what its caller says it holds, plus 64).
    """

    def __init__(self, max_chars: int = DEFAULT_CHARS) -> None:
        self.max_chars = max_chars
        self._entries: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._chars = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def chars(self) -> int:
        """Characters held now."""
        return self._chars

    def get(self, key: Hashable, compute: Callable[[], _V], size: Callable[[_V], int]) -> _V:
        """The result for ``key``: remembered, or ``compute()``'s.

        A computed result is kept when it fits the bound; ``size`` says how many characters it holds.
        """
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
            return found[0]  # type: ignore[return-value]  # stored by this same call for this key
        value = compute()
        cost = size(value) + 64
        if cost <= self.max_chars:
            self._entries[key] = (value, cost)
            self._chars += cost
            while self._chars > self.max_chars:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._chars -= dropped
        return value
