r"""Read real transcripts into ctxbudget :class:`~ctxbudget.messages.message.Message` objects.

The format is told from the content (:mod:`ctxbudget.transcripts.formats` lists them; ``format=`` forces one):
OpenAI Chat Completions (a list, a request body, or JSONL), OpenAI Responses input items, Anthropic Messages,
Claude Code session JSONL, LangChain ``messages_to_dict`` / ``dumpd`` dumps, LlamaIndex ``SimpleChatStore`` JSON,
SWE-agent ``.traj`` and mini-swe-agent ``.traj.json`` trajectories, tau-bench results, ATIF trajectories, and the
``ctxbudget.compacted/1`` documents ``ctxbudget compact`` writes (their summary, goal and archive in
:attr:`Transcript.compacted`, so compacting again carries them forward). Provider formats are read by
:mod:`ctxbudget.providers`, so writing the same format back gives the original; a request body's other fields
(``model``, ``max_tokens``, ...) are kept in :attr:`Transcript.envelope`. The model a transcript names (a request's
``model``, Claude Code's ``message.model``, a trajectory's configuration) is :attr:`Transcript.model`, and the
prompt sizes it records itself (the provider's usage) are :attr:`Transcript.usage`.

The file is streamed (:mod:`ctxbudget.transcripts.formats._stream`): JSONL line by line, a JSON document's long lists
element by element, within a size limit (``max_bytes``). :func:`load_transcript` collects the messages into a
:class:`Transcript`; ``ctxbudget inspect`` and ``compact`` read the stream itself, so their memory does not grow with
the file.

Every problem raises :class:`~ctxbudget.errors.TranscriptError` naming where (``line 7`` for JSONL, ``messages[3]``
for JSON) and the field (``role``, ``tool_calls[0].id``); invalid UTF-8 names the byte offset; content no reader
claims names what was seen (field ``format``). Text that is not valid Unicode (a lone surrogate such as a
``\ud800`` escape, anywhere in a message or a tool spec), JSON nested more than :data:`MAX_DEPTH` levels and
integers of more digits than Python converts are rejected the same way, so nothing read here fails later when it
is printed, written or sent. Messages keep the id the transcript gave them, else get a deterministic id
(``transcript-<index>``, or the format's own scheme), so two reads agree.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..archive.store import ArchiveEntry
from ..errors import TranscriptError
from ..messages._validation import short_repr
from ..messages.message import Message, ToolSchema
from .formats import READ_FORMATS, check_name
from .formats._detect import COMPACTED_FORMAT
from .formats._items import Replaced, Reported
from .formats._open import TranscriptStream, open_bytes, open_transcript
from .formats._stream import MAX_BYTES
from .formats._where import MAX_DEPTH

__all__ = [
    "COMPACTED_FORMAT",
    "MAX_DEPTH",
    "CompactedState",
    "Transcript",
    "TranscriptFormat",
    "UsageReport",
    "load_transcript",
    "parse_transcript",
]

TranscriptFormat = Literal[
    "openai",
    "responses",
    "anthropic",
    "claude-code",
    "langchain",
    "langchain-dumpd",
    "llamaindex",
    "swe-agent",
    "mini-swe-agent",
    "tau-bench",
    "atif",
    "ctxbudget-compacted",
]
"""The format a transcript was read from (``--format`` names: ``langchain`` covers both dumps, ``ctxbudget`` is
``ctxbudget-compacted``)."""


class CompactedState(BaseModel):
    """What a ``ctxbudget.compacted/1`` document holds besides its messages."""

    model_config = ConfigDict(frozen=True)

    summary: str | None = Field(default=None, description="The cumulative summary of everything compacted away.")
    goal: str | None = Field(default=None, description="The user's goal, when the document records it.")
    archive: tuple[ArchiveEntry, ...] = Field(default=(), description="Every original that left the messages.")


class UsageReport(BaseModel):
    """A prompt size the transcript records itself: the provider's usage for one request."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = Field(description="The request's prompt tokens (Anthropic: input plus cache tokens).")
    messages: int = Field(description="How many of :attr:`Transcript.messages` that request held (the first ones).")
    where: str = Field(description="Where the figure is in the file (``line 412``, ``steps[37].metrics``).")


class Transcript(BaseModel):
    """A transcript read from a file or a string."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...] = Field(description="The messages, in order, with unique ids: what is sent next.")
    format: TranscriptFormat
    source: str = Field(description="The path (or label) the transcript was read from.")
    key: str | None = Field(
        default=None, description="The LlamaIndex chat-store key, or the tau-bench entry index, read."
    )
    tools: tuple[ToolSchema, ...] = Field(default=(), description="Tool schemas the transcript declared, if any.")
    jsonl: bool = Field(default=False, description="Read as JSONL, one message (or event) per line.")
    envelope: dict[str, Any] | None = Field(
        default=None,
        description="A request body's fields besides its messages and tools (model, max_tokens, ...); None when the "
        "transcript was a bare list of messages or JSONL.",
    )
    compacted: CompactedState | None = Field(
        default=None, description="For a document ``ctxbudget compact`` wrote: its summary, goal and archive."
    )
    replaced: tuple[Message, ...] = Field(
        default=(),
        description="Messages the transcript's own compaction replaced (Claude Code's history before its last "
        "compact_boundary): kept, not sent.",
    )
    model: str | None = Field(default=None, description="The model the transcript names for its next request.")
    model_from: str | None = Field(default=None, description="Where the transcript names it.")
    usage: tuple[UsageReport, ...] = Field(
        default=(), description="The first and the last prompt size the transcript records (at most two)."
    )
    notes: tuple[str, ...] = Field(default=(), description="What the reader did that a report should say.")


def load_transcript(
    path: str | os.PathLike[str],
    *,
    key: str | None = None,
    format: str | None = None,
    max_bytes: int = MAX_BYTES,
    include_sidechains: bool = False,
) -> Transcript:
    """Read the transcript at ``path``.

    JSONL (one value per line) is told from one JSON document by the file's first value (a pretty-printed document,
    as ``ctxbudget compact --in-place`` leaves it, is a document whatever its suffix).

    Args:
        path: the file to read.
        key: for a LlamaIndex chat store, the key to read; for a tau-bench list, the entry index; ``None``: the first.
        format: one of :data:`~ctxbudget.transcripts.formats.READ_FORMATS` to skip detection; ``None`` detects.
        max_bytes: refuse a file (or stream) larger than this.
        include_sidechains: read a Claude Code file's sidechain events (a subagent's own file) as its thread.

    Raises:
        TranscriptError: the file cannot be read, is over ``max_bytes``, is not UTF-8, not JSON, in no format read
            here, or a message is malformed.
        UsageError: ``format`` is not a format name (the valid names are listed).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TranscriptError(f"path: must be a str or os.PathLike, got {type(path).__name__}", field="path")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        shown = (
            f"{max_bytes:,}"
            if isinstance(max_bytes, int) and not isinstance(max_bytes, bool)
            else short_repr(max_bytes)
        )
        raise TranscriptError(f"max_bytes: must be a positive int (bytes), got {shown}", field="max_bytes")
    forced = None if format is None else check_name(format, READ_FORMATS, "--format")
    file = Path(path)
    stream = open_transcript(
        file,
        label=label_of(file),
        key=key,
        format=forced,
        max_bytes=max_bytes,
        include_sidechains=include_sidechains,
    )
    with stream:
        return collect(stream)


def label_of(path: Path) -> str:
    r"""How messages and reports name ``path``: a name that is not UTF-8 is shown with ``\x`` escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def parse_transcript(
    data: bytes | str,
    *,
    source: str = "<transcript>",
    key: str | None = None,
    jsonl: bool | None = None,
    format: str | None = None,
    include_sidechains: bool = False,
) -> Transcript:
    """Parse transcript text (see the module docstring for the formats).

    Args:
        data: the file's bytes (must be UTF-8) or text.
        source: a label for error messages, usually the path.
        key: for a LlamaIndex chat store, the key to read; for a tau-bench list, the entry index; ``None``: the first.
        jsonl: ``True`` forces JSONL, ``False`` forces one JSON document, ``None`` detects.
        format: one of :data:`~ctxbudget.transcripts.formats.READ_FORMATS` to skip detection; ``None`` detects.
        include_sidechains: read a Claude Code file's sidechain events (a subagent's own file) as its thread.

    Raises:
        TranscriptError: the text is not UTF-8, not JSON, in no format read here, or a message is malformed; or an
            argument has the wrong type (the error names it).
        UsageError: ``format`` is not a format name (the valid names are listed).
    """
    _check_arguments(data, source, key, jsonl)
    forced = None if format is None else check_name(format, READ_FORMATS, "--format")
    # A lone surrogate in text becomes its JSON escape, which the readers refuse naming the field.
    raw = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else bytes(data)
    stream = open_bytes(raw, label=source, key=key, jsonl=jsonl, format=forced, include_sidechains=include_sidechains)
    with stream:
        return collect(stream)


def _check_arguments(data: object, source: object, key: object, jsonl: object) -> None:
    expected = (
        ("data", data, isinstance(data, (bytes, bytearray, str)), "bytes or str"),
        ("source", source, isinstance(source, str), "a str"),
        ("key", key, key is None or isinstance(key, str), "a str or None"),
        ("jsonl", jsonl, jsonl is None or isinstance(jsonl, bool), "a bool or None"),
    )
    for name, value, ok, what in expected:
        if not ok:
            raise TranscriptError(f"{name}: must be {what}, got {type(value).__name__}", field=name)


def collect(stream: TranscriptStream) -> Transcript:
    """Every item of ``stream`` gathered into a :class:`Transcript` (the whole transcript in memory)."""
    messages: list[Message] = []
    replaced: list[Message] = []
    archive: list[ArchiveEntry] = []
    usage: list[UsageReport] = []
    for item in stream.items():
        if isinstance(item, Message):
            messages.append(item)
        elif isinstance(item, Replaced):
            replaced.append(item.message)
        elif isinstance(item, Reported):
            report = UsageReport(prompt_tokens=item.prompt_tokens, messages=len(messages), where=item.where)
            usage = [usage[0], report] if usage else [report]
        else:
            archive.append(item)
    head = stream.head
    if not messages:
        raise TranscriptError(f"{head.source}: the transcript holds no messages it would send", field="messages")
    compacted = CompactedState(summary=head.summary, goal=head.goal, archive=tuple(archive)) if head.compacted else None
    return Transcript(
        messages=tuple(messages),
        format=head.format,
        source=head.source,
        key=head.key,
        tools=head.tools,
        jsonl=head.jsonl,
        envelope=head.envelope,
        compacted=compacted,
        replaced=tuple(replaced),
        model=head.model,
        model_from=head.model_from,
        usage=tuple(usage),
        notes=tuple(head.notes),
    )
