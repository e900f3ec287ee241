"""The values stores hand out and take (:class:`StoredSnapshot`, :class:`ArchiveRecord`) and the conflict error."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ctxbudget.errors import SnapshotConflictError

__all__ = ["ArchiveRecord", "StoredSnapshot", "conflict"]


class StoredSnapshot(BaseModel):
    """One stored snapshot, exactly as :meth:`SnapshotStore.load` returns it."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    session_id: str = Field(min_length=1, description="The session the snapshot belongs to.")
    version: int = Field(ge=1, description="The stored version; pass it as ``expected_version`` to save.")
    data: str = Field(description="The snapshot's JSON, byte for byte as it was saved.")


class ArchiveRecord(BaseModel):
    """One archive entry as a store keeps it: written once under its handle, never changed."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    handle: str = Field(min_length=1, description="The entry's key; writing an existing handle keeps the stored one.")
    message_id: str | None = Field(default=None, description="The archived message's id, when a message was archived.")
    log_seq: int = Field(
        default=0, ge=0, description="The append-log record the archived message came from (0: not from the log)."
    )
    data: str = Field(description="The entry's JSON, stored and returned verbatim.")


def conflict(operation: str, session_id: str, expected: int, actual: int) -> SnapshotConflictError:
    if expected == 0:
        detail = f"session {session_id!r} exists at version {actual}; expected_version=None only creates"
    elif actual == 0:
        detail = f"session {session_id!r} has no snapshot, expected_version is {expected}"
    else:
        detail = (
            f"session {session_id!r} is at version {actual}, expected_version is {expected}: "
            "another writer saved first; load and retry"
        )
    return SnapshotConflictError(f"{operation}: {detail}", expected_version=expected, actual_version=actual)
