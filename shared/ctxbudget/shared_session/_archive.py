"""A shared session's archive, kept append-only in its store beside the snapshot.

:class:`StoredArchive` is the :class:`~ctxbudget.archive.store.Archive` a session loaded by
:class:`~ctxbudget.shared_session.session.SharedSession` holds. Compaction uses it like any archive; entries archived
since the load stay local (:meth:`StoredArchive.new_entries`) until the shared session saves, which writes them to the
store (each once) before its compare-and-set. Reading an entry (``get``, ``read``, ``in``) fetches it by handle
when it is not cached; listing, ``messages()`` and ``search()`` first bring the handle's :class:`ArchiveCache` up to
the store's archive head by range, so each entry is fetched and decoded once per handle, whatever the number of loads.

Record format (JSON, one per entry; ``digest`` is :func:`~ctxbudget.archive.store.content_digest` of the other fields)::

    {"schema": "ctxbudget.archive.v1", "position": 12, "entry": {...ArchiveEntry...}, "digest": "sha256:..."}

``position`` is the archived message's add position (``null`` for a text entry); it orders
:meth:`~ctxbudget.session.session.ContextSession.originals` once the message has left the live state.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import ValidationError

from ..archive.search import ArchiveHit, check_search_args
from ..archive.store import Archive, ArchiveEntry, ArchiveReason, content_digest
from ..errors import ArchiveError, SnapshotFormatError, SnapshotIntegrityError
from ..messages.message import Message
from ..stores.base import ArchiveRecord, SnapshotStore

__all__ = ["ARCHIVE_RECORD_SCHEMA", "ArchiveCache", "StoredArchive", "decode_entry", "encode_entry"]

ARCHIVE_RECORD_SCHEMA = "ctxbudget.archive.v1"


def encode_entry(entry: ArchiveEntry, position: int | None, log_seq: int) -> ArchiveRecord:
    """The store record of ``entry``: its JSON with the add position and the content digest."""
    body: dict[str, Any] = {
        "schema": ARCHIVE_RECORD_SCHEMA,
        "position": position,
        "entry": entry.model_dump(mode="json"),
    }
    body["digest"] = content_digest(body)
    message_id = entry.message.id if entry.message is not None else None
    return ArchiveRecord(handle=entry.handle, message_id=message_id, log_seq=log_seq, data=json.dumps(body))


def decode_entry(handle: str, data: str, session_id: str) -> tuple[ArchiveEntry, int | None]:
    """Check and decode a stored record; returns the entry and its message's add position.

    Raises:
        SnapshotIntegrityError: the record's content does not match its digest (naming the handle, both digests).
        SnapshotFormatError: the record is not an archive record, or is stored under another handle.
    """
    where = f"archive entry {handle!r} of session {session_id!r}"
    try:
        body = json.loads(data)
    except (ValueError, RecursionError):  # not JSON, too deep, or an integer past sys.get_int_max_str_digits()
        raise SnapshotFormatError(f"{where}: not valid JSON", field="archive") from None
    if not isinstance(body, dict) or body.get("schema") != ARCHIVE_RECORD_SCHEMA:
        got = body.get("schema") if isinstance(body, dict) else type(body).__name__
        raise SnapshotFormatError(f"{where}.schema: expected {ARCHIVE_RECORD_SCHEMA!r}, got {got!r}", field="schema")
    stored = body.pop("digest", None)
    try:
        actual = content_digest(body)
    except ValueError:  # NaN, Infinity or 1e999: json.loads accepts them, JSON (and the digest) does not
        message = f"{where}: not valid JSON: it holds NaN, Infinity or a number out of float range; refusing to read it"
        raise SnapshotFormatError(message, field="archive") from None
    if stored != actual:
        raise SnapshotIntegrityError(
            f"{where}: content digest {actual} does not match the stored digest {stored}: the entry was edited or "
            "corrupted after it was written; refusing to read it",
            where=where,
            expected=str(stored),
            actual=actual,
        )
    try:
        entry = ArchiveEntry.model_validate(body.get("entry"))
    except ValidationError as exc:
        raise SnapshotFormatError(f"{where}.entry: {exc.errors()[0]['msg']}", field="entry") from None
    position = body.get("position")
    if entry.handle != handle or not (position is None or (isinstance(position, int) and position >= 0)):
        problem = f"holds handle {entry.handle!r}" if entry.handle != handle else f"position {position!r}"
        raise SnapshotFormatError(f"{where}: {problem}, which its key does not allow", field="entry")
    return entry, position


class ArchiveCache:
    """The archive entries one :class:`SharedSession` handle has read from its store, shared by its loads.

    Entries are written once, so a cached entry never goes stale: :meth:`sync` reads only the range after
    :attr:`synced` (the last archive sequence number it holds every entry up to).
    """

    def __init__(self, store: SnapshotStore, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.archive = Archive()  # entries in archive sequence order, searched incrementally
        self.positions: dict[str, int] = {}  # message id -> add position, of archived messages
        self.synced = 0
        self.expected = 0  # the highest archive head a loaded snapshot recorded: entries 1..expected must exist
        self._fetched: dict[str, ArchiveEntry] = {}  # read by handle, ahead of the synced range
        self._lock = threading.Lock()

    def expect(self, head: int) -> None:
        """Note that a loaded snapshot recorded archive entries ``1..head`` (checked by the next :meth:`sync`)."""
        with self._lock:
            self.expected = max(self.expected, head)

    def sync(self) -> None:
        """Read (by range) and keep every entry the store holds past :attr:`synced`.

        Raises:
            SnapshotIntegrityError: an entry is missing: the sequence numbers have a gap, or the store holds fewer
                entries than a loaded snapshot recorded (rows deleted, a table dropped or not restored).
        """
        with self._lock:
            for seq, handle, data in self.store.read_archive(self.session_id, after=self.synced):
                if seq != self.synced + 1:
                    raise self._lost(f"entry {self.synced + 1}", f"entry {seq}", _span(self.synced + 1, seq - 1))
                self._keep(*decode_entry(handle, data, self.session_id))
                self.synced = seq
            if self.synced < self.expected:
                found = f"{self.synced} entries"
                raise self._lost(f"{self.expected} entries", found, _span(self.synced + 1, self.expected))

    def _lost(self, expected: str, actual: str, missing: str) -> SnapshotIntegrityError:
        where = f"archive of session {self.session_id!r}"
        return SnapshotIntegrityError(
            f"{where}: {missing} missing (expected {expected}, found {actual}; the snapshot recorded "
            f"{self.expected} entries): archive rows were deleted or lost after they were written; refusing to "
            "return a partial archive",
            where=where,
            expected=expected,
            actual=actual,
        )

    def get(self, handle: str) -> ArchiveEntry | None:
        """The entry under ``handle``: cached, else fetched by handle (``None`` when the store has none)."""
        with self._lock:
            if handle in self.archive:
                return self.archive.get(handle)
            if handle in self._fetched:
                return self._fetched[handle]
        found = self.store.get_archive(self.session_id, [handle])
        if handle not in found:
            return None
        entry, _ = decode_entry(handle, found[handle], self.session_id)
        with self._lock:
            self._fetched[handle] = entry
        return entry

    def holds(self, handle: str) -> bool:
        """``handle`` is cached (no store call)."""
        with self._lock:
            return handle in self.archive or handle in self._fetched

    def _keep(self, entry: ArchiveEntry, position: int | None) -> None:
        self.archive.add(entry)
        self._fetched.pop(entry.handle, None)
        if entry.message is not None and position is not None:
            self.positions.setdefault(entry.message.id, position)


def _span(first: int, last: int) -> str:
    return f"entry {first} is" if first == last else f"entries {first}..{last} are"


class StoredArchive(Archive):
    """The archive of a session loaded from a store: cached store entries plus the ones archived since the load."""

    def __init__(self, cache: ArchiveCache, entries: Iterable[ArchiveEntry] = ()) -> None:
        super().__init__(entries)
        self.cache = cache

    def new_entries(self) -> list[ArchiveEntry]:
        """Entries archived since the load (written to the store by the next save), in archiving order."""
        with self._lock:
            return list(self._order)

    def _everything(self) -> list[ArchiveEntry]:
        self.cache.sync()
        stored = self.cache.archive.entries()
        return stored + [entry for entry in self.new_entries() if entry.handle not in self.cache.archive]

    def __len__(self) -> int:
        return len(self._everything())

    def __contains__(self, handle: object) -> bool:
        if not isinstance(handle, str):
            return False
        with self._lock:
            if handle in self._entries:
                return True
        return self.cache.get(handle) is not None

    def __iter__(self) -> Iterator[ArchiveEntry]:
        return iter(self._everything())

    def put_message(self, message: Message, reason: ArchiveReason) -> str:
        """As :meth:`Archive.put_message`; a handle the store already holds is not archived again."""
        handle = f"ctx://archive/{message.id}.{reason}"
        if self.cache.holds(handle):
            return handle
        return super().put_message(message, reason)

    def put_text(self, key: str, text: str, *, source: str | None = None, reason: ArchiveReason = "evidence") -> str:
        """As :meth:`Archive.put_text`; a different text under a handle the store holds is an :class:`ArchiveError`."""
        handle = f"ctx://archive/{key}"
        existing = self.cache.get(handle) if key else None
        if existing is not None:
            if existing.full_text != text:
                raise ArchiveError(
                    f"handle {handle!r} already holds a different text ({len(existing.full_text)} chars)"
                )
            return handle
        return super().put_text(key, text, source=source, reason=reason)

    def get(self, handle: str) -> ArchiveEntry:
        """The entry for ``handle`` (archived since the load, cached, or fetched from the store)."""
        with self._lock:
            entry = self._entries.get(handle)
        if entry is None:
            entry = self.cache.get(handle)
        if entry is None:
            raise ArchiveError(f"handle: {handle!r} is not in the archive (read from the store of the session)")
        return entry

    def messages(self) -> list[Message]:
        """Every archived original message (the store's and the new ones), one per id, in archiving order."""
        seen: dict[str, Message] = {}
        for entry in self._everything():
            if entry.message is not None and entry.message.id not in seen:
                seen[entry.message.id] = entry.message
        return list(seen.values())

    def entries(self) -> list[ArchiveEntry]:
        """Every entry (the store's, then the new ones), in archiving order."""
        return self._everything()

    def positions(self) -> dict[str, int]:
        """Add positions of archived messages, as the store's records carry them."""
        self.cache.sync()
        return dict(self.cache.positions)

    def search(self, query: str, k: int = 5) -> list[ArchiveHit]:
        """Rank every archived original for ``query``; the store's entries are indexed once per handle."""
        check_search_args(query, k)
        self.cache.sync()
        new = [entry for entry in self.new_entries() if entry.handle not in self.cache.archive]
        if not new:
            return self.cache.archive.search(query, k)
        return Archive([*self.cache.archive.entries(), *new]).search(query, k)
