"""An exact map whose memory is bounded by bytes: the newest keys in a dict, the older ones in a temporary SQLite file.

What must be remembered of every message of a transcript (the ids read, to refuse a repeated one; the archive
handles written; the session's add positions) would otherwise grow with the file. :class:`SpillIndex` keeps its
newest entries in a dict until they take about ``memory_bytes``, then moves the older half to a private temporary
SQLite database (``sqlite3.connect("")``: a file SQLite removes when it is closed, with a page cache of
:data:`PAGE_CACHE_KIB`). Nothing is approximate: a key is found whichever side it is on, and iteration is insertion
order. A map that stays under its budget never opens a database.

Not thread-safe on its own: its users hold their own locks.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator, MutableMapping
from typing import TypeVar

__all__ = ["MEMORY_BYTES", "PAGE_CACHE_KIB", "SpillIndex"]

MEMORY_BYTES = 2 << 20
"""About how much a :class:`SpillIndex` keeps in memory before it spills (2 MiB)."""
PAGE_CACHE_KIB = 2048
"""SQLite's page cache for the spilled entries (2 MiB)."""
_ENTRY_BYTES = 120
"""What a dict entry costs beside its key's and value's characters: the table slot, the string and int headers."""

V = TypeVar("V", int, str)


class SpillIndex(MutableMapping[str, V]):
    """A ``str``-keyed map of ``int`` or ``str`` values (see the module docstring); close it, or let it be collected."""

    def __init__(self, memory_bytes: int = MEMORY_BYTES) -> None:
        self._memory: dict[str, V] = {}
        self._bytes = 0
        self._limit = max(1, memory_bytes)
        self._db: sqlite3.Connection | None = None
        self._spilled = 0
        self._absent: str | None = None  # the last key looked up and not found: setting it next needs no query

    def __len__(self) -> int:
        return len(self._memory) + self._spilled

    def __getitem__(self, key: str) -> V:
        try:
            return self._memory[key]
        except KeyError:
            pass
        if self._db is not None and key != self._absent:
            row = self._db.execute("SELECT v FROM spill WHERE k = ?", (key,)).fetchone()
            if row is not None:
                value: V = row[0]
                return value
        self._absent = key
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        if key in self._memory:
            return True
        if not isinstance(key, str):
            return False
        if (
            self._db is not None
            and key != self._absent  # asked just before: not there (the archive asks, then puts)
            and self._db.execute("SELECT 1 FROM spill WHERE k = ?", (key,)).fetchone()
        ):
            return True
        self._absent = key
        return False

    def __setitem__(self, key: str, value: V) -> None:
        memory = self._memory
        if key not in memory and self._db is not None and key != self._absent:
            updated = self._db.execute("UPDATE spill SET v = ? WHERE k = ?", (value, key))
            if updated.rowcount:
                return
        self._absent = None
        if key not in memory:
            self._bytes += _cost(key, value)
        memory[key] = value
        if self._bytes > self._limit:
            self._spill()

    def __delitem__(self, key: str) -> None:
        if key == self._absent:
            raise KeyError(key)
        if key in self._memory:
            value = self._memory.pop(key)
            self._bytes -= _cost(key, value)
            return
        if self._db is not None and self._db.execute("DELETE FROM spill WHERE k = ?", (key,)).rowcount:
            self._spilled -= 1
            return
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        if self._db is not None:
            for (key,) in self._db.execute("SELECT k FROM spill ORDER BY rowid"):  # streamed, not fetched whole
                yield key
        yield from list(self._memory)

    def _spill(self) -> None:
        """Move the older half of the entries in memory (insertion order) to the database.

        Where SQLite cannot write its temporary file (no writable temporary directory, a full disk), the entries
        stay in memory and no later spill is tried: slower to grow, never wrong.
        """
        memory = self._memory
        moved = [(key, memory[key]) for _, key in zip(range(max(1, len(memory) // 2)), memory, strict=False)]
        try:
            if self._db is None:
                self._db = _open()
            self._db.executemany("INSERT INTO spill (k, v) VALUES (?, ?)", moved)
        except sqlite3.Error:
            self._limit = sys.maxsize  # what is in memory stays there; what was spilled before is still read
            return
        for key, value in moved:
            del memory[key]
            self._bytes -= _cost(key, value)
        self._spilled += len(moved)

    def close(self) -> None:
        """Forget everything and remove the database file."""
        self._memory.clear()
        self._bytes = self._spilled = 0
        self._absent = None
        if self._db is not None:
            self._db.close()
            self._db = None


def _cost(key: str, value: int | str) -> int:
    return _ENTRY_BYTES + len(key) + (len(value) if isinstance(value, str) else 0)


def _open() -> sqlite3.Connection:
    """A private temporary database (removed when closed): no journal, no syncing, one transaction left open."""
    db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
    db.execute("CREATE TABLE spill (k TEXT PRIMARY KEY, v)")
    db.execute("BEGIN")
    return db
