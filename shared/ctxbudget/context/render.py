"""Prompt-safe envelopes: how data enters a prompt without being able to pass for instructions.

Every piece of context is rendered as::

    <context source="retriever" type="document">
    ...escaped content...
    </context>

Attributes and content are XML-escaped, so a retrieved text containing ``</context><context source="system">`` stays
inside its own envelope as inert text and cannot close it or forge a new one. Envelopes are joined by a blank line.
"""

from __future__ import annotations

from collections.abc import Iterable
from xml.sax.saxutils import escape

from ..messages._counter_inputs import not_text
from .items import ContextItem, checked_items, not_an_item

__all__ = [
    "SEPARATOR",
    "envelope",
    "escape_attribute",
    "escape_content",
    "render_envelope",
    "render_item",
    "render_items",
]

SEPARATOR = "\n\n"
"""What sits between two envelopes: a blank line."""

_ATTRIBUTE_ENTITIES = {'"': "&quot;", "'": "&apos;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}


def escape_content(text: str) -> str:
    """Escape ``&``, ``<`` and ``>`` so ``text`` cannot open or close a tag.

    Raises:
        UsageError: ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise not_text(text)
    return escape(text)


def escape_attribute(value: str) -> str:
    """Escape ``value`` for a double-quoted attribute: markup characters, both quotes and line breaks.

    Raises:
        UsageError: ``value`` is not a ``str``.
    """
    if not isinstance(value, str):
        raise not_text(value, "value")
    return escape(value, _ATTRIBUTE_ENTITIES)


def render_envelope(*, source: str, type: str, content: str) -> str:
    """Render one envelope: ``<context source=".." type="..">``, the escaped content, ``</context>``.

    Raises:
        UsageError: ``source``, ``type`` or ``content`` is not a ``str`` (the first such is named).
    """
    for field, value in (("source", source), ("type", type), ("content", content)):
        if not isinstance(value, str):
            raise not_text(value, field)
    return envelope(source, type, content)


def render_item(item: ContextItem) -> str:
    """Render one :class:`ContextItem` in its envelope (source and type from the item).

    Raises:
        InvalidFragmentError: ``item`` is not a :class:`ContextItem`.
    """
    if not isinstance(item, ContextItem):
        raise not_an_item(item)
    return envelope(item.source, item.type, item.content)


def render_items(items: Iterable[ContextItem]) -> str:
    """Render items in the given order, envelopes separated by a blank line; ``""`` for no items.

    Raises:
        InvalidFragmentError: ``items`` is not an iterable of :class:`ContextItem`.
    """
    return SEPARATOR.join(envelope(item.source, item.type, item.content) for item in checked_items(items))


def envelope(source: str, type: str, content: str) -> str:
    """:func:`render_envelope` of fields already known to be ``str`` (a validated item or fragment): no checks."""
    return (
        f'<context source="{escape(source, _ATTRIBUTE_ENTITIES)}" type="{escape(type, _ATTRIBUTE_ENTITIES)}">\n'
        f"{escape(content)}\n</context>"
    )
