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

from .items import ContextItem, checked_items

__all__ = ["SEPARATOR", "escape_attribute", "escape_content", "render_envelope", "render_item", "render_items"]

SEPARATOR = "\n\n"
"""What sits between two envelopes: a blank line."""

_ATTRIBUTE_ENTITIES = {'"': "&quot;", "'": "&apos;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}


def escape_content(text: str) -> str:
    """Escape ``&``, ``<`` and ``>`` so ``text`` cannot open or close a tag."""
    return escape(text)


def escape_attribute(value: str) -> str:
    """Escape ``value`` for a double-quoted attribute: markup characters, both quotes and line breaks."""
    return escape(value, _ATTRIBUTE_ENTITIES)


def render_envelope(*, source: str, type: str, content: str) -> str:
    """Render one envelope: ``<context source=".." type="..">``, the escaped content, ``</context>``."""
    return (
        f'<context source="{escape_attribute(source)}" type="{escape_attribute(type)}">\n'
        f"{escape_content(content)}\n</context>"
    )


def render_item(item: ContextItem) -> str:
    """Render one :class:`ContextItem` in its envelope (source and type from the item)."""
    return render_envelope(source=item.source, type=item.type, content=item.content)


def render_items(items: Iterable[ContextItem]) -> str:
    """Render items in the given order, envelopes separated by a blank line; ``""`` for no items.

    Raises:
        InvalidFragmentError: ``items`` is not an iterable of :class:`ContextItem`.
    """
    return SEPARATOR.join(render_item(item) for item in checked_items(items))
