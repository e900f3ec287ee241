"""What a :class:`~ctxbudget.stores.redis.RedisSnapshotStore` sends to Redis and reads back, every reply checked.

A reply that holds what the store never writes (a version or counter that is not digits, text that is not UTF-8, a
snapshot hash missing a field, a log member without its ``"<seq>:"``) raises
:class:`~ctxbudget.stores._stored.CorruptField` naming the key, the field and the value. Shared by the sync client
and the ``redis.asyncio`` one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ctxbudget.stores._models import ArchiveRecord
from ctxbudget.stores._stored import CorruptField, holds, show, stored_int, stored_utf8

__all__ = [
    "COUNTER",
    "VERSION",
    "archive_args",
    "archive_entries",
    "decoding",
    "found",
    "ids",
    "log_entry",
    "put_reply",
    "snapshot",
    "status",
]

VERSION = "a version (an integer >= 1)"
"""What a snapshot's ``version`` field must hold."""
COUNTER = "a sequence number (an integer >= 0)"
"""What a log or archive counter must hold."""


@contextmanager
def decoding(key: str) -> Iterator[None]:
    """A client that decodes replies fails on non-UTF-8 data: that is corrupt data of ``key``."""
    try:
        yield
    except UnicodeDecodeError as exc:
        message = f"key {key!r} holds a reply that is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        raise CorruptField(message) from None


def snapshot(key: str, version: object, data: object) -> tuple[int, str] | None:
    """The ``(version, data)`` of a snapshot hash's two fields, or ``None`` when it has neither."""
    if version is None and data is None:
        return None
    for field, value in (("version", version), ("data", data)):
        if value is None:
            raise CorruptField(f"key {key!r} field {field} is missing (the snapshot hash is incomplete)")
    where = f"key {key!r} field"
    return stored_int(version, f"{where} version", minimum=1, expected=VERSION), stored_utf8(data, f"{where} data")


def status(code: object, value: object, where: str, expected: str) -> tuple[bool, int]:
    """A script's ``{status, value}`` reply: -1 means the stored value was not digits (``value`` is it)."""
    if code == -1:
        raise holds(where, value, expected)
    return bool(code), stored_int(value, where, minimum=0, expected=expected)


def ids(message_ids: list[str], values: Sequence[object], key: str) -> dict[str, int]:
    """``{message_id: log_seq}`` from an ``HMGET`` of the archived-ids hash (absent ids left out)."""
    return {
        message_id: stored_int(value, f"key {key!r} field {message_id!r}", minimum=0, expected=COUNTER)
        for message_id, value in zip(message_ids, values, strict=True)
        if value is not None
    }


def archive_args(records: list[ArchiveRecord]) -> list[str]:
    """The archive script's ARGV: ``(handle, "m" + message id or "-", log_seq, data)`` per record."""
    args: list[str] = []
    for record in records:
        flag = "-" if record.message_id is None else "m" + record.message_id
        args += [record.handle, flag, str(record.log_seq), record.data]
    return args


def put_reply(reply: list[object], key: str) -> list[int]:
    """The sequence numbers the archive script gave each record (0: its handle was kept)."""
    code, head = reply[0], reply[1]
    status(code, head, f"key {key!r}", COUNTER)
    seqs = reply[2]
    if not isinstance(seqs, list):
        raise holds(f"key {key!r} script reply", seqs, "a list of sequence numbers")
    return [stored_int(seq, f"key {key!r}", minimum=0, expected=COUNTER) for seq in seqs]


def found(handles: list[str], values: Sequence[object], key: str) -> dict[str, str]:
    """``{handle: data}`` from an ``HMGET`` of the archive hash (absent handles left out)."""
    return {
        handle: stored_utf8(value, f"key {key!r} field {handle!r}")
        for handle, value in zip(handles, values, strict=True)
        if value is not None
    }


def archive_entries(flat: list[object], key: str) -> list[tuple[int, str, str]]:
    """The ``(seq, handle, data)`` triples of a range-read script's flat reply."""
    entries: list[tuple[int, str, str]] = []
    for index in range(0, len(flat), 3):
        score, name, data = flat[index : index + 3]
        handle = stored_utf8(name, f"key {key!r} handle")
        if data is None:
            raise CorruptField(f"key {key!r} field {handle!r} is missing (its archive sequence number is stored)")
        seq = stored_int(score, f"key {key!r} score of {handle!r}", minimum=1, expected=COUNTER)
        entries.append((seq, handle, stored_utf8(data, f"key {key!r} field {handle!r}")))
    return entries


def log_entry(member: object, key: str) -> tuple[int, str]:
    """Split a log member ``"<seq>:<record>"``; anything else is corrupt data of ``key``."""
    try:
        text = member.decode("utf-8") if isinstance(member, bytes) else str(member)
    except UnicodeDecodeError:
        raise CorruptField(f"key {key!r} member {show(member)} is not valid UTF-8") from None
    seq, separator, record = text.partition(":")
    if not separator or not (seq.isascii() and seq.isdigit()):
        raise CorruptField(f"key {key!r} member {show(member)} has no sequence number")
    return int(seq), record
