"""LangChain message content <-> ctxbudget content: a string, or content blocks, kept whole both ways.

A block's ``text`` becomes the :class:`~ctxbudget.ContentBlock`'s text when it is a string. The Assistants-API shape
``{"type": "text", "text": {"value": "...", "annotations": [...]}}`` is read the same way: ``value`` is the text
(counted, summarized and searched like any other), and the other fields of ``text`` are kept in the block's data
under ``"text"``. Any other ``text`` (a number, ``None``, a dict without a string ``value``) is kept in the data
as it is, where the counter counts it by its JSON. Converting back gives the block as it was given.
"""

from __future__ import annotations

from typing import Any

from ctxbudget.messages import ContentBlock

__all__ = ["blocks_of", "content_to_langchain"]


def _block(block: dict[str, Any]) -> ContentBlock:
    """One block dict as a ``ContentBlock``: its text, and everything else it carries as data."""
    kind = str(block.get("type") or "unknown")
    rest = {k: v for k, v in block.items() if k not in ("type", "text")}
    if "text" not in block:
        return ContentBlock(type=kind, data=rest)
    text = block["text"]
    if isinstance(text, str):
        return ContentBlock(type=kind, text=text, data=rest)
    if isinstance(text, dict) and isinstance(text.get("value"), str):  # the Assistants-API text object
        fields = {k: v for k, v in text.items() if k != "value"}
        return ContentBlock(type=kind, text=text["value"], data={**rest, "text": fields})
    return ContentBlock(type=kind, data={**rest, "text": text})


def blocks_of(content: str | list[str | dict[str, Any]]) -> str | tuple[ContentBlock, ...]:
    """The ctxbudget form of LangChain content: the string itself, or one block per item.

    Raises:
        InvalidMessageError: a block carries what a ctxbudget message cannot hold (JSON cannot; the field is named).
    """
    if isinstance(content, str):
        return content
    return tuple(
        ContentBlock(type="text", text=block) if isinstance(block, str) else _block(block) for block in content
    )


def content_to_langchain(content: str | tuple[ContentBlock, ...]) -> str | list[str | dict[str, Any]]:
    """The LangChain form of ctxbudget content: a string, or a list of block dicts (as :func:`blocks_of` read them)."""
    if isinstance(content, str):
        return content
    out: list[str | dict[str, Any]] = []
    for block in content:
        item: dict[str, Any] = {"type": block.type, **block.data}
        if block.text is not None:
            fields = block.data.get("text")
            item["text"] = {"value": block.text, **fields} if isinstance(fields, dict) else block.text
        out.append(item)
    return out
