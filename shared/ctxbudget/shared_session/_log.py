"""The append-log records of a shared session: one JSON record per message, checked both ways.

Log record format (JSON, one per message)::

    {"schema": "ctxbudget.log.v1", "message": {...Message fields...}}
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field

from ..errors import InvalidMessageError, SnapshotFormatError
from ..messages._validation import JsonValueError, check_json
from ..messages.message import Message

__all__ = ["LOG_RECORD_SCHEMA", "decode", "decoded", "encode", "records_of"]

LOG_RECORD_SCHEMA = "ctxbudget.log.v1"
"""The schema string of every message record :meth:`SharedSession.add` appends."""


def encode(message: object, index: int) -> str:
    """The log record of ``message`` (the ``index``-th argument of an add): one serialization, no other copy.

    Raises:
        InvalidMessageError: ``message`` is not a :class:`Message` or cannot be serialized (a lone surrogate, or
            a payload JSON cannot hold in a message built past validation).
    """
    if not isinstance(message, Message):
        raise InvalidMessageError(
            f"messages[{index}]: expected ctxbudget.Message, got {type(message).__name__}", field="message"
        )
    problem = _payload_problem(message)
    if problem is None:
        try:
            return _Record(message=message).model_dump_json(by_alias=True)
        except (ValueError, RecursionError) as exc:  # PydanticSerializationError is a ValueError
            problem = str(exc)
    raise InvalidMessageError(f"messages[{index}]: cannot be serialized: {problem}", field="message")


class _Record(BaseModel):
    """A log record, serialized in one pass (the message's JSON is not built first and then copied into it)."""

    schema_: Literal["ctxbudget.log.v1"] = Field(default="ctxbudget.log.v1", alias="schema")
    message: Message


def _payload_problem(message: Message) -> str | None:
    """Why a JSON payload of ``message`` cannot be held, else ``None``.

    Checked again here: a message built past validation (``model_construct``) may hold NaN, which would be written
    as ``null``, or an integer no reader could parse.
    """
    try:
        if message.metadata:
            check_json("metadata", message.metadata)
        for call in message.tool_calls:
            check_json("args", call.args)
        if not isinstance(message.content, str):
            for block in message.content:
                check_json("data", block.data)
    except JsonValueError as exc:
        return str(exc)
    return None


def decode(seq: int, record: str) -> Message:
    """The message of log record ``seq``; anything else raises :class:`SnapshotFormatError` naming the field."""
    try:
        payload = json.loads(record)
    except json.JSONDecodeError as exc:
        raise SnapshotFormatError(f"log[{seq}]: not valid JSON ({exc.msg})", field=f"log[{seq}]") from None
    except RecursionError:
        raise SnapshotFormatError(f"log[{seq}]: JSON nested too deeply to parse", field=f"log[{seq}]") from None
    except ValueError as exc:  # an integer past sys.get_int_max_str_digits()
        raise SnapshotFormatError(f"log[{seq}]: {exc}", field=f"log[{seq}]") from None
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
    return message  # validated: it serializes (text, metadata and arguments were checked when it was built)


def records_of(messages: tuple[Message, ...]) -> list[str]:
    """The log records of one add's messages; two with one id are an :class:`InvalidMessageError`."""
    records = [encode(message, index) for index, message in enumerate(messages)]
    seen: set[str] = set()
    for message in messages:  # one pass: a set lookup per id, never a count over the batch
        if message.id in seen:
            raise InvalidMessageError(f"messages.id: {message.id!r} appears twice in one add", field="id")
        seen.add(message.id)
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
