"""The backend side of a store: the ``_`` hooks a backend implements, and how its failures are reported.

:class:`StoreBackend` is what :class:`~ctxbudget.stores.base.BaseSnapshotStore`'s public methods (sync, and the async
twins of :mod:`ctxbudget.stores._async`) are built on: they validate, then call these hooks inside
:meth:`StoreBackend._translating`, which turns a backend exception or corrupt stored data into
:class:`~ctxbudget.errors.SnapshotStoreError` naming the store, the operation and the session.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from ctxbudget.errors import SnapshotStoreError
from ctxbudget.stores._checks import check_session_id
from ctxbudget.stores._models import ArchiveRecord
from ctxbudget.stores._stored import CorruptField

__all__ = ["StoreBackend"]


class StoreBackend(abc.ABC):
    """The storage hooks of a backend and its error translation (the base of every store).

    Subclasses set :attr:`backend_name` and :attr:`backend_errors` and implement the ``_`` methods. Those
    receive validated arguments, use ``0`` for "no snapshot", and must make ``_save``, ``_delete`` and
    ``_append`` atomic against every other writer of the same storage.
    """

    backend_name: ClassVar[str] = "store"
    """Names the backend in error messages."""

    backend_errors: ClassVar[tuple[type[BaseException], ...]] = ()
    """Exceptions of the backend that become :class:`~ctxbudget.errors.SnapshotStoreError`."""

    def _check_session_id(self, session_id: object) -> None:
        """Refuse a session id this backend cannot store apart from every other (UsageError naming the field).

        The default accepts every non-blank UTF-8 string; a backend that builds keys from the id extends it.
        """
        check_session_id(session_id)

    def _describe(self) -> str:
        """Name this store in error messages (backend and location)."""
        return self.backend_name

    @contextmanager
    def _translating(self, operation: str, session_id: str) -> Iterator[None]:
        """Turn a backend exception or corrupt data into :class:`SnapshotStoreError`, naming operation and session."""
        try:
            yield
        except CorruptField as exc:
            message = f"{self._describe()}: {operation} of session {session_id!r} failed: corrupt data: {exc}"
            raise SnapshotStoreError(message) from None
        except self.backend_errors as exc:
            cause = f"{type(exc).__name__}: {exc}"
            message = f"{self._describe()}: {operation} of session {session_id!r} failed: {cause}"
            raise SnapshotStoreError(message) from exc

    @abc.abstractmethod
    def _load(self, session_id: str) -> tuple[int, str] | None:
        """Return ``(version, data)`` or ``None``."""

    @abc.abstractmethod
    def _save(self, session_id: str, data: str, expected: int) -> tuple[bool, int]:
        """Compare-and-set; return ``(True, new_version)`` or ``(False, stored_version)``."""

    @abc.abstractmethod
    def _delete(self, session_id: str, expected: int) -> tuple[bool, int]:
        """Compare-and-delete snapshot and log; return ``(True, 0)`` or ``(False, stored_version)``."""

    @abc.abstractmethod
    def _append(self, session_id: str, records: list[str]) -> int:
        """Append atomically; return the first record's sequence number."""

    @abc.abstractmethod
    def _read_log(self, session_id: str, after: int) -> list[tuple[int, str]]:
        """Return records with ``seq > after`` in order."""

    @abc.abstractmethod
    def _log_head(self, session_id: str) -> int:
        """Return the last sequence number handed out, or 0."""

    @abc.abstractmethod
    def _trim_log(self, session_id: str, upto: int) -> int:
        """Delete records with ``seq <= upto``; return how many."""

    @abc.abstractmethod
    def _put_archive(self, session_id: str, records: list[ArchiveRecord]) -> list[int]:
        """Write the records whose handle is new, atomically; return seqs (0 for kept handles)."""

    @abc.abstractmethod
    def _get_archive(self, session_id: str, handles: list[str]) -> dict[str, str]:
        """Return ``{handle: data}`` for the stored ones."""

    @abc.abstractmethod
    def _read_archive(self, session_id: str, after: int, limit: int | None) -> list[tuple[int, str, str]]:
        """Return ``(seq, handle, data)`` with ``seq > after`` in order, at most ``limit``."""

    @abc.abstractmethod
    def _archive_head(self, session_id: str) -> int:
        """Return the last archive seq handed out, or 0."""

    @abc.abstractmethod
    def _archived_ids(self, session_id: str, message_ids: list[str]) -> dict[str, int]:
        """Return ``{id: lowest log_seq}`` for the ids among ``message_ids`` with an archive entry."""
