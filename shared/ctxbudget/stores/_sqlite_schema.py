"""The SQLite store's schema: its tables, its version, creating a fresh file and migrating an older one.

Tables are created only in a fresh file (no ``ctxbudget`` table yet) or added by a migration (a schema-1 file gets
the archive tables). A file whose recorded schema already has a table that is now missing (dropped, or left out of
a restore) is refused with :class:`~ctxbudget.errors.SnapshotStoreError`: re-creating it empty would silently lose
what it held (a session's archive, its log).
"""

from __future__ import annotations

import sqlite3

from ctxbudget.errors import SnapshotStoreError
from ctxbudget.stores._stored import stored_int

__all__ = ["SCHEMA_VERSION", "TABLES", "check_schema_version", "create_or_migrate", "schema_version"]

SCHEMA_VERSION = 2
"""The schema this module writes; a database with a newer one is refused, an older one is migrated."""

TABLES = frozenset(
    {
        "ctxbudget_schema",
        "ctxbudget_snapshots",
        "ctxbudget_log_heads",
        "ctxbudget_log",
        "ctxbudget_archive",
        "ctxbudget_archive_heads",
    }
)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS ctxbudget_schema (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ctxbudget_snapshots ("
    " session_id TEXT PRIMARY KEY, version INTEGER NOT NULL, data TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ctxbudget_log_heads (session_id TEXT PRIMARY KEY, head INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ctxbudget_log ("
    " session_id TEXT NOT NULL, seq INTEGER NOT NULL, record TEXT NOT NULL,"
    " PRIMARY KEY (session_id, seq)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS ctxbudget_archive ("
    " session_id TEXT NOT NULL, seq INTEGER NOT NULL, handle TEXT NOT NULL, message_id TEXT,"
    " log_seq INTEGER NOT NULL, record TEXT NOT NULL,"
    " PRIMARY KEY (session_id, seq)) WITHOUT ROWID",
    "CREATE UNIQUE INDEX IF NOT EXISTS ctxbudget_archive_handle ON ctxbudget_archive (session_id, handle)",
    "CREATE INDEX IF NOT EXISTS ctxbudget_archive_message ON ctxbudget_archive (session_id, message_id)",
    "CREATE TABLE IF NOT EXISTS ctxbudget_archive_heads (session_id TEXT PRIMARY KEY, head INTEGER NOT NULL)",
)

_SCHEMA_1_TABLES = TABLES - {"ctxbudget_archive", "ctxbudget_archive_heads"}
"""The tables of a schema-1 file (before the archive moved beside the snapshot)."""


def create_or_migrate(conn: sqlite3.Connection, path: str) -> int:
    """Under the write lock: create missing tables, then record (or raise to) this module's schema version.

    Run again under the lock because another process may have created or migrated the file meanwhile. A newer
    version found here is returned as it is (and refused by the caller).

    Raises:
        SnapshotStoreError: a table the file's recorded schema has is missing (it is not re-created empty).
    """
    _refuse_lost_tables(conn, path)
    for statement in _SCHEMA:
        conn.execute(statement)
    found = schema_version(conn)
    if found is None:
        conn.execute("DELETE FROM ctxbudget_schema")
        conn.execute("INSERT INTO ctxbudget_schema (version) VALUES (?)", (SCHEMA_VERSION,))
        return SCHEMA_VERSION
    if found < SCHEMA_VERSION:
        conn.execute("UPDATE ctxbudget_schema SET version = ?", (SCHEMA_VERSION,))
        return SCHEMA_VERSION
    return found


def _refuse_lost_tables(conn: sqlite3.Connection, path: str) -> None:
    """Raise when a table the file's schema already had is gone (a fresh file, or a migration, passes)."""
    names = _table_names(conn)
    if not names:
        return  # a fresh file
    version = _recorded_version(conn) if "ctxbudget_schema" in names else None
    if version is None:
        return  # no schema recorded yet: created by an interrupted first open, or before versions were kept
    required = TABLES if version >= SCHEMA_VERSION else _SCHEMA_1_TABLES
    missing = sorted(required - names)
    if missing:
        raise SnapshotStoreError(
            f"sqlite: {path} has schema version {version} and is missing table(s) {', '.join(missing)}: they were "
            "dropped or left out of a restore; refusing to re-create them empty, which would silently lose the "
            "rows they held (restore them, or start a new file)"
        )


def _table_names(conn: sqlite3.Connection) -> set[str]:
    query = "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ctxbudget%'"
    return {str(row[0]) for row in conn.execute(query).fetchall()}


def _recorded_version(conn: sqlite3.Connection) -> int | None:
    row = conn.execute("SELECT MAX(version) FROM ctxbudget_schema").fetchone()
    if not row or row[0] is None:
        return None
    return stored_int(row[0], "ctxbudget_schema.version", minimum=1, expected="a schema version (an integer >= 1)")


def schema_version(conn: sqlite3.Connection) -> int | None:
    """The stored schema version, or ``None`` when any table or the version row is missing (a read, no lock)."""
    if not _table_names(conn) >= TABLES:
        return None
    return _recorded_version(conn)


def check_schema_version(found: int, path: str) -> None:
    """Refuse a file written by a newer ctxbudget (:class:`SnapshotStoreError`)."""
    if found > SCHEMA_VERSION:
        message = f"sqlite: {path} has schema version {found}, this ctxbudget reads up to {SCHEMA_VERSION}"
        raise SnapshotStoreError(message)
