"""A thread's session rebuilt from an agent state: its summary, meta and archive (what a view starts from).

The state holds the summary, the goal, pins and calibration (``ctxbudget_meta``) and a reference to the thread's
archive in its store; a state written by an earlier version holds the archive's entries inline instead, and they
join the archive as new ones (the next update writes them to the store and replaces them with the reference).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ctxbudget.archive import ArchiveEntry
from ctxbudget.messages import Message
from ctxbudget.session import ContextSession
from ctxbudget.session.snapshot import SessionSnapshot, TrackerSnapshot
from langchain_core.messages import BaseMessage

from ._archive_store import ArchiveRef, is_ref, legacy_entries
from ._thread_archive import ThreadArchive
from ._update import ARCHIVE_KEY, META_KEY, SUMMARY_KEY
from .convert import CTXBUDGET_KEY

__all__ = ["live_handles", "restore_session", "state_archive"]


def state_archive(state: Mapping[str, Any]) -> tuple[ArchiveRef | None, list[ArchiveEntry]]:
    """The state's archive reference (``None`` when it has none) and any entries it still holds inline (legacy)."""
    value = state.get(ARCHIVE_KEY) or {}
    ref = ArchiveRef.from_state(value) if is_ref(value) else None
    return ref, [ArchiveEntry.model_validate(v) for v in legacy_entries(value).values()]


def live_handles(messages: Sequence[BaseMessage]) -> list[str]:
    """Archive handles named by live messages (bounded or cleared copies): their originals stay in memory."""
    handles: list[str] = []
    for message in messages:
        marks = message.response_metadata.get(CTXBUDGET_KEY)
        if isinstance(marks, dict) and isinstance(marks.get("handle"), str):
            handles.append(marks["handle"])
    return handles


def restore_session(
    state: Mapping[str, Any],
    messages: Sequence[BaseMessage],
    make: Callable[[], ContextSession],
    session_id: str,
    archive: ThreadArchive,
) -> ContextSession:
    """A session seeded from the state's summary and meta, holding ``archive`` (loaded; history is added after).

    Entries the state still holds inline (written by an earlier version) join the archive as new ones, so the next
    update writes them to the store and replaces them with the reference.
    """
    summary = state.get(SUMMARY_KEY)
    meta: dict[str, Any] = state.get(META_KEY) or {}
    _, inline = state_archive(state)
    fresh = make()
    for entry in inline:
        archive.add(entry)
    live = {m.id for m in messages}
    order: dict[str, int] = {}
    for _, message_id in archive.known.values():
        if message_id is not None and message_id not in live and message_id not in order:
            order[message_id] = len(order)
    for entry in inline:
        if entry.message is not None and entry.message.id not in live and entry.message.id not in order:
            order[entry.message.id] = len(order)
    snapshot = SessionSnapshot(
        session_id=session_id,
        max_tokens=fresh.max_tokens,
        policy=fresh.policy.model_dump(mode="json"),
        compact_instructions=fresh.compact_instructions,
        summary=summary,
        goal=meta.get("goal"),
        goal_id=meta.get("goal_id"),
        pinned=tuple(Message.model_validate(m) for m in meta.get("pinned", ())),
        pinned_ids=tuple(meta.get("pinned_ids", ())),
        order=order,
        tracker=TrackerSnapshot(ratio=meta.get("ratio", 1.0), samples=meta.get("samples", 0)),
    )
    return ContextSession.restore(snapshot, counter=fresh.counter, summarizer=fresh.summarizer, archive=archive)
