"""A record's fields in the ledger: selected one by one, shown as one bullet per call, read back one by one.

A lookup that returned a JSON record (:mod:`~ctxbudget.compaction._json_fields`) yields one item per field,
``<call> -> ok: "key": value``, so a small budget keeps the fields that matter and drops the rest. The ledger's text
shows them together (:func:`join_fields`): in the call's own bullet when that was kept
(``get_order {"id": "W1"} -> ok: "status": "delivered", "tracking_id": "1Z66"``), else under the tool's name
(``get_order: "tracking_id": "1Z66"``). Reading a ledger back (:func:`split_fields`) makes each field an item again, so
the next compaction can still drop one field without dropping the record. A field's informative tokens
(:func:`item_tokens`) are its own, not those of the call's arguments, which every field of the call would share.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from ._json_fields import word_attribute
from ._salient import RECORD_CALL, SalienceKind
from .textscan import informative_tokens

__all__ = [
    "RECORD_CALL",
    "call_of",
    "field_parts",
    "item_tokens",
    "join_fields",
    "record_field",
    "split_fields",
    "tool_name",
    "word_field",
]

_DECODER = json.JSONDecoder()
_NOTE = re.compile(r" \([^()]{1,40}\)")
"""A field's count after its value (``(1 of 30)``, ``(+4 more)``, a line's ``(+3 more fields)``)."""
_MAX_SAID = 4_000
"""Longest run of fields read back (a record's line is at most 460 characters; a longer text is not one)."""


def _fields(said: str) -> list[str] | None:
    """``said`` as the ``"key": value`` fields :mod:`~ctxbudget.compaction._json_fields` writes, joined by ``", "``.

    A value is any JSON value (a ``[column]``, a short list's records ``[{"item_id": "1", "price": 5}]``), maybe
    followed by its count; ``None`` when ``said`` is not such a run.
    """
    if len(said) > _MAX_SAID or not said.startswith('"'):
        return None
    out: list[str] = []
    start = 0
    while True:
        try:
            key, at = _DECODER.raw_decode(said, start)
            if not isinstance(key, str) or not 0 < len(key) <= 80 or not said.startswith(": ", at):
                return None
            _, end = _DECODER.raw_decode(said, at + 2)
        except (ValueError, RecursionError):
            return None
        note = _NOTE.match(said, end)
        end = note.end() if note else end
        out.append(said[start:end])
        if end == len(said):
            return out
        if not said.startswith(', "', end):
            return None
        start = end + 2


def _one_field(text: str) -> bool:
    fields = _fields(text)
    return fields is not None and len(fields) == 1


def _split(said: str) -> tuple[str | None, list[str]]:
    """``said`` as what a call's bullet says first (``3 results``), if anything, and the record's fields after it."""
    fields = _fields(said)
    if fields is not None:
        return None, fields
    at = said.find(', "')
    rest = _fields(said[at + 2 :]) if at > 0 else None
    return (said[:at], rest) if rest is not None else (None, [])


def tool_name(label: str) -> str:
    """The tool of a call's label (``get_order`` of ``get_order {"id": "W1"}``): what a lone field is shown under."""
    return label.split(" {", 1)[0]


def field_parts(field: str) -> tuple[str, str]:
    """A field's name and its value's text (``membership`` and ``"gold"`` of ``"membership": "gold"``).

    The name is decoded as the JSON string it is (``"battery life"``, escapes and all); ``field`` is one field
    (:func:`record_field` found it).
    """
    try:
        key, at = _DECODER.raw_decode(field)
    except ValueError:
        key, at = "", 0
    return (key, field[at + 2 :]) if isinstance(key, str) and at else ("", field)


def word_field(field: str) -> bool:
    """``field`` holds a record's word attribute (:func:`~ctxbudget.compaction._json_fields.word_attribute`)."""
    name, value = field_parts(field)
    if not value.startswith('"') or not value.endswith('"'):
        return False
    try:
        return word_attribute(name, json.loads(value))
    except ValueError:
        return False


def record_field(text: str) -> tuple[str, str] | None:
    """The call's label and the field of a record field's text (``<call> -> ok: "key": value``); else ``None``."""
    label, ok, field = text.partition(RECORD_CALL + ": ")
    return (label, field) if ok and _one_field(field) else None


def item_tokens(text: str) -> frozenset[str]:
    """The informative tokens of a ledger item's text; a record field's are those of ``<tool>: "key": value``."""
    found = record_field(text)
    return informative_tokens(text if found is None else f"{tool_name(found[0])}: {found[1]}")


def join_fields(bullets: list[str]) -> list[str]:
    """The Commands section's bullets with each record's fields joined into one bullet per call, in order.

    A call's bullet is ``<call> -> ok`` or ``<call> -> ok: <what it said>`` (``3 results``); its fields follow it.
    """
    if RECORD_CALL + ": " not in "".join(bullets):
        return bullets
    calls = {label for b in bullets if (label := call_of(b)) is not None}
    out: list[str] = []
    at: dict[str, int] = {}  # a call's label -> its bullet's position in out
    for bullet in bullets:
        found = record_field(bullet)
        if found is None:
            label = call_of(bullet)
            if label is not None:
                at.setdefault(label, len(out))
            out.append(bullet)
            continue
        label, field = found
        if label in at:
            joined = out[at[label]]
            out[at[label]] = f"{joined}, {field}" if not joined.endswith(RECORD_CALL) else f"{joined}: {field}"
            continue
        at[label] = len(out)
        out.append(bullet if label in calls else f"{tool_name(label)}: {field}")
    return out


def call_of(bullet: str) -> str | None:
    """The label of a successful call's own bullet (``<call> -> ok`` or ``<call> -> ok: <not a field>``), else None."""
    label, ok, said = bullet.partition(RECORD_CALL)
    if not ok or not (said == "" or (said.startswith(": ") and not _one_field(said[2:]))):
        return None
    return label


def split_fields(kind: SalienceKind, text: str, number: int) -> Iterator[tuple[SalienceKind, str]]:
    """A bullet read back from the Commands section: a record's bullet as its call and its fields, else itself.

    The fields of a record shown under its tool's name get the label ``<tool> {#<number>}`` (``number``: the
    bullet's, unique in the ledger), so they are joined again as one record, not with another record of the tool.
    """
    label, ok, said = text.partition(RECORD_CALL + ": ")
    if kind not in ("call", "command", "figure"):
        yield kind, text
        return
    if kind == "figure" and not ok and ": " in text:  # a record shown under its tool's name
        tool, _, said = text.partition(": ")
        ok = said if " {" not in tool and " " not in tool else ""
        label = f"{tool} {{#{number}}}"
    first, fields = _split(said) if ok and said else (None, [])
    if not fields or (first is not None and kind == "figure"):  # "3 results, "id": [...]": a call's bullet only
        yield kind, text
        return
    if kind in ("call", "command"):
        yield kind, label + RECORD_CALL + (f": {first}" if first is not None else "")
    for field in fields:
        yield "figure", f"{label}{RECORD_CALL}: {field}"
