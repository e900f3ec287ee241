"""A SQLite store (stdlib ``sqlite3``): safe across threads of one process and across processes on one file.

Every write (compare-and-set, append, delete, trim) runs in a ``BEGIN IMMEDIATE`` transaction, which takes
SQLite's write lock up front, so the read-check-write inside it cannot interleave with another writer in any
process. The database runs in WAL mode (readers never block the writer) with a busy timeout, so contending
writers wait for the lock instead of failing. Each instance holds one connection behind a lock and reopens it
in a forked child. The schema is created on first use (only when it is missing, so opening an existing file
never needs the write lock) and versioned in ``ctxbudget_schema``.

Schema 2 adds the append-only archive (``ctxbudget_archive``: one row per entry, keyed by session and archive
sequence number, unique per handle, indexed by message id; ``ctxbudget_archive_heads``). A schema-1 file is
migrated in place when first opened (the two tables are added under the write lock, nothing else changes); its
snapshots, which hold their archive inside, are read as they are, and a
:class:`~ctxbudget.shared_session.session.SharedSession` moves that archive into the new table on its next save.

SQLite columns are dynamically typed, so every value read back is checked: a version, head or sequence number that
is not an integer in range, or data that is not text, raises :class:`~ctxbudget.errors.SnapshotStoreError` naming
the column and the value (never a raw ``ValueError``, never ``str()`` of a BLOB).

A write that fails anywhere, ``COMMIT`` included (disk full, I/O error), is rolled back and the connection is
closed and reopened on next use, so a failed commit never leaves this instance inside a transaction holding the
write lock, nor reading data that was never committed.
"""

from __future__ import annotations

import math
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import ClassVar, Literal

from ctxbudget.errors import InvalidPolicyError
from ctxbudget.stores._sqlite_schema import (
    SCHEMA_VERSION,
    TABLES,
    check_schema_version,
    create_or_migrate,
    schema_version,
)
from ctxbudget.stores._stored import stored_int, stored_utf8
from ctxbudget.stores.base import ArchiveRecord, BaseSnapshotStore

__all__ = ["SCHEMA_VERSION", "SQLiteSnapshotStore"]

Synchronous = Literal["FULL", "NORMAL", "OFF"]

_SEQ = "a sequence number (an integer >= 1)"
_CHUNK = 500  # ids per IN (...) query: well under SQLite's bound-parameter limit
_HEAD = "a log head (an integer >= 0)"
_MAX_SEQ = 2**63 - 1  # SQLite's largest integer: a larger watermark or limit cannot be bound


def _checked_path(path: object) -> str:
    """``path`` as the str sqlite3 opens; anything but a str or path-like naming a file is an InvalidPolicyError."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        message = f"path: must be a str or os.PathLike (a file, or ':memory:'), got {type(path).__name__}"
        raise InvalidPolicyError(message, field="path")
    if "\x00" in path:
        raise InvalidPolicyError(f"path: must not contain NUL, got {path!r}", field="path")
    return path


class SQLiteSnapshotStore(BaseSnapshotStore):
    """Snapshots and logs in one SQLite file.

    Args:
        path: the database file; ``":memory:"`` keeps a private in-memory database for this instance only.
        timeout: seconds a writer waits for another process's write lock before failing.
        synchronous: SQLite's ``PRAGMA synchronous``. ``"FULL"`` survives power loss; ``"NORMAL"`` (safe from
            corruption in WAL mode, may lose the last commits on power loss) is much faster on slow disks.

    Raises:
        InvalidPolicyError: ``path`` is not a str or path-like, or holds NUL; ``timeout`` is not a finite number
            of seconds >= 0; ``synchronous`` is not one of the three modes (each naming the parameter).
    """

    backend_name: ClassVar[str] = "sqlite"
    backend_errors: ClassVar[tuple[type[BaseException], ...]] = (sqlite3.Error,)

    def __init__(
        self, path: str | Path = ":memory:", *, timeout: float = 30.0, synchronous: Synchronous = "FULL"
    ) -> None:
        self.path = _checked_path(path)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout):
            raise InvalidPolicyError(f"timeout: must be a finite number of seconds, got {timeout!r}", field="timeout")
        if timeout < 0:
            raise InvalidPolicyError(f"timeout: must be >= 0 seconds, got {timeout}", field="timeout")
        if synchronous not in ("FULL", "NORMAL", "OFF"):
            message = f"synchronous: must be FULL, NORMAL or OFF, got {synchronous!r}"
            raise InvalidPolicyError(message, field="synchronous")
        self._timeout = float(timeout)
        self._synchronous = synchronous
        self._lock = threading.RLock()
        self._connection: sqlite3.Connection | None = None
        self._pid = os.getpid()

    def close(self) -> None:
        """Close this instance's connection; the next call opens a new one."""
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None

    def _drop(self, conn: sqlite3.Connection) -> None:
        """Forget ``conn`` after a failed write: close it (which also releases any lock it still holds)."""
        with self._lock:
            if self._connection is conn:
                self._connection = None
            with suppress(sqlite3.Error):  # closing a broken connection may fail too; it is dropped either way
                conn.close()

    def _describe(self) -> str:
        return f"sqlite {self.path}"

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False)
        try:
            _enable_wal(conn, self._timeout)
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            found = schema_version(conn)
            if found is None or found < SCHEMA_VERSION:  # fresh or older: only then take the write lock
                with _immediate(conn):
                    found = create_or_migrate(conn, self.path)
            check_schema_version(found, self.path)
        except BaseException:
            conn.close()
            raise
        return conn

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        """This instance's connection, under its lock; (re)opened on first use and in a forked child."""
        with self._lock:
            if self._connection is None or self._pid != os.getpid():
                self._connection = self._open()
                self._pid = os.getpid()
            yield self._connection

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; on any failure (the body's or COMMIT's) it is rolled back and dropped.

        The next call then starts clean on a new connection.
        """
        with self._conn() as conn:
            try:
                with _immediate(conn):
                    yield conn
            except BaseException:
                self._drop(conn)
                raise

    def _version(self, conn: sqlite3.Connection, session_id: str) -> int:
        query = "SELECT version FROM ctxbudget_snapshots WHERE session_id = ?"
        row = conn.execute(query, (session_id,)).fetchone()
        return _version(row[0]) if row else 0

    def _load(self, session_id: str) -> tuple[int, str] | None:
        with self._conn() as conn:
            query = "SELECT version, data FROM ctxbudget_snapshots WHERE session_id = ?"
            row = conn.execute(query, (session_id,)).fetchone()
        return (_version(row[0]), stored_utf8(row[1], "ctxbudget_snapshots.data")) if row else None

    def _save(self, session_id: str, data: str, expected: int) -> tuple[bool, int]:
        with self._write() as conn:
            version = self._version(conn, session_id)
            if version != expected:
                return False, version
            conn.execute(
                "INSERT INTO ctxbudget_snapshots (session_id, version, data) VALUES (?, ?, ?)"
                " ON CONFLICT (session_id) DO UPDATE SET version = excluded.version, data = excluded.data",
                (session_id, version + 1, data),
            )
            return True, version + 1

    def _delete(self, session_id: str, expected: int) -> tuple[bool, int]:
        with self._write() as conn:
            version = self._version(conn, session_id)
            if version != expected:
                return False, version
            for table in sorted(TABLES - {"ctxbudget_schema"}):
                conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            return True, 0

    def _append(self, session_id: str, records: list[str]) -> int:
        with self._write() as conn:
            first = self._head(conn, session_id) + 1
            rows = [(session_id, first + offset, record) for offset, record in enumerate(records)]
            conn.executemany("INSERT INTO ctxbudget_log (session_id, seq, record) VALUES (?, ?, ?)", rows)
            conn.execute(
                "INSERT INTO ctxbudget_log_heads (session_id, head) VALUES (?, ?)"
                " ON CONFLICT (session_id) DO UPDATE SET head = excluded.head",
                (session_id, first + len(records) - 1),
            )
            return first

    def _read_log(self, session_id: str, after: int) -> list[tuple[int, str]]:
        if after >= _MAX_SEQ:
            return []  # no sequence number is past SQLite's largest integer (which cannot bind a larger one)
        with self._conn() as conn:
            query = "SELECT seq, record FROM ctxbudget_log WHERE session_id = ? AND seq > ? ORDER BY seq"
            rows = conn.execute(query, (session_id, after)).fetchall()
        return [
            (
                stored_int(seq, "ctxbudget_log.seq", minimum=1, expected=_SEQ),
                stored_utf8(record, "ctxbudget_log.record"),
            )
            for seq, record in rows
        ]

    def _log_head(self, session_id: str) -> int:
        with self._conn() as conn:
            return self._head(conn, session_id)

    def _head(self, conn: sqlite3.Connection, session_id: str) -> int:
        query = "SELECT head FROM ctxbudget_log_heads WHERE session_id = ?"
        row = conn.execute(query, (session_id,)).fetchone()
        return stored_int(row[0], "ctxbudget_log_heads.head", minimum=0, expected=_HEAD) if row else 0

    def _trim_log(self, session_id: str, upto: int) -> int:
        with self._write() as conn:
            query = "DELETE FROM ctxbudget_log WHERE session_id = ? AND seq <= ?"
            cursor = conn.execute(query, (session_id, upto))
            return int(cursor.rowcount)

    def _put_archive(self, session_id: str, records: list[ArchiveRecord]) -> list[int]:
        with self._write() as conn:
            head = self._archive_head_in(conn, session_id)
            seqs: list[int] = []
            query = "SELECT 1 FROM ctxbudget_archive WHERE session_id = ? AND handle = ?"
            for record in records:
                if conn.execute(query, (session_id, record.handle)).fetchone() is not None:
                    seqs.append(0)
                    continue
                head += 1
                conn.execute(
                    "INSERT INTO ctxbudget_archive (session_id, seq, handle, message_id, log_seq, record)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (session_id, head, record.handle, record.message_id, record.log_seq, record.data),
                )
                seqs.append(head)
            conn.execute(
                "INSERT INTO ctxbudget_archive_heads (session_id, head) VALUES (?, ?)"
                " ON CONFLICT (session_id) DO UPDATE SET head = excluded.head",
                (session_id, head),
            )
            return seqs

    def _get_archive(self, session_id: str, handles: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        with self._conn() as conn:
            for start in range(0, len(handles), _CHUNK):
                chunk = handles[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                query = f"SELECT handle, record FROM ctxbudget_archive WHERE session_id = ? AND handle IN ({marks})"
                for handle, record in conn.execute(query, (session_id, *chunk)).fetchall():
                    found[stored_utf8(handle, "ctxbudget_archive.handle")] = stored_utf8(
                        record, "ctxbudget_archive.record"
                    )
        return found

    def _read_archive(self, session_id: str, after: int, limit: int | None) -> list[tuple[int, str, str]]:
        if after >= _MAX_SEQ:
            return []
        limit = None if limit is None or limit >= _MAX_SEQ else limit  # past any row count: no limit
        with self._conn() as conn:
            query = (
                "SELECT seq, handle, record FROM ctxbudget_archive"
                " WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?"
            )
            rows = conn.execute(query, (session_id, after, -1 if limit is None else limit)).fetchall()
        return [
            (
                stored_int(seq, "ctxbudget_archive.seq", minimum=1, expected=_SEQ),
                stored_utf8(handle, "ctxbudget_archive.handle"),
                stored_utf8(record, "ctxbudget_archive.record"),
            )
            for seq, handle, record in rows
        ]

    def _archive_head(self, session_id: str) -> int:
        with self._conn() as conn:
            return self._archive_head_in(conn, session_id)

    def _archive_head_in(self, conn: sqlite3.Connection, session_id: str) -> int:
        row = conn.execute("SELECT head FROM ctxbudget_archive_heads WHERE session_id = ?", (session_id,)).fetchone()
        return stored_int(row[0], "ctxbudget_archive_heads.head", minimum=0, expected=_HEAD) if row else 0

    def _archived_ids(self, session_id: str, message_ids: list[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        with self._conn() as conn:
            for start in range(0, len(message_ids), _CHUNK):
                chunk = message_ids[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                # By the message index, named: without ANALYZE statistics SQLite picks the primary key and reads
                # every archived row of the session (12 ms at 50,000 entries, where the index takes microseconds).
                query = (
                    "SELECT message_id, MIN(log_seq) FROM ctxbudget_archive INDEXED BY ctxbudget_archive_message"
                    f" WHERE session_id = ? AND message_id IN ({marks}) GROUP BY message_id"
                )
                for message_id, seq in conn.execute(query, (session_id, *chunk)).fetchall():
                    where = "ctxbudget_archive.log_seq"
                    found[stored_utf8(message_id, "ctxbudget_archive.message_id")] = stored_int(
                        seq, where, minimum=0, expected=_HEAD
                    )
        return found


def _version(value: object) -> int:
    return stored_int(value, "ctxbudget_snapshots.version", minimum=1, expected="a version (an integer >= 1)")


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on any exception.

    A failing ``COMMIT`` counts as an exception: the transaction is rolled back too if it is still open
    (SQLite leaves it open after some commit failures, e.g. ``SQLITE_BUSY``, and closes it after others).
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open; a failing rollback is left to closing the connection."""
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # the caller drops the connection, and closing it rolls back whatever is still open


def _enable_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch to WAL, retrying while another process holds the lock.

    SQLite answers ``database is locked`` to a journal-mode change without calling the busy handler when other
    connections are opening the same fresh file, so the busy timeout does not cover it; we wait it out here.
    """
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        else:
            return
