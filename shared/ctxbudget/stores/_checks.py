"""Argument checks shared by every store; each failure is a UsageError subclass naming the field.

Every backend runs the same checks before touching storage, so they all accept and refuse the same inputs:
text must encode as strict UTF-8 (no lone surrogates, which SQLite and Redis cannot store), and data must be
one JSON document as RFC 8259 defines it (no ``NaN``/``Infinity``) that Python can parse without running out
of recursion depth.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ctxbudget.errors import SnapshotFormatError, UsageError
from ctxbudget.stores._models import ArchiveRecord

__all__ = [
    "check_archive_records",
    "check_data",
    "check_names",
    "check_records",
    "check_session_id",
    "check_version",
    "check_watermark",
]


def check_session_id(session_id: object) -> None:
    """Require a non-blank string that encodes as UTF-8."""
    if not isinstance(session_id, str):
        raise UsageError(f"session_id: must be a str, got {type(session_id).__name__}", field="session_id")
    if not session_id.strip():
        raise UsageError(f"session_id: must be non-blank, got {session_id!r}", field="session_id")
    problem = _utf8_problem(session_id)
    if problem:
        raise UsageError(f"session_id: {problem}", field="session_id")


def check_version(version: object, field: str) -> None:
    """Require an int >= 1 (versions start at 1)."""
    if isinstance(version, bool) or not isinstance(version, int):
        raise UsageError(f"{field}: must be an int, got {type(version).__name__}", field=field)
    if version < 1:
        raise UsageError(f"{field}: versions start at 1, got {version}", field=field)


def check_watermark(value: object, field: str, *, head: int | None = None) -> None:
    """Require an int >= 0 and, when ``head`` is given, <= ``head``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{field}: must be an int, got {type(value).__name__}", field=field)
    if value < 0:
        raise UsageError(f"{field}: sequence numbers are >= 0, got {value}", field=field)
    if head is not None and value > head:
        raise UsageError(f"{field}: {value} is past the log head {head}", field=field)


def check_data(data: object, field: str = "data") -> None:
    """Require a string, encodable as UTF-8, holding one JSON document (no NaN/Infinity, parsable depth)."""
    if not isinstance(data, str):
        raise SnapshotFormatError(f"{field}: must be a JSON str, got {type(data).__name__}", field=field)
    problem = _utf8_problem(data)
    if problem:
        raise SnapshotFormatError(f"{field}: {problem}", field=field)
    try:
        json.loads(data, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        message = f"{field}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        raise SnapshotFormatError(message, field=field) from exc
    except _NonStandardConstant as exc:
        message = f"{field}: not valid JSON ({exc.args[0]} is not a JSON value; JSON has no NaN or Infinity)"
        raise SnapshotFormatError(message, field=field) from None
    except RecursionError:
        message = f"{field}: JSON nested too deeply to parse (Python's recursion limit was reached)"
        raise SnapshotFormatError(message, field=field) from None
    except ValueError as exc:  # an integer past sys.get_int_max_str_digits() (4,300 digits): no reader could parse it
        message = f"{field}: not valid JSON for any reader here ({exc})"
        raise SnapshotFormatError(message, field=field) from None


def check_records(records: object) -> list[str]:
    """Require a sequence (not a single str) of JSON strings; return it as a list."""
    if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
        message = f"records: must be a sequence of JSON str, got {type(records).__name__}"
        raise SnapshotFormatError(message, field="records")
    batch = list(records)
    for index, record in enumerate(batch):
        check_data(record, f"records[{index}]")
    return batch


def check_archive_records(records: object) -> list[ArchiveRecord]:
    """Require a sequence of :class:`ArchiveRecord` with valid JSON data, UTF-8 names and distinct handles."""
    if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
        message = f"records: must be a sequence of ArchiveRecord, got {type(records).__name__}"
        raise SnapshotFormatError(message, field="records")
    batch = list(records)
    seen: set[str] = set()
    for index, record in enumerate(batch):
        if not isinstance(record, ArchiveRecord):
            message = f"records[{index}]: must be an ArchiveRecord, got {type(record).__name__}"
            raise SnapshotFormatError(message, field=f"records[{index}]")
        for name in ("handle", "message_id"):
            problem = _utf8_problem(getattr(record, name) or "")
            if problem:
                raise UsageError(f"records[{index}].{name}: {problem}", field=f"records[{index}].{name}")
        if record.handle in seen:
            message = f"records[{index}].handle: {record.handle!r} appears twice in one put_archive"
            raise UsageError(message, field=f"records[{index}].handle")
        seen.add(record.handle)
        check_data(record.data, f"records[{index}].data")
    return batch


def check_names(names: object, field: str) -> list[str]:
    """Require a sequence (not a single str) of UTF-8 strings (handles, message ids); return it as a list."""
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
        raise UsageError(f"{field}: must be a sequence of str, got {type(names).__name__}", field=field)
    batch = list(names)
    for index, name in enumerate(batch):
        if not isinstance(name, str):
            raise UsageError(f"{field}[{index}]: must be a str, got {type(name).__name__}", field=f"{field}[{index}]")
        problem = _utf8_problem(name)
        if problem:
            raise UsageError(f"{field}[{index}]: {problem}", field=f"{field}[{index}]")
    return list(dict.fromkeys(batch))


class _NonStandardConstant(ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity``: Python's json accepts them, JSON (RFC 8259) does not."""


def _reject_constant(name: str) -> object:
    raise _NonStandardConstant(name)


def _utf8_problem(text: str) -> str | None:
    """Describe why ``text`` cannot be encoded as strict UTF-8 (a lone surrogate), or return ``None``.

    Searched in place: a record of a huge message is not encoded into a copy just to be checked.
    """
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"contains an unpaired surrogate {found.group()!r} at index {found.start()}, which is not valid UTF-8 "
        "and cannot be stored"
    )


_SURROGATE = re.compile("[\ud800-\udfff]")
