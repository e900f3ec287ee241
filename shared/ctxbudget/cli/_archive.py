"""The archive ``inspect`` and ``compact`` give their session: written out as it grows, so memory does not grow with it.

:class:`SpillArchive` is an :class:`~ctxbudget.archive.store.Archive` that hands every entry to an :class:`ArchiveSink`
as it is archived and keeps in memory only what the session may still ask for: after each compaction the CLI calls
:meth:`SpillArchive.retain` with the live messages' ids, and the entries of messages that left the window are
dropped from memory. An entry that is asked for again (``get``, ``in``) is read back from the sink's file.

:class:`ArchiveSink` appends each entry to a temporary JSON-lines file (``compact``: the archive of the document it
writes, copied into it at the end) or only counts it (``inspect``, ``keep=False``). Either way it counts the
archived originals the CLI reports: distinct message ids, and among them the tool outputs bounded on arrival (those
archived while :attr:`ArchiveSink.arriving` is set, as messages are added). What it must remember of every entry
(its handle and place in the file, its message id) is a
:class:`~ctxbudget.transcripts.formats._spill.SpillIndex`, which spills to a temporary file past a few MiB: memory
stays flat however long the transcript.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from ..archive.search import ArchiveHit
from ..archive.store import HANDLE_PREFIX, Archive, ArchiveEntry, ArchiveReason
from ..errors import ArchiveError, InvalidPolicyError
from ..messages.message import Message
from ..transcripts.formats._spill import SpillIndex

__all__ = ["ArchiveSink", "SpillArchive"]


class ArchiveSink:
    """Where archived entries go: a temporary JSON-lines file in ``directory`` (``keep``), or nowhere but the counts.

    Close it (or use ``with``): the temporary file is removed.
    """

    def __init__(self, *, keep: bool, directory: Path | None = None) -> None:
        self.keep = keep
        self._file: IO[bytes] | None = None
        self._path: Path | None = None
        if keep:
            fd, name = tempfile.mkstemp(prefix=".ctxbudget-archive-", suffix=".tmp", dir=directory)
            self._file, self._path = os.fdopen(fd, "w+b"), Path(name)
        # Every handle written, with its entry's offset in the file (-1: only counted), and every message id
        # archived (1: bounded on arrival): spilled to a temporary file past a few MiB, so memory stays flat.
        self._where: SpillIndex[int] = SpillIndex()
        self._originals: SpillIndex[int] = SpillIndex()
        self._bounded = 0
        self._counts: tuple[int, int] | None = None  # once closed: (count, archived)
        self._owned: list[SpillIndex[int]] = [self._where, self._originals]
        self.arriving = False
        """Set while messages are added to the session: a ``bounded`` entry then is bounded on arrival."""

    @property
    def count(self) -> int:
        """Entries archived (one per handle)."""
        return self._counts[0] if self._counts is not None else len(self._where)

    @property
    def archived(self) -> int:
        """Distinct messages with an original archived."""
        return self._counts[1] if self._counts is not None else len(self._originals)

    @property
    def bounded(self) -> int:
        """Of them, tool outputs bounded on arrival."""
        return self._bounded

    def __enter__(self) -> ArchiveSink:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def index(self) -> SpillIndex[int]:
        """A new :class:`~ctxbudget.transcripts.formats._spill.SpillIndex`, closed with this sink.

        The session's add positions go there (:meth:`~ctxbudget.session.conversation.Conversation.keep_order_in`).
        """
        owned: SpillIndex[int] = SpillIndex()
        self._owned.append(owned)
        return owned

    def close(self) -> None:
        """Remove the temporary files (the counts stay)."""
        if self._counts is None:
            self._counts = (self.count, self.archived)
        for owned in self._owned:
            owned.close()
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._path is not None:
            self._path.unlink(missing_ok=True)
            self._path = None

    def __contains__(self, handle: object) -> bool:
        return handle in self._where

    def put(self, entry: ArchiveEntry) -> None:
        """Write ``entry`` out (once per handle) and count it."""
        if entry.handle in self._where:
            return
        offset = -1
        if self._file is not None:
            data = entry.model_dump_json().encode("utf-8") + b"\n"  # JSON escapes newlines: one line per entry
            offset = self._file.seek(0, os.SEEK_END)
            self._file.write(data)
        self._where[entry.handle] = offset
        if entry.message is not None:
            bounded = int(entry.reason == "bounded" and self.arriving)
            known = self._originals.get(entry.message.id)
            if known is None or bounded > known:
                self._originals[entry.message.id] = bounded
                self._bounded += bounded

    def read(self, handle: str) -> ArchiveEntry | None:
        """The entry written under ``handle``, read back (``None`` when it was only counted)."""
        offset = self._where.get(handle, -1)
        if offset < 0 or self._file is None:
            return None
        self._file.seek(offset)
        return ArchiveEntry.model_validate_json(self._file.readline().rstrip(b"\n"))

    def lines(self) -> Iterator[bytes]:
        """Each entry's JSON, in archiving order (``compact`` copies them into its document)."""
        if self._file is None:
            return
        self._file.flush()
        self._file.seek(0)
        for line in self._file:
            yield line.rstrip(b"\n")

    def entries(self) -> Iterator[ArchiveEntry]:
        """Each entry written, read back in archiving order."""
        for line in self.lines():
            yield ArchiveEntry.model_validate(json.loads(line))


class SpillArchive(Archive):
    """An :class:`~ctxbudget.archive.store.Archive` whose entries go to an :class:`ArchiveSink` as they are archived.

    In memory: the entries of messages still in the window (see :meth:`retain`). Search is over what the sink
    kept. Thread-safe like the archive it replaces.
    """

    def __init__(self, sink: ArchiveSink, entries: Iterable[ArchiveEntry] = ()) -> None:
        super().__init__()
        self.sink = sink
        for entry in entries:
            self.add(entry)

    def __len__(self) -> int:
        return self.sink.count

    def __contains__(self, handle: object) -> bool:
        return handle in self._entries or handle in self.sink

    def __iter__(self) -> Iterator[ArchiveEntry]:
        return iter(self.entries())

    def put_message(self, message: Message, reason: ArchiveReason) -> str:
        """Archive ``message`` (written out at once) and return its handle."""
        handle = f"{HANDLE_PREFIX}{message.id}.{reason}"
        with self._lock:
            if handle not in self:
                self._keep(ArchiveEntry(handle=handle, reason=reason, message=message))
        return handle

    def put_text(self, key: str, text: str, *, source: str | None = None, reason: ArchiveReason = "evidence") -> str:
        """Archive a long text under ``key`` and return its handle."""
        if not key:
            raise InvalidPolicyError("key: an archive key must be non-empty", field="key")
        handle = f"{HANDLE_PREFIX}{key}"
        with self._lock:
            existing = self._lookup(handle)
            if existing is not None and existing.full_text != text:
                raise ArchiveError(
                    f"handle {handle!r} already holds a different text ({len(existing.full_text)} chars)"
                )
            if existing is None and handle not in self.sink:
                self._keep(ArchiveEntry(handle=handle, reason=reason, text=text, source=source))
        return handle

    def add(self, entry: ArchiveEntry) -> str:
        """Keep an existing entry under its own handle; the first one kept wins."""
        with self._lock:
            if entry.handle not in self:
                self._keep(entry)
        return entry.handle

    def _keep(self, entry: ArchiveEntry) -> None:
        self._entries[entry.handle] = entry
        self.sink.put(entry)

    def _lookup(self, handle: str) -> ArchiveEntry | None:
        entry = self._entries.get(handle)
        return entry if entry is not None else self.sink.read(handle)

    def retain(self, live_ids: set[str]) -> None:
        """Forget (in memory) the entries of messages no longer in ``live_ids``: they stay in the sink."""
        with self._lock:
            for handle, entry in list(self._entries.items()):
                if entry.message is None or entry.message.id not in live_ids:
                    del self._entries[handle]

    def get(self, handle: str) -> ArchiveEntry:
        """The entry for ``handle`` (read back from the sink when it left memory)."""
        entry = self._lookup(handle)
        if entry is None:
            raise ArchiveError(f"handle: {handle!r} is not in the archive ({len(self)} entries)")
        return entry

    def messages(self) -> list[Message]:
        """Every archived original message, in archiving order (one per message id)."""
        seen: dict[str, Message] = {}
        for entry in self.entries():
            if entry.message is not None and entry.message.id not in seen:
                seen[entry.message.id] = entry.message
        return list(seen.values())

    def entries(self) -> list[ArchiveEntry]:
        """Every entry the sink kept, in archiving order (read back; only the in-memory ones when it kept none)."""
        if not self.sink.keep:
            return list(self._entries.values())
        return list(self.sink.entries())

    def search(self, query: str, k: int = 5) -> list[ArchiveHit]:
        """Search what the sink kept (read back), as :meth:`Archive.search` does."""
        return Archive(self.entries()).search(query, k)
