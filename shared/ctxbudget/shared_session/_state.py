"""A session loaded from a store whose archive lives beside its snapshot, and what its next save writes.

A stored snapshot (``archive_in_store=True``) carries the live state only: ``order`` maps the live messages' ids to
their *global* add positions and ``added`` counts every message ever added. Restoring it gives the session a local
order holding the live ids ranked 0..L-1 (so new messages, registered at ``len(order)``, sort after them) and a
:class:`~ctxbudget.shared_session._archive.StoredArchive`. :class:`LoadOrigin` translates local positions back:
``global = order[id]`` for a message live at load, ``added + local - L`` for one added since.

A snapshot written before the archive moved out (``archive_in_store=False``: archive and whole order inside) is
restored as it is (local positions are global); its next save writes its whole archive to the store (the
migration) and a live-only snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from ..errors import SnapshotFormatError
from ..messages.message import Message
from ..session._snapshots import take
from ..session.events import ContextCompacted
from ..session.request import BuiltRequest
from ..session.session import ContextSession
from ..session.snapshot import SessionSnapshot
from ..stores.base import ArchiveRecord
from ._archive import ArchiveCache, StoredArchive, encode_entry

__all__ = [
    "Fetched",
    "LoadOrigin",
    "StoreBackedSession",
    "archive_records",
    "built_compaction",
    "itself",
    "restore_from_store",
    "snapshot_json",
    "stale",
    "store_snapshot",
    "unknown_ids",
]


@dataclass(frozen=True)
class LoadOrigin:
    """Where a loaded session came from: what translates its local add positions and dates its archive records.

    Attributes:
        positions: global add positions of the messages live at load (every message, for a whole-history snapshot).
        added: messages ever added when the snapshot was written.
        ranked: how many local positions the live messages took (new messages are registered from there).
        log_seq: how far into the log the snapshot had absorbed.
        sources: log sequence number of each message replayed on top of the snapshot.
        archive_head: the store's archive head the snapshot recorded.
    """

    positions: Mapping[str, int]
    added: int
    ranked: int
    log_seq: int
    sources: dict[str, int] = field(default_factory=dict)
    archive_head: int = 0

    def global_position(self, message_id: str, local: int) -> int:
        """The global add position of a message at local position ``local``."""
        known = self.positions.get(message_id)
        return known if known is not None else self.added + local - self.ranked


class StoreBackedSession(ContextSession):
    """A :class:`ContextSession` loaded by a shared session: :meth:`originals` counts the store's archive too."""

    origin: LoadOrigin = LoadOrigin(positions={}, added=0, ranked=0, log_seq=0)

    def originals(self) -> list[Message]:
        """Every message ever added to the shared session, as given, in add order (store archive + live state)."""
        with self._lock:
            conversation = self.conversation
            local = conversation.order
            by_id: dict[str, Message] = {m.id: m for m in conversation.live}
            by_id.update({m.id: m for m in conversation.system_messages})
            by_id.update({m.id: m for m in conversation.archive.messages()})  # the archived version is the original
            stored = conversation.archive.positions()
        position = {i: self.origin.global_position(i, p) for i, p in local.items()}
        position.update({i: p for i, p in stored.items() if i not in position})
        return sorted((m for m in by_id.values() if m.id in position), key=lambda m: position[m.id])


def restore_from_store(
    snapshot: SessionSnapshot, cache: ArchiveCache, sources: dict[str, int], **restore: Any
) -> StoreBackedSession:
    """Restore ``snapshot`` (live-only or whole-history) into a :class:`StoreBackedSession`."""
    if not snapshot.archive_in_store:
        session = cast(StoreBackedSession, StoreBackedSession.restore(snapshot, **restore))
        order = snapshot.order
        session.origin = LoadOrigin(order, len(order), len(order), snapshot.log_seq, sources, snapshot.archive_head)
        return session
    cache.expect(snapshot.archive_head)
    live = sorted(snapshot.order.items(), key=lambda item: item[1])
    ranks = {message_id: rank for rank, (message_id, _) in enumerate(live)}
    ranked = snapshot.model_copy(update={"order": ranks})
    session = cast(StoreBackedSession, StoreBackedSession.restore(ranked, archive=StoredArchive(cache), **restore))
    session.origin = LoadOrigin(
        snapshot.order, snapshot.next_position, len(ranks), snapshot.log_seq, sources, snapshot.archive_head
    )
    return session


def archive_records(session: StoreBackedSession) -> list[ArchiveRecord]:
    """The store records of what the session archived since its load (everything, for a whole-history one)."""
    archive = session.conversation.archive
    entries = archive.new_entries() if isinstance(archive, StoredArchive) else archive.entries()
    local = session.conversation.order
    origin = session.origin
    records = []
    for entry in entries:
        message_id = entry.message.id if entry.message is not None else None
        position = origin.global_position(message_id, local[message_id]) if message_id in local else None
        source = origin.sources.get(message_id, origin.log_seq) if message_id is not None else origin.log_seq
        records.append(encode_entry(entry, position, source))
    return records


def store_snapshot(session: StoreBackedSession, archive_head: int) -> SessionSnapshot:
    """The live-only snapshot of ``session`` (its archive is in the store), with global add positions."""
    with session._lock:
        conversation = session.conversation
        snap = take(session, archive=False)
        local = conversation.order
        live = {m.id for m in conversation.live} | {m.id for m in conversation.system_messages}
    origin = session.origin
    order = {i: origin.global_position(i, p) for i, p in local.items() if i in live}
    added = origin.added + len(local) - origin.ranked
    update = {"order": order, "added": added, "archive_in_store": True, "archive_head": archive_head}
    return snap.model_copy(update=update)


@dataclass(frozen=True)
class Fetched:
    """What one load read from the store, before any session is built (the I/O half of a load)."""

    version: int
    snapshot: SessionSnapshot
    decoded: list[tuple[int, Message | str]]  # (seq, message or why it cannot be replayed)
    archived: dict[str, int]  # replayed ids with an archive entry -> the log record it was archived from


def stale(snapshot: SessionSnapshot, records: list[tuple[int, str]], head: int) -> bool:
    """A newer snapshot absorbed and trimmed records this one still needs."""
    first_expected = snapshot.log_seq + 1
    return bool(records and records[0][0] != first_expected) or (not records and head >= first_expected)


def unknown_ids(snapshot: SessionSnapshot, decoded: list[tuple[int, Message | str]]) -> list[str]:
    """Ids of replayed messages the snapshot does not hold live: the store's archive may know them."""
    if not snapshot.archive_in_store:
        return []  # a whole-history snapshot's order names every message ever added
    return [item.id for _, item in decoded if isinstance(item, Message) and item.id not in snapshot.order]


def snapshot_json(session: StoreBackedSession, archive_head: int) -> str:
    """The live-only snapshot JSON of a loaded session; a serialization failure becomes :class:`SnapshotFormatError`."""
    try:
        return store_snapshot(session, archive_head).to_json()
    except (ValueError, RecursionError) as exc:
        message = f"snapshot: save of session {session.session_id!r} failed, it cannot be serialized: {exc}"
        raise SnapshotFormatError(message, field="snapshot") from exc


def itself(event: ContextCompacted) -> ContextCompacted:
    """A compaction's own event (what ``compact`` returns)."""
    return event


def built_compaction(request: BuiltRequest) -> ContextCompacted | None:
    """The compaction a request build ran, if any."""
    return request.compaction
