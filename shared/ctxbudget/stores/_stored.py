"""Reading stored fields back: anything a store did not write is corruption, never silently converted.

A store writes integers (versions, log heads, sequence numbers) and UTF-8 text (snapshots, records). When a read
finds something else (a hand edit, another program, a half-finished migration), the backend raises
:class:`CorruptField` naming the key or column and the value; :class:`~ctxbudget.stores.base.BaseSnapshotStore`
turns it into :class:`~ctxbudget.errors.SnapshotStoreError` naming the store, the operation and the session.
"""

from __future__ import annotations

__all__ = ["CorruptField", "holds", "show", "stored_int", "stored_utf8"]

_SHOWN_CHARS = 80


class CorruptField(Exception):
    """A stored field is missing or holds a value its store never writes; the message names key and value."""


def holds(where: str, value: object, expected: str) -> CorruptField:
    """The error for ``where`` (a column, a key and field) holding ``value`` instead of ``expected``."""
    return CorruptField(f"{where} holds {show(value)}, expected {expected}")


def show(value: object) -> str:
    """``repr(value)``, cut to a readable length (a snapshot can be megabytes)."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else f"{text[: _SHOWN_CHARS - 3]}..."


def stored_int(value: object, where: str, *, minimum: int, expected: str) -> int:
    """Return ``value`` as an int >= ``minimum``: an int, or ASCII digits as ``str``/``bytes`` (Redis replies).

    Raises:
        CorruptField: anything else: text, a float, a bool, a negative or too small number.
    """
    number: object = value
    if isinstance(value, bytes | str):
        text = value.decode("ascii", "replace") if isinstance(value, bytes) else value
        number = int(text) if text.isascii() and text.isdigit() else None
    if isinstance(number, int) and not isinstance(number, bool) and number >= minimum:
        return number
    raise holds(where, value, expected)


def stored_utf8(value: object, where: str) -> str:
    """Return ``value`` as text: a ``str``, or ``bytes`` that are valid UTF-8 (Redis replies).

    Raises:
        CorruptField: ``bytes`` that are not valid UTF-8, or any other type.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise holds(where, value, "UTF-8 text") from None
    raise holds(where, value, "text")
