"""What a :class:`~ctxbudget.shared_session.session.SharedSession` load returns, and what a handle counts."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..session.session import ContextSession

__all__ = ["LoadedSession", "SharedSessionStats"]


@dataclass(frozen=True)
class LoadedSession:
    """One consistent view of a shared session, as :meth:`SharedSession.load` returns it.

    Attributes:
        session: a private :class:`ContextSession` (snapshot + replayed log); changing it changes nothing stored.
        version: the snapshot version it was built from; a save based on it passes this as ``expected_version``.
        log_seq: the last log record it absorbed (also ``session.log_seq``).
        replayed: how many log messages were added on top of the snapshot.
        skipped: how many log records were skipped as duplicates of messages already held.
        invalid: how many log records were skipped because they could not be decoded or validated (each is
            logged as a warning and counted in :attr:`SharedSessionStats.skipped_records`).
    """

    session: ContextSession
    version: int
    log_seq: int
    replayed: int
    skipped: int
    invalid: int = 0


@dataclass
class SharedSessionStats:
    """Counters of what one :class:`SharedSession` handle did (thread-safe via the handle's lock).

    Attributes:
        appended: message records appended.
        loads: consistent loads completed.
        stale_reloads: loads restarted because records they needed were trimmed by a newer snapshot.
        duplicates_skipped: log records skipped because the message id was already held.
        skipped_records: log records skipped because they could not be decoded or validated (counted on every
            load that meets them, until a compaction trims them).
        compactions_saved: compacted snapshots saved.
        conflicts_retried: saves that lost the compare-and-set and were recomputed on a fresh load.
        trim_failures: log trims that failed after a successful save (the next save trims further).
    """

    appended: int = 0
    loads: int = 0
    stale_reloads: int = 0
    duplicates_skipped: int = 0
    skipped_records: int = 0
    compactions_saved: int = 0
    conflicts_retried: int = 0
    trim_failures: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def bump(self, name: str, by: int = 1) -> None:
        """Add ``by`` to the counter ``name``."""
        with self._lock:
            setattr(self, name, getattr(self, name) + by)
