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

_FIELD = re.compile(
    r'^"(?:[^"\\]|\\.){1,80}": (?:\[[^\[\]]*\]|"(?:[^"\\]|\\.)*"|-?[\d.eE+]+|true|false|null)(?: \([^()]{1,40}\))?$'
)
"""One ``"key": value`` field as :mod:`~ctxbudget.compaction._json_fields` writes it: a JSON value or a ``[column]``,
and maybe its count (``(1 of 30)``, ``(+4 more)``)."""
_SPLIT = re.compile(r', (?="(?:[^"\\]|\\.){1,80}": )')


def tool_name(label: str) -> str:
    """The tool of a call's label (``get_order`` of ``get_order {"id": "W1"}``): what a lone field is shown under."""
    return label.split(" {", 1)[0]


def field_parts(field: str) -> tuple[str, str]:
    """A field's name and its value's text (``membership`` and ``"gold"`` of ``"membership": "gold"``)."""
    key, _, value = field.partition('": ')
    return key[1:].replace('\\"', '"'), value


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
    return (label, field) if ok and _FIELD.match(field) else None


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
    if not ok or not (said == "" or (said.startswith(": ") and not _FIELD.match(said[2:]))):
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
    fields = _SPLIT.split(said) if ok and said else []
    said_first = bool(fields) and kind != "figure" and not _FIELD.match(fields[0])  # "3 results, id=[...]"
    if said_first:
        first, fields = fields[0], fields[1:]
    if not fields or not all(_FIELD.match(field) for field in fields):
        yield kind, text
        return
    if kind in ("call", "command"):
        yield kind, label + RECORD_CALL + (f": {first}" if said_first else "")
    for field in fields:
        yield "figure", f"{label}{RECORD_CALL}: {field}"
