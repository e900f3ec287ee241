"""Claude Code's harness text inside a user turn: the tags it wraps what the person did not write in.

A slash command (``<command-name>/mcp</command-name>``), a local command's output, a ``<system-reminder>``: sent to
the model as part of a user turn, but not the person's words. :func:`strip_harness_tags` takes them out (a block to
its first closing tag, a tag left alone by itself), in one pass whatever the text.
"""

from __future__ import annotations

import re

__all__ = ["strip_harness_tags"]

_HARNESS_TAGS = (
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "system-reminder",
    "user-prompt-submit-hook",
)
_HARNESS_TAG = re.compile("</?(?:" + "|".join(_HARNESS_TAGS) + ")>")
"""An opening or closing harness tag (literals only: linear on any text)."""


def strip_harness_tags(text: str) -> str:
    """``text`` without its harness blocks and any harness tag left alone (an opener never closed, a stray closer).

    A block runs from its opener to the first closing tag (``<system-reminder>...</system-reminder>``). One forward
    pass: each block's closing tag is found with ``str.find`` from its opener, and a tag found never closed is not
    looked for again (``"<system-reminder>" * 10_000`` costs its length, not its square).
    """
    if "<" not in text:
        return text
    out: list[str] = []
    kept = 0
    unclosed: set[str] = set()
    position = 0
    while (found := _HARNESS_TAG.search(text, position)) is not None:
        tag = found.group(0)
        end = found.end()
        if tag[1] != "/" and tag not in unclosed:
            close = text.find(f"</{tag[1:]}", end)
            if close < 0:
                unclosed.add(tag)
            else:
                end = close + len(tag) + 1
        out.append(text[kept : found.start()])
        kept = position = end
    out.append(text[kept:])
    return "".join(out)
