"""The append-log records of a shared session: one JSON record per message, checked both ways.

Log record format (JSON, one per message)::

    {"schema": "ctxbudget.log.v1", "message": {...Message fields...}}
"""

from __future__ import annotations

import json

from .errors import InvalidMessageError, SnapshotFormatError
from .messages import Message

__all__ = ["LOG_RECORD_SCHEMA", "decode", "decoded", "encode", "records_of"]

LOG_RECORD_SCHEMA = "ctxbudget.log.v1"
"""The schema string of every message record :meth:`SharedSession.add` appends."""


def encode(message: object, index: int) -> str:
    """The log record of ``message`` (the ``index``-th argument of an add).

    Raises:
        InvalidMessageError: ``message`` is not a :class:`Message` or cannot be serialized (a lone surrogate).
    """
    if not isinstance(message, Message):
        raise InvalidMessageError(
            f"messages[{index}]: expected ctxbudget.Message, got {type(message).__name__}", field="message"
        )
    problem = _serialization_problem(message)
    if problem is not None:
        raise InvalidMessageError(f"messages[{index}]: cannot be serialized: {problem}", field="message")
    return json.dumps({"schema": LOG_RECORD_SCHEMA, "message": message.model_dump(mode="json")})


def decode(seq: int, record: str) -> Message:
    """The message of log record ``seq``; anything else raises :class:`SnapshotFormatError` naming the field."""
    try:
        payload = json.loads(record)
    except json.JSONDecodeError as exc:
        raise SnapshotFormatError(f"log[{seq}]: not valid JSON ({exc.msg})", field=f"log[{seq}]") from None
    except RecursionError:
        raise SnapshotFormatError(f"log[{seq}]: JSON nested too deeply to parse", field=f"log[{seq}]") from None
    if not isinstance(payload, dict) or payload.get("schema") != LOG_RECORD_SCHEMA:
        got = payload.get("schema") if isinstance(payload, dict) else type(payload).__name__
        raise SnapshotFormatError(
            f"log[{seq}].schema: expected {LOG_RECORD_SCHEMA!r}, got {got!r}", field=f"log[{seq}].schema"
        )
    fields = payload.get("message")
    if not isinstance(fields, dict):
        name = f"log[{seq}].message"
        raise SnapshotFormatError(f"{name}: expected an object, got {type(fields).__name__}", field=name)
    try:
        message = Message(**fields)
    except InvalidMessageError as exc:
        name = f"log[{seq}].message" + (f".{exc.field}" if exc.field else "")
        raise SnapshotFormatError(f"{name}: {exc}", field=name) from None
    except (TypeError, ValueError, RecursionError) as exc:  # e.g. a non-str key; never a raw error on replay
        name = f"log[{seq}].message"
        raise SnapshotFormatError(f"{name}: {type(exc).__name__}: {exc}", field=name) from None
    problem = _serialization_problem(message)
    if problem is not None:
        name = f"log[{seq}].message"
        raise SnapshotFormatError(f"{name}: cannot be serialized: {problem}", field=name)
    return message


def _serialization_problem(message: Message) -> str | None:
    """Why ``message`` cannot be serialized as it would be in a snapshot (e.g. a lone surrogate), or ``None``."""
    try:
        message.model_dump_json()
    except (ValueError, RecursionError) as exc:
        return str(exc)
    return None


def records_of(messages: tuple[Message, ...]) -> list[str]:
    """The log records of one add's messages; two with one id are an :class:`InvalidMessageError`."""
    records = [encode(message, index) for index, message in enumerate(messages)]
    ids = [message.id for message in messages]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise InvalidMessageError(f"messages.id: {duplicate!r} appears twice in one add", field="id")
    return records


def decoded(records: list[tuple[int, str]]) -> list[tuple[int, Message | str]]:
    """Each record's message, or why it cannot be replayed (the load skips and reports it)."""
    decoded: list[tuple[int, Message | str]] = []
    for seq, record in records:
        try:
            decoded.append((seq, decode(seq, record)))
        except SnapshotFormatError as exc:
            decoded.append((seq, str(exc)))
    return decoded
