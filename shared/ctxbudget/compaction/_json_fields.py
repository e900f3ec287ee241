"""What a JSON tool result holds, in one line: the fields that name, count or price something (``"key": value``).

A lookup's result (an order, a user, an issue tracker's ticket) is one record: a summary shows it as one line beside
the call that fetched it, not as a bullet per field. Each field reads as the tool wrote it, a JSON pair
(``"membership": "gold"``, ``"amount": 113``): what a model copies into its next call is the id as it was sent, and
a pair quoted from the result matches the original. The line holds, breadth first (a record's own fields before those
of the lists it holds):

* the fields whose values are ids, amounts, numbers, emails or addresses (a value with a digit or an ``@``), the
  record's own ``title`` or ``name`` (not those of the records it holds: 30 line items' names are not 30 facts), and
  its own state (``"status": "delivered"``, ``"state": "open"``): what can be done with it next;
* the record's own short word attributes (``"membership": "gold"``, ``"cabin": "economy"``, ``"insurance": "no"``):
  what it is, which decides what may be done with it (a tier's free bags, a cabin's change rules); the ledger
  weighs them below its ids and amounts (:func:`word_attribute`);
* a nested record's fields by their own names (``address1``), but under their record's name when the field's says
  nothing alone (``"priority.value": 2``), and a map keyed by ids names each record by its key
  (``"credit_card_6040264.last_four": "2076"``, not repeating it as the record's ``id``), unless it holds more
  than :data:`MAX_IDS` (a product's 19 variants: a list by another name); a list's fields as one
  column (``"flight_number": ["HAT006", "HAT018"]``): a column of ids lists them, a column of numbers gives its first
  value and how many there are (30 line-item prices are not 30 facts);
* not a listed record's attribute map (a line item's ``"options": {"storage": "256GB SSD"}``): it describes the
  item the record's ids already name;
* timestamps last (``createdAt``): they are rarely what the next step needs.

A nested record's plain word value (``"city": "Los Angeles"``) says nothing the line needs. The line is at most
:data:`MAX_CHARS` long and says how many fields it left out.
"""

from __future__ import annotations

import json
import re
from collections import deque
from itertools import islice

__all__ = ["MAX_CHARS", "fields_line", "record_fields", "word_attribute"]

MAX_CHARS = 460
"""Longest line of a record's fields (the fields past it are counted, not shown)."""
MAX_LEAVES = 2_000
"""Values read from one JSON body (bounds a huge listing's cost)."""
MAX_FIELDS = 24
"""Distinct fields of one record read."""
MAX_IDS = 8
"""Most values of one column of ids a line lists."""
MAX_ROWS = 4
"""Most records of a list shown record by record (a longer list is shown in columns)."""
MAX_PER_KEY = 3
"""A column with more values than this that are not all ids shows its first value and how many there are."""
_NAMING = frozenset({"title", "name"})
"""Fields that name the record itself when they are its own (not a nested record's or a list's: ``items[].name``)."""
_STATE = frozenset({"status", "state", "conclusion"})
"""Fields that say what state the record itself is in, when they are its own (an order's ``pending``)."""
_SUCCESS = frozenset({"ok", "success", "successful", "succeeded"})
"""A state that only says the call worked, which its bullet's ``-> ok`` already says."""
_GENERIC = frozenset({"value", "name", "id", "type", "code", "key", "label"})
"""Field names that say nothing without their record's (``priority.value=2``, not ``value=2``)."""
_VALUE_CHARS = 120
"""Longest text value shown (a longer one is cut, with "…")."""
_ATTRIBUTE_CHARS = 24
"""Longest word value of a record's own field kept (``"membership": "gold"``, ``"cabin": "economy"``)."""
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
_DIGIT_OR_AT = re.compile(r"[\d@]")


def _has_digit(text: str) -> bool:
    return any(ch.isdigit() for ch in text)


def _is_id(value: object) -> bool:
    """A short token naming one thing (``credit_card_7574394``, ``HAT006``, a card's ``"2076"``), not a quantity."""
    return isinstance(value, str) and 0 < len(value) <= 40 and " " not in value


def _kept(key: str, value: object, *, own: bool) -> bool:
    """``value`` is worth a field: a number, a value with a digit or an ``@``, or the record's ``own`` name or state."""
    if isinstance(value, bool) or value is None or not key:
        return False
    if isinstance(value, (int, float)):
        return True
    if not isinstance(value, str):
        return False
    naming = own and key.lower() in _NAMING and 0 < len(value) <= 80
    state = own and key.lower() in _STATE and 0 < len(value) <= 40 and value.lower() not in _SUCCESS
    return naming or state or (own and word_attribute(key, value)) or _DIGIT_OR_AT.search(value[:200]) is not None


def word_attribute(key: str, value: object) -> bool:
    """``value`` is a short word a record's own field holds (``"membership": "gold"``), not its name, state or an id.

    What the record is (a tier, a cabin, a brand): kept, but worth less than the ids and amounts beside it.
    """
    return (
        isinstance(value, str)
        and 0 < len(value) <= _ATTRIBUTE_CHARS
        and key.lower() not in _NAMING | _STATE
        and _DIGIT_OR_AT.search(value) is None
    )


def _cut(value: object) -> object:
    """``value``, a long text cut at :data:`_VALUE_CHARS` characters."""
    return value[:_VALUE_CHARS] + "…" if isinstance(value, str) and len(value) > _VALUE_CHARS else value


def _shown(value: object) -> str:
    """``value`` as JSON, as the tool wrote it (a long text cut)."""
    return json.dumps(_cut(value), ensure_ascii=False)


def _field(name: str, values: list[object]) -> str:
    key = json.dumps(name, ensure_ascii=False)  # the tool's own key, quoted as JSON: the pair reads as it was sent
    if len(values) == 1:
        return f"{key}: {_shown(values[0])}"
    if len(values) > MAX_PER_KEY and not all(_is_id(v) for v in values):
        return f"{key}: {_shown(values[0])} (1 of {len(values)})"
    listed = ", ".join(_shown(v) for v in values[:MAX_IDS])
    more = f" (+{len(values) - MAX_IDS} more)" if len(values) > MAX_IDS else ""
    return f"{key}: [{listed}]{more}"


def _leaves(body: object) -> tuple[dict[str, list[object]], int]:
    """The kept values of ``body`` by field, breadth first, and how many fields it holds past :data:`MAX_FIELDS`.

    At most :data:`MAX_LEAVES` values are visited.
    """
    leaves: dict[str, list[object]] = {}
    more: set[str] = set()
    # key, value, listed (inside a list), depth, maps (maps entered since the nearest list: 2 is a listed record's
    # attribute map, such as a line item's options)
    queue: deque[tuple[str, object, bool, int, int]] = deque([("", body, False, 0, 0)])
    visited = 0

    def add(key: str, value: object) -> None:
        if key in leaves or len(leaves) < MAX_FIELDS:
            leaves.setdefault(key, []).append(value)
        else:
            more.add(key)

    while queue and visited < MAX_LEAVES:
        key, value, listed, depth, maps = queue.popleft()
        visited += 1
        if isinstance(value, dict):
            if listed and maps >= 1:
                continue  # a listed record's attributes ("options": {"storage": "256GB SSD"}) describe, not name
            if len(value) > MAX_IDS and all(_has_digit(str(k)) and isinstance(v, dict) for k, v in value.items()):
                # a catalogue keyed by ids (a product's 19 variants): its records are a list's, shown as columns
                queue.extend((key, v, True, depth + 1, 0) for v in value.values())
                continue
            parent = key.rsplit(".", 1)[-1] if key and not listed else ""
            for k, v in value.items():
                if parent and v == parent:
                    continue  # a record's own id under a map keyed by it ({"card_7": {"id": "card_7"}})
                name = str(k)
                named = parent and parent not in name and (_has_digit(parent) or name.lower() in _GENERIC)
                queue.append((f"{parent}.{name}" if named else name, v, listed, depth + 1, maps + 1))
        elif isinstance(value, list):
            rows = _rows(value) if key and not listed else None
            if rows is not None:  # a few records side by side: which date is whose flight, which price whose item
                add(key, rows)
                nested = (
                    (str(k), v) for row in value if isinstance(row, dict) for k, v in row.items() if _container(v)
                )  # their own lists are columns still, their attribute maps left out, as any listed record's
                queue.extend((k, v, True, depth + 2, 1) for k, v in nested)
                continue
            if len(value) == 1 and not _container(value[0]):  # "reservations": ["G72NSF"], a list as it was sent
                if _kept(key, value[0], own=False):
                    add(key, value)
                continue
            queue.extend((key, v, True, depth + 1, 0) for v in value)
        elif _kept(key, value, own=depth == 1 and not listed):
            add(key, value)
    return leaves, len(more)


def _container(value: object) -> bool:
    return isinstance(value, (dict, list))


def _rows(records: list[object]) -> list[dict[str, object]] | None:
    """A short list of short records (2 to :data:`MAX_ROWS`, :data:`MAX_CHARS` in all) as each one's kept values.

    ``[{"flight_number": "HAT078", "date": "2024-05-27", "price": 523}, ...]``: a column per key
    (``"date": ["2024-05-27", "2024-05-28"]``) would say which dates there are, not which flight is on which.
    ``None`` for any other list, which reads in columns.
    """
    dicts = [record for record in records if isinstance(record, dict)]
    if not 2 <= len(dicts) == len(records) <= MAX_ROWS:
        return None
    rows: list[dict[str, object]] = []
    for record in dicts:
        row: dict[str, object] = {}
        for k, v in islice(record.items(), MAX_LEAVES // MAX_ROWS):
            if len(row) < MAX_FIELDS and _kept(str(k), v, own=True):
                row[str(k)] = _cut(v)
        rows.append(row)
    if not any(rows) or len(json.dumps(rows, ensure_ascii=False)) > MAX_CHARS:
        return None  # long records read better in columns, which sample their values
    return rows


def record_fields(body: object) -> tuple[list[str], int]:
    """The fields of a parsed JSON result as ``"key": value`` texts (timestamps last), and how many it did not read."""
    if not isinstance(body, (dict, list)):
        return [], 0
    leaves, unread = _leaves(body)
    timed = [k for k, values in leaves.items() if all(isinstance(v, str) and _TIMESTAMP.match(v) for v in values)]
    order = [k for k in leaves if k not in timed] + timed
    return [_field(key, leaves[key]) for key in order], unread


def fields_line(body: object) -> str | None:
    """The fields of a parsed JSON result in one line (see the module docstring); ``None`` when it holds none."""
    fields, unread = record_fields(body)
    shown: list[str] = []
    length = 0
    for field in fields:
        if length + len(field) + 2 > MAX_CHARS:
            continue
        shown.append(field)
        length += len(field) + 2
    if not shown:
        return None
    left = len(fields) - len(shown) + unread
    return ", ".join(shown) + (f" (+{left} more fields)" if left else "")
