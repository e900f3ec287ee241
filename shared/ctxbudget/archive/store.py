"""The archive: where every original that leaves the prompt is kept, retrievable by handle.

Compaction never deletes. A bounded tool output, a cleared tool result, a summarized span and a truncated message
all leave their originals here, so archive + live history always reconstruct everything the user gave us. Handles
look like ``ctx://archive/<id>`` and are safe to show to a model (it can ask to read one back).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator

from ..errors import ArchiveError, InvalidPolicyError
from ..messages.message import Message
from .entry import HANDLE_PREFIX, ArchiveEntry, ArchiveReason, content_digest
from .search import ArchiveHit, ArchiveIndex, check_search_args

__all__ = ["HANDLE_PREFIX", "Archive", "ArchiveEntry", "ArchiveReason", "content_digest"]


class Archive:
    """A thread-safe, append-only store of originals keyed by handle.

    Archiving the same message id twice for the same reason returns the first handle: compaction that is retried
    does not duplicate entries. :meth:`search` ranks every entry for a query; each entry is indexed once, by the
    first search after it was archived (archiving itself never tokenizes).
    """

    def __init__(self, entries: Iterable[ArchiveEntry] = ()) -> None:
        self._entries: dict[str, ArchiveEntry] = {}
        self._lock = threading.Lock()
        for entry in entries:
            self._entries[entry.handle] = entry
        self._order = list(self._entries.values())  # archiving order; the index covers a prefix of it
        self._index = ArchiveIndex()
        self._search_lock = threading.Lock()  # taken before _lock, never after

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, handle: object) -> bool:
        return handle in self._entries

    def __iter__(self) -> Iterator[ArchiveEntry]:
        return iter(list(self._entries.values()))

    def put_message(self, message: Message, reason: ArchiveReason) -> str:
        """Archive ``message`` and return its handle (``ctx://archive/<message id>.<reason>``)."""
        handle = f"{HANDLE_PREFIX}{message.id}.{reason}"
        with self._lock:
            if handle not in self._entries:
                self._keep(ArchiveEntry(handle=handle, reason=reason, message=message))
        return handle

    def put_text(self, key: str, text: str, *, source: str | None = None, reason: ArchiveReason = "evidence") -> str:
        """Archive a long text under ``key`` (unique per text) and return its handle."""
        if not key:
            raise InvalidPolicyError("key: an archive key must be non-empty", field="key")
        handle = f"{HANDLE_PREFIX}{key}"
        with self._lock:
            existing = self._entries.get(handle)
            if existing is not None and existing.full_text != text:
                raise ArchiveError(
                    f"handle {handle!r} already holds a different text ({len(existing.full_text)} chars)"
                )
            if existing is None:
                self._keep(ArchiveEntry(handle=handle, reason=reason, text=text, source=source))
        return handle

    def add(self, entry: ArchiveEntry) -> str:
        """Keep an existing entry (from a snapshot or an agent state) under its own handle; the first one kept wins."""
        with self._lock:
            if entry.handle not in self._entries:
                self._keep(entry)
        return entry.handle

    def _keep(self, entry: ArchiveEntry) -> None:
        """Store a new entry; the caller holds ``_lock``."""
        self._entries[entry.handle] = entry
        self._order.append(entry)

    def search(self, query: str, k: int = 5) -> list[ArchiveHit]:
        """Rank every archived original for ``query``, a question or keywords: the ``k`` best, best first.

        One hit per message, or per tool call with its result (the result's handle, the call named), reported with
        the handle of its fullest original (read it back with :meth:`read`); see :mod:`ctxbudget.archive.search` for
        the ranking. Entries archived since the last search are indexed now, each once. ``[]`` when nothing matches.

        Raises:
            InvalidPolicyError: ``query`` is not a non-empty str (``field="query"``) or ``k`` is not an int in 1..100
                (``field="k"``).
        """
        check_search_args(query, k)
        with self._search_lock:
            with self._lock:
                new = self._order[len(self._index) :]
            for entry in new:
                self._index.add(entry)
            return self._index.search(query, k)

    def get(self, handle: str) -> ArchiveEntry:
        """Return the entry for ``handle``; raises :class:`ArchiveError` naming it when absent."""
        entry = self._entries.get(handle)
        if entry is None:
            raise ArchiveError(f"handle: {handle!r} is not in the archive ({len(self._entries)} entries)")
        return entry

    def read(self, handle: str, *, offset: int = 0, limit: int | None = None) -> str:
        """Return archived text from ``offset`` (chars), at most ``limit`` chars: what a read-back tool serves.

        An archived message's tool calls are read back after its text (:attr:`ArchiveEntry.readable_text`).
        """
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise InvalidPolicyError(f"offset: must be an int >= 0, got {offset!r}", field="offset")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0):
            raise InvalidPolicyError(f"limit: must be an int > 0 or None, got {limit!r}", field="limit")
        text = self.get(handle).readable_text
        return text[offset:] if limit is None else text[offset : offset + limit]

    def messages(self) -> list[Message]:
        """Every archived original message, in archiving order (one per message id)."""
        seen: dict[str, Message] = {}
        for entry in self._entries.values():
            if entry.message is not None and entry.message.id not in seen:
                seen[entry.message.id] = entry.message
        return list(seen.values())

    def entries(self) -> list[ArchiveEntry]:
        """Every entry, in archiving order."""
        return list(self._entries.values())

    def positions(self) -> dict[str, int]:
        """Add positions of archived messages this archive knows itself; ``{}`` here (the session's order has them).

        An archive kept in a store (a shared session's) returns the positions its records carry.
        """
        return {}
