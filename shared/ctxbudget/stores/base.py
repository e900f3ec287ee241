"""The snapshot-store seam: where serialized sessions live, with optimistic concurrency and an append log.

A store keeps, per session id, two things:

* **one snapshot**: an opaque JSON string with a version. Versions start at 1 and go up by one on every save.
  :meth:`SnapshotStore.save` is a compare-and-set: it succeeds only when the caller names the version it read,
  so a stale writer gets :class:`~ctxbudget.errors.SnapshotConflictError` (with both versions), never a silent
  overwrite. "No snapshot" is reported as version 0 in that error.
* **an append-only log** of opaque JSON records, for concurrent workers that must not fight over the snapshot.
  :meth:`SnapshotStore.append` gives records sequence numbers that are monotonic, gap-free and unique across
  every worker of every process. A snapshot may record (inside its own JSON) how far into the log it has
  absorbed; once such a snapshot is saved, :meth:`SnapshotStore.trim_log` drops the absorbed records.
* **an append-only archive**: one entry per archived original (:class:`ArchiveRecord`: a handle, the archived
  message's id when it is a message, and opaque JSON), written once and never changed: writing a handle that
  exists keeps the stored entry. Each new entry gets the next archive sequence number, so entries are read by
  handle (:meth:`SnapshotStore.get_archive`) or by range (:meth:`SnapshotStore.read_archive`, e.g. only those a
  reader has not seen), and :meth:`SnapshotStore.archived_ids` says which message ids have one. The snapshot then
  holds only the live state, whatever the length of the conversation's past.

Backends implement the small ``_`` methods of :class:`~ctxbudget.stores._backend.StoreBackend`; the public
methods validate the arguments (:class:`~ctxbudget.errors.UsageError` subclasses naming the field), raise conflicts
with the numbers, and turn backend exceptions into :class:`~ctxbudget.errors.SnapshotStoreError` with the cause
chained. A stored field that holds what no store writes (a version that is not an integer >= 1, text that is not
UTF-8, a log entry without its sequence number) is a ``SnapshotStoreError`` too, naming the store, the key or column
and the value: corrupt data is reported, never converted or passed on.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Protocol, runtime_checkable

from ctxbudget.stores._async import AsyncStoreMethods
from ctxbudget.stores._checks import (
    check_archive_records,
    check_data,
    check_names,
    check_records,
    check_version,
    check_watermark,
)
from ctxbudget.stores._models import ArchiveRecord, StoredSnapshot, conflict

__all__ = ["ArchiveRecord", "BaseSnapshotStore", "SnapshotStore", "StoredSnapshot"]


@runtime_checkable
class SnapshotStore(Protocol):
    """Where session snapshots and their append logs live (sync)."""

    def load(self, session_id: str) -> StoredSnapshot | None:
        """Return the session's snapshot, or ``None`` when it has none."""
        ...

    def save(self, session_id: str, data: str, *, expected_version: int | None) -> int:
        """Compare-and-set the snapshot; ``None`` creates. Returns the new version."""
        ...

    def delete(self, session_id: str, *, expected_version: int) -> None:
        """Delete the snapshot and the log, if the stored version is ``expected_version``."""
        ...

    def append(self, session_id: str, records: Sequence[str]) -> list[int]:
        """Atomically append JSON records to the session's log; returns their sequence numbers."""
        ...

    def read_log(self, session_id: str, *, after: int = 0) -> list[tuple[int, str]]:
        """Return ``(seq, record)`` pairs with ``seq > after``, in sequence order."""
        ...

    def log_head(self, session_id: str) -> int:
        """Return the last sequence number handed out for the session (0 when none)."""
        ...

    def trim_log(self, session_id: str, *, upto: int) -> int:
        """Delete log records with ``seq <= upto``; returns how many were deleted."""
        ...

    def put_archive(self, session_id: str, records: Sequence[ArchiveRecord]) -> list[int]:
        """Write new archive entries (existing handles are kept); returns each one's sequence number, 0 if kept."""
        ...

    def get_archive(self, session_id: str, handles: Sequence[str]) -> dict[str, str]:
        """Return ``{handle: data}`` for the handles the archive holds (absent ones are left out)."""
        ...

    def read_archive(self, session_id: str, *, after: int = 0, limit: int | None = None) -> list[tuple[int, str, str]]:
        """Return ``(seq, handle, data)`` for entries with ``seq > after``, in sequence order, at most ``limit``."""
        ...

    def archive_head(self, session_id: str) -> int:
        """Return the last archive sequence number handed out (0 when none)."""
        ...

    def archived_ids(self, session_id: str, message_ids: Sequence[str]) -> dict[str, int]:
        """Return ``{message_id: lowest log_seq}`` for those of ``message_ids`` that have an archive entry."""
        ...


class BaseSnapshotStore(AsyncStoreMethods):
    """Template for backends: public methods validate and translate errors, subclasses do the storage.

    Subclasses set :attr:`backend_name` and :attr:`backend_errors` and implement the ``_`` methods of
    :class:`~ctxbudget.stores._backend.StoreBackend`. Those receive validated arguments, use ``0`` for "no
    snapshot", and must make ``_save``, ``_delete`` and ``_append`` atomic against every other writer of the same
    storage. The async twins (``aload``, ...) come from :class:`~ctxbudget.stores._async.AsyncStoreMethods`.
    """

    def load(self, session_id: str) -> StoredSnapshot | None:
        """Return the session's snapshot, or ``None`` when it has none.

        Args:
            session_id: the session; a non-empty string.

        Raises:
            SnapshotStoreError: the backend failed.
        """
        self._check_session_id(session_id)
        with self._translating("load", session_id):
            found = self._load(session_id)
        if found is None:
            return None
        version, data = found
        return StoredSnapshot(session_id=session_id, version=version, data=data)

    def save(self, session_id: str, data: str, *, expected_version: int | None) -> int:
        """Store ``data`` as the session's next version, if nobody else saved first.

        Args:
            session_id: the session; a non-empty string.
            data: the snapshot, a JSON string; stored and returned verbatim.
            expected_version: the version this writer read, or ``None`` to create a session that must not
                exist yet.

        Returns:
            The new version: ``expected_version + 1``, or 1 for a create.

        Raises:
            UsageError: a blank ``session_id``, one that is not valid UTF-8 (a lone surrogate), or an
                ``expected_version`` below 1 (field named).
            SnapshotFormatError: ``data`` is not a str holding one valid JSON document: not UTF-8 encodable (a
                lone surrogate), ``NaN``/``Infinity``, or nested too deeply to parse.
            SnapshotConflictError: the stored version is not ``expected_version`` (or the session exists).
            SnapshotStoreError: the backend failed.
        """
        self._check_session_id(session_id)
        check_data(data)
        if expected_version is not None:
            check_version(expected_version, "expected_version")
        expected = expected_version or 0
        with self._translating("save", session_id):
            saved, version = self._save(session_id, data, expected)
        if not saved:
            raise conflict("save", session_id, expected, version)
        return version

    def delete(self, session_id: str, *, expected_version: int) -> None:
        """Delete the session's snapshot and its whole log, if the stored version is ``expected_version``.

        Sequence numbers of a deleted session start again at 1.

        Raises:
            SnapshotConflictError: the stored version is not ``expected_version`` (0 = no snapshot).
            SnapshotStoreError: the backend failed.
        """
        self._check_session_id(session_id)
        check_version(expected_version, "expected_version")
        with self._translating("delete", session_id):
            deleted, version = self._delete(session_id, expected_version)
        if not deleted:
            raise conflict("delete", session_id, expected_version, version)

    def append(self, session_id: str, records: Sequence[str]) -> list[int]:
        """Atomically append JSON records to the session's log.

        Args:
            session_id: the session; it needs no snapshot.
            records: JSON strings, stored verbatim; an empty sequence appends nothing.

        Returns:
            The records' sequence numbers, consecutive, in the order given; unique across all writers.

        Raises:
            SnapshotFormatError: ``records`` is a single str, or an item is not valid JSON (``records[i]``);
                nothing was appended.
            SnapshotStoreError: the backend failed; the records may or may not have been appended (a commit can
                land and its reply be lost), always all of them or none. Re-appending the same records is safe
                for readers that skip duplicates, as :class:`~ctxbudget.shared_session.session.SharedSession` loads do
                (they skip duplicate message ids).
        """
        self._check_session_id(session_id)
        batch = check_records(records)
        if not batch:
            return []
        with self._translating("append", session_id):
            first = self._append(session_id, batch)
        return list(range(first, first + len(batch)))

    def read_log(self, session_id: str, *, after: int = 0) -> list[tuple[int, str]]:
        """Return the log's ``(seq, record)`` pairs with ``seq > after``, in sequence order.

        Raises:
            SnapshotStoreError: the backend failed.
        """
        self._check_session_id(session_id)
        check_watermark(after, "after")
        with self._translating("read_log", session_id):
            return self._read_log(session_id, after)

    def log_head(self, session_id: str) -> int:
        """Return the last sequence number handed out for the session; 0 when none (trimming keeps it).

        Raises:
            SnapshotStoreError: the backend failed.
        """
        self._check_session_id(session_id)
        with self._translating("log_head", session_id):
            return self._log_head(session_id)

    def trim_log(self, session_id: str, *, upto: int) -> int:
        """Delete log records with ``seq <= upto``: call it once a snapshot absorbing them is saved.

        Returns:
            How many records were deleted.

        Raises:
            UsageError: ``upto`` is past the log head (those records do not exist yet).
            SnapshotStoreError: the backend failed.
        """
        self._check_session_id(session_id)
        check_watermark(upto, "upto")
        with self._translating("trim_log", session_id):
            head = self._log_head(session_id)
            check_watermark(upto, "upto", head=head)
            return self._trim_log(session_id, upto)

    def put_archive(self, session_id: str, records: Sequence[ArchiveRecord]) -> list[int]:
        """Write archive entries, each once: a handle the archive already holds keeps its stored entry.

        Atomic: all new entries of one call are written or none. New entries get consecutive archive sequence
        numbers in the order given.

        Returns:
            Each record's sequence number, or 0 for a record whose handle was already stored (kept as it was).

        Raises:
            SnapshotFormatError: ``records`` is not a sequence of :class:`ArchiveRecord`, or a record's ``data`` is
                not one valid JSON document (``records[i].data``); nothing was written.
            UsageError: a handle or message id that is not valid UTF-8, or one handle twice in the call.
            SnapshotStoreError: the backend failed; the entries may or may not have been written (all or none).
        """
        self._check_session_id(session_id)
        batch = check_archive_records(records)
        if not batch:
            return []
        with self._translating("put_archive", session_id):
            return self._put_archive(session_id, batch)

    def get_archive(self, session_id: str, handles: Sequence[str]) -> dict[str, str]:
        """Return ``{handle: data}`` for each of ``handles`` the archive holds; absent handles are left out.

        Raises:
            UsageError: ``handles`` is not a sequence of str.
            SnapshotStoreError: the backend failed.
        """
        self._check_session_id(session_id)
        wanted = check_names(handles, "handles")
        if not wanted:
            return {}
        with self._translating("get_archive", session_id):
            return self._get_archive(session_id, wanted)

    def read_archive(self, session_id: str, *, after: int = 0, limit: int | None = None) -> list[tuple[int, str, str]]:
        """Return ``(seq, handle, data)`` for archive entries with ``seq > after``, in sequence order.

        Args:
            session_id: the session.
            after: the last sequence number the reader has (0: from the start).
            limit: at most this many entries (``None``: all).

        Raises:
            UsageError: ``after`` below 0 or ``limit`` below 1.
            SnapshotStoreError: the backend failed.
        """
        self._check_session_id(session_id)
        check_watermark(after, "after")
        if limit is not None:
            check_version(limit, "limit")
        with self._translating("read_archive", session_id):
            return self._read_archive(session_id, after, limit)

    def archive_head(self, session_id: str) -> int:
        """Return the last archive sequence number handed out for the session; 0 when none.

        Raises:
            SnapshotStoreError: the backend failed.
        """
        self._check_session_id(session_id)
        with self._translating("archive_head", session_id):
            return self._archive_head(session_id)

    def archived_ids(self, session_id: str, message_ids: Sequence[str]) -> dict[str, int]:
        """Return ``{message_id: log_seq}`` for those of ``message_ids`` that have an archive entry.

        ``log_seq`` is the lowest :attr:`ArchiveRecord.log_seq` written for the id: a reader whose snapshot
        absorbed the log up to at least that record knows the message was absorbed, so a later copy of it in the
        log (a retried append) is a duplicate.

        Raises:
            UsageError: ``message_ids`` is not a sequence of str.
            SnapshotStoreError: the backend failed.
        """
        self._check_session_id(session_id)
        wanted = check_names(message_ids, "message_ids")
        if not wanted:
            return {}
        with self._translating("archived_ids", session_id):
            return self._archived_ids(session_id, wanted)

    def close(self) -> None:
        """Release the backend's resources (connections); the default has none."""

    def __enter__(self) -> BaseSnapshotStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
