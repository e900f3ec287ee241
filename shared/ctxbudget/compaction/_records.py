"""A record's fields in the ledger: selected one by one, shown as one bullet per call, read back one by one.

A lookup that returned a JSON record (:mod:`~ctxbudget.compaction._json_fields`) yields one item per field,
``<call> -> ok: key=value``, so a small budget keeps the fields that matter and drops the rest. The ledger's text
shows them together (:func:`join_fields`): in the call's own bullet when that was kept
(``get_order {"id": "W1"} -> ok: status=delivered, tracking_id=1Z66``), else under the tool's name
(``get_order: tracking_id=1Z66``). Reading a ledger back (:func:`split_fields`) makes each field an item again, so
the next compaction can still drop one field without dropping the record. A field's informative tokens
(:func:`item_tokens`) are its own, not those of the call's arguments, which every field of the call would share.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .salience import SalienceKind
from .textscan import informative_tokens

__all__ = ["RECORD_CALL", "item_tokens", "join_fields", "record_field", "split_fields", "tool_name"]

RECORD_CALL = " -> ok"
"""How a call whose result was a record ends its bullet; each field of it is ``<call> -> ok: key=value``."""
_FIELD = re.compile(r"^[\w.-]{1,80}=(?:\[[^\[\]]*\]|\"(?:[^\"\\]|\\.)*\"|[^\s,][^,\[\]]*)(?: \([^()]{1,40}\))?$")
"""One ``key=value`` field as :mod:`~ctxbudget.compaction._json_fields` writes it: a value, a ``[column]`` or a quoted
value, and maybe its count (``(1 of 30)``, ``(+4 more)``)."""
_SPLIT = re.compile(r", (?=[\w.-]{1,80}=)")


def tool_name(label: str) -> str:
    """The tool of a call's label (``get_order`` of ``get_order {"id": "W1"}``): what a lone field is shown under."""
    return label.split(" {", 1)[0]


def record_field(text: str) -> tuple[str, str] | None:
    """The call's label and the field of a record field's text (``<call> -> ok: key=value``); else ``None``."""
    label, ok, field = text.partition(RECORD_CALL + ": ")
    return (label, field) if ok and _FIELD.match(field) else None


def item_tokens(text: str) -> frozenset[str]:
    """The informative tokens of a ledger item's text; a record field's are those of ``<tool>: key=value``."""
    found = record_field(text)
    return informative_tokens(text if found is None else f"{tool_name(found[0])}: {found[1]}")


def join_fields(bullets: list[str]) -> list[str]:
    """The Commands section's bullets with each record's fields joined into one bullet per call, in order."""
    if RECORD_CALL + ": " not in "".join(bullets):
        return bullets
    calls = {b.removesuffix(RECORD_CALL) for b in bullets if b.endswith(RECORD_CALL)}
    out: list[str] = []
    at: dict[str, int] = {}  # a call's label -> its bullet's position in out
    for bullet in bullets:
        label, ok, said = bullet.partition(RECORD_CALL)
        field = said.removeprefix(": ")
        if not ok or (said and not said.startswith(": ")) or (field and not _FIELD.match(field)):
            out.append(bullet)
            continue
        if label in at and field:
            joined = out[at[label]]
            out[at[label]] = f"{joined}, {field}" if not joined.endswith(RECORD_CALL) else f"{joined}: {field}"
            continue
        at.setdefault(label, len(out))
        out.append(bullet if not field or label in calls else f"{tool_name(label)}: {field}")
    return out


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
    if len(fields) < 1 or not all(_FIELD.match(field) for field in fields):
        yield kind, text
        return
    if kind in ("call", "command"):
        yield kind, label + RECORD_CALL
    for field in fields:
        yield "figure", f"{label}{RECORD_CALL}: {field}"
