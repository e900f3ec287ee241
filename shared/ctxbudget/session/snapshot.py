"""Versioned JSON snapshots of a :class:`~ctxbudget.session.session.ContextSession`.

A snapshot holds everything needed to resume: live history, cumulative summary, goal, pinned content, the whole
archive, the add order (so originals can be reconstructed), the policy, tracker calibration, and a cognitive binding
when the session has one. Malformed JSON raises :class:`~ctxbudget.errors.SnapshotFormatError` naming the field.

A snapshot a :class:`~ctxbudget.shared_session.session.SharedSession` writes holds only the live state
(``archive_in_store=True``): its archive is empty, its ``order`` names only the messages still live, and ``added``
says how many messages were ever added; the archived originals (with their add positions) live append-only in the
store beside it, so the snapshot's size is bounded by the window, not by the conversation's history.

Integrity: :meth:`SessionSnapshot.to_json` writes a ``"digest"`` (``sha256:`` over the canonical JSON of every
other field, :func:`~ctxbudget.archive.store.content_digest`) and :meth:`SessionSnapshot.from_json` checks it: a
snapshot edited after it was written raises :class:`~ctxbudget.errors.SnapshotIntegrityError` with both digests.
A document without a digest (written before digests existed) is read as it is. A digest detects corruption and
edits by hand; it does not authenticate a writer, who can recompute it.

Snapshot JSON must carry its ``"schema"`` key: :meth:`SessionSnapshot.from_json` refuses a document without it
(a JSON object that lacks it was not written by ctxbudget, whose every snapshot has carried it since the first
version), rather than guessing it is version 1. A snapshot built in Python, ``SessionSnapshot(...)``, takes the
current schema by default.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError

from ..archive.store import ArchiveEntry, content_digest
from ..errors import SnapshotFormatError, SnapshotIntegrityError
from ..messages.message import Message, ToolSchema

__all__ = ["SNAPSHOT_SCHEMA", "SessionSnapshot", "TrackerSnapshot"]

SNAPSHOT_SCHEMA = "ctxbudget.session.v1"
"""The schema string every snapshot carries; a different one, or none, is rejected."""

_FROM_JSON = "ctxbudget.snapshot.from_json"
_MISSING_SCHEMA = "snapshot_schema_missing"


class TrackerSnapshot(BaseModel):
    """The tracker's learned state."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ratio: float = Field(gt=0)
    samples: int = Field(ge=0)
    last_reported: int | None = Field(default=None, ge=0)
    counted_at_report: int = Field(default=0, ge=0)
    floor: int = Field(default=0, ge=0)


class SessionSnapshot(BaseModel):
    """A resumable copy of a session, as versioned JSON."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    schema_: Literal["ctxbudget.session.v1"] = Field(default="ctxbudget.session.v1", alias="schema")
    session_id: str = Field(min_length=1)
    model: str | None = None
    max_tokens: int = Field(gt=0)
    system_prompt: str | None = None
    tools: tuple[ToolSchema, ...] = ()
    policy: dict[str, Any]
    compact_instructions: str | None = None
    history: tuple[Message, ...] = ()
    summary: str | None = None
    goal: str | None = None
    goal_id: str | None = None
    pinned: tuple[Message, ...] = ()
    system_messages: tuple[Message, ...] = Field(default=(), description="System messages added to the history.")
    context: Message | None = Field(default=None, description="The planned context set with set_context().")
    pinned_ids: tuple[str, ...] = ()
    archive: tuple[ArchiveEntry, ...] = ()
    order: dict[str, int] = Field(default_factory=dict, description="Message id -> position in add order.")
    tracker: TrackerSnapshot
    binding: dict[str, Any] | None = Field(default=None, description="A cognitive package binding, as JSON.")
    log_seq: int = Field(default=0, ge=0, description="How far into a store's append log this snapshot absorbed.")
    archive_in_store: bool = Field(
        default=False,
        description="The archive lives in a store beside this snapshot (``archive`` is empty, ``order`` names only "
        "live messages); restoring needs it supplied.",
    )
    added: int | None = Field(
        default=None, ge=0, description="Messages ever added (the next add position); ``None``: ``len(order)``."
    )
    archive_head: int = Field(
        default=0, ge=0, description="The store's last archive entry sequence number when this snapshot was written."
    )
    digest: str | None = Field(
        default=None,
        pattern=r"^sha256:[0-9a-f]{64}$",
        description="``sha256:`` over the canonical JSON of every other field; written by ``to_json``, checked and "
        "cleared by ``from_json`` (so a snapshot read back equals the one written).",
    )

    @model_validator(mode="before")
    @classmethod
    def _json_carries_its_schema(cls, data: Any, info: ValidationInfo) -> Any:
        if info.context and info.context.get(_FROM_JSON) and isinstance(data, dict) and "schema" not in data:
            raise PydanticCustomError(
                _MISSING_SCHEMA,
                'missing; snapshot JSON must carry "schema": {expected} (a document without it was not written '
                "by ctxbudget)",
                {"expected": f'"{SNAPSHOT_SCHEMA}"'},
            )
        return data

    @property
    def next_position(self) -> int:
        """The add position the next new message takes: ``added``, or ``len(order)`` for a whole-history snapshot."""
        return self.added if self.added is not None else len(self.order)

    def to_json(self) -> str:
        """Serialize to JSON (``schema`` key first, ``digest`` last: the content digest of everything before it).

        Raises:
            SnapshotFormatError: a message built past validation (``model_construct``) holds what JSON cannot
                (a lone surrogate, an integer past 4,300 digits); every validated message serializes.
        """
        try:
            body = self.model_dump_json(by_alias=True, exclude={"digest"})
            digest = content_digest(json.loads(body))
        except (ValueError, RecursionError) as exc:  # PydanticSerializationError and UnicodeError are ValueErrors
            message = f"snapshot: session {self.session_id!r} cannot be serialized: {exc}"
            raise SnapshotFormatError(message, field="snapshot") from None
        return f'{body[:-1]},"digest":"{digest}"}}'

    @classmethod
    def from_json(cls, data: str | bytes) -> SessionSnapshot:
        """Parse and validate snapshot JSON; raises :class:`SnapshotFormatError` naming the bad field.

        The ``"schema"`` key is required (see the module docstring); ``"schema": null`` or another schema string
        is refused too.
        """
        try:
            snapshot = cls.model_validate_json(data, context={_FROM_JSON: True})
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "snapshot"
            if first["type"] == _MISSING_SCHEMA:
                field = "schema"
            raise SnapshotFormatError(
                f"snapshot.{field}: {first['msg']} ({exc.error_count()} problem(s) in all)", field=field
            ) from None
        if snapshot.digest is None:
            return snapshot
        _check_digest(snapshot, data)
        return snapshot.model_copy(update={"digest": None})  # checked; equal to the snapshot that was written


def _check_digest(snapshot: SessionSnapshot, data: str | bytes) -> None:
    """Raise :class:`SnapshotIntegrityError` unless ``data`` (minus its digest) hashes to ``snapshot.digest``."""
    where = f"snapshot of session {snapshot.session_id!r}"
    try:
        document = json.loads(data)  # pydantic just parsed it
        stored = document.pop("digest")
        actual = content_digest(document)
    except (ValueError, RecursionError) as exc:  # NaN, Infinity or 1e999: pydantic and json.loads accept them
        raise SnapshotFormatError(
            f"{where}: not valid JSON ({exc}): JSON has no NaN, Infinity or number out of float range; "
            "refusing to restore it",
            field="snapshot",
        ) from None
    if actual != stored:
        raise SnapshotIntegrityError(
            f"{where}: content digest {actual} does not match the stored digest {stored}: the snapshot was "
            "edited or corrupted after it was written; refusing to restore it",
            where=where,
            expected=stored,
            actual=actual,
        )
