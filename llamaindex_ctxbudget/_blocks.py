"""LlamaIndex content blocks other than text and tool calls, as ctxbudget blocks sized like what the provider gets.

A block is counted by what is sent for it, never by a fixed guess:

* ``ThinkingBlock``: its reasoning text (providers bill it when it is sent back);
* ``CitationBlock`` / ``CitableBlock``: the cited text, title and source;
* ``DocumentBlock`` with a text media type (``text/*``, JSON, XML, YAML, CSV): the decoded text;
* inline audio, video and binary documents: their base64 payload (what goes over the wire; an upper bound for
  providers that bill by duration or page), which LlamaIndex already holds as base64, so no extra encoding runs;
  a block given by ``path`` is read once, when its message is converted; a block given only by ``url`` is counted
  by its URL (nothing is fetched);
* images: OpenAI's high-detail price (the core's ``TOKENS_PER_IMAGE``);
* ``CachePoint`` and unknown blocks: their JSON.

Text-bearing blocks become ``ContentBlock(type=<block_type>, text=...)``, so the text is counted exactly by the
memory's counter and read by the summarizer; binary ones keep their payload in ``data``.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from ctxbudget.messages import ContentBlock
from llama_index.core.base.llms.types import (
    AudioBlock,
    CitableBlock,
    CitationBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    VideoBlock,
)

__all__ = ["counted_block"]

_TEXT_MEDIA = ("text/", "application/json", "application/xml", "application/yaml", "application/x-yaml")


def _kind(block: Any) -> str:
    return str(getattr(block, "block_type", None) or type(block).__name__)


def _payload(inline: object, path: str | Path | None) -> str | None:
    """The base64 text sent for a binary block: LlamaIndex's own base64 bytes, or the file at ``path``.

    A stream (``IOBase``) is not read here: reading would consume it before LlamaIndex sends it.
    """
    if isinstance(inline, bytes) and inline:
        return inline.decode("ascii", errors="replace")
    if path is not None:
        try:
            return base64.b64encode(Path(path).read_bytes()).decode("ascii")
        except OSError:
            return None
    return None


def _document_text(block: DocumentBlock) -> str | None:
    mime = block.document_mimetype or ""
    if not mime.startswith(_TEXT_MEDIA):
        return None
    payload = _payload(block.data, block.path)
    if payload is None:
        return None
    try:
        return base64.b64decode(payload, validate=False).decode("utf-8", errors="replace")
    except ValueError:
        return None


def _cited_text(parts: list[Any]) -> str:
    texts: list[str] = []
    for part in parts:
        if isinstance(part, TextBlock):
            texts.append(part.text)
        elif isinstance(part, DocumentBlock):
            texts.append(_document_text(part) or "")
    return "\n".join(text for text in texts if text)


def _binary(block: Any, inline: object, path: str | Path | None, url: object) -> ContentBlock:
    data: dict[str, Any] = {"llamaindex_block": type(block).__name__}
    payload = _payload(inline, path)
    if payload is not None:
        data["base64"] = payload
    elif url is not None:
        data["url"] = str(url)
    return ContentBlock(type=_kind(block), data=data)


def counted_block(block: Any) -> ContentBlock:  # noqa: PLR0911 - one return per block family reads best here
    """The ctxbudget block standing for a LlamaIndex block (not text, not a tool call), sized as sent."""
    name = type(block).__name__
    if isinstance(block, ThinkingBlock):
        return ContentBlock(type=_kind(block), text=block.content or "")
    if isinstance(block, CitationBlock):
        cited = _cited_text([block.cited_content])
        return ContentBlock(type=_kind(block), text="\n".join(t for t in (block.title, block.source, cited) if t))
    if isinstance(block, CitableBlock):
        cited = _cited_text(list(block.content))
        return ContentBlock(type=_kind(block), text="\n".join(t for t in (block.title, block.source, cited) if t))
    if isinstance(block, DocumentBlock):
        text = _document_text(block)
        if text is not None:
            return ContentBlock(type=_kind(block), text=text)
        return _binary(block, block.data, block.path, block.url)
    if isinstance(block, AudioBlock):
        return _binary(block, block.audio, block.path, block.url)
    if isinstance(block, VideoBlock):
        return _binary(block, block.video, block.path, block.url)
    if isinstance(block, ImageBlock):  # counted at the image price by the core: no payload needed
        return ContentBlock(type="image", data={"llamaindex_block": name})
    try:
        dumped: dict[str, Any] = block.model_dump(mode="json")
    except Exception:  # an unserializable block: its name only
        dumped = {}
    return ContentBlock(type=_kind(block), data={"llamaindex_block": name, "block": dumped})
