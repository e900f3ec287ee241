"""One archived original and its handle: :class:`ArchiveEntry`, what the archive, its search and the stores share.

An entry is a whole message, or a long text (a tool output, a log, a transcript) kept as evidence; its handle, like
``ctx://archive/<id>``, is safe to show to a model, which can ask to read the original back.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..messages.message import Message

__all__ = ["HANDLE_PREFIX", "ArchiveEntry", "ArchiveReason", "content_digest"]

HANDLE_PREFIX = "ctx://archive/"
"""Every archive handle starts with this."""

ArchiveReason = Literal["bounded", "cleared", "summarized", "truncated", "evidence", "dropped", "replaced"]


def content_digest(value: Any) -> str:
    """``"sha256:"`` + the hex SHA-256 of ``value`` as canonical JSON (sorted keys, no spaces, UTF-8).

    ``value`` is what ``json.loads`` returns (dicts, lists, str, int, float, bool, None), so a document's digest does
    not depend on its key order or whitespace, only on its content; floats are written as Python's shortest repr,
    which reads back to the same float.
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


class ArchiveEntry(BaseModel):
    """One archived original: a whole message, or a long text (tool output, log, transcript)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    handle: str = Field(min_length=len(HANDLE_PREFIX) + 1)
    reason: ArchiveReason
    message: Message | None = Field(default=None, description="The original message, when one was archived.")
    text: str | None = Field(default=None, description="The original text, for long outputs kept as evidence.")
    source: str | None = Field(default=None, description="Where the text came from (tool name, file, command).")

    @property
    def digest(self) -> str:
        """The entry's content digest (:func:`content_digest` of its JSON), as stores write and check it."""
        return content_digest(self.model_dump(mode="json"))

    @property
    def full_text(self) -> str:
        """The archived text: the message's text, or the stored text."""
        if self.message is not None:
            return self.message.text
        return self.text or ""

    @property
    def readable_text(self) -> str:
        """What reading the entry back serves: :attr:`full_text`, then each tool call the message made.

        A call's arguments are part of the original (a script written by a heredoc, a query): read back whole, one
        line per call, ``[tool call NAME (id ID): ARGUMENTS]``.
        """
        if self.message is None or not self.message.tool_calls:
            return self.full_text
        calls = "\n".join(
            f"[tool call {call.name} (id {call.id}): {call.args_json()}]" for call in self.message.tool_calls
        )
        return f"{self.message.text}\n{calls}" if self.message.text else calls
