"""Reading a transcript that is one JSON object, per format (a request body, a trajectory, a chat store, ...).

The formats: a Responses or Anthropic request body, a tau-bench result, a SWE-agent or mini-swe-agent trajectory, an
ATIF trajectory, a LlamaIndex chat store, a ``ctxbudget.compacted/1`` document. Each reader (:data:`OBJECT_READERS`)
takes the scanned :class:`~._stream.Document` and gives the :class:`~._items.Head` and a function that reads the
items again on each call; :mod:`._open` wraps them in a ``TranscriptStream``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ...archive.store import ArchiveEntry
from ...errors import TranscriptError
from ...messages.message import Message
from ._atif import atif_model, atif_stream, check_agent
from ._detect import COMPACTED_FORMAT
from ._generic import convert_one, store_entries, tools_from
from ._items import Head, Item
from ._providers import (
    Ids,
    anthropic_stream,
    anthropic_tools,
    envelope_of,
    openai_tools,
    responses_lead,
    responses_stream,
    responses_tools,
)
from ._stream import Document, IndexedRows, ListRows, Rows, SpanRows
from ._trajectories import (
    mini_swe_agent_model,
    mini_swe_agent_stream,
    mini_swe_agent_submission,
    swe_agent_model,
    swe_agent_stream,
    tau_bench_stream,
)
from ._where import Where

__all__ = ["OBJECT_READERS", "Opened", "lenient", "member_rows", "model_from_envelope"]

Opened = tuple[Head, Callable[[], Iterator[Item]]]
"""What a reader gives: the head, and a function that reads the items again on each call."""


def lenient(rows: Rows) -> Iterator[Message]:
    """Messages in any shape :func:`~._generic.convert_one` reads (LangChain dumps, a chat store), ids checked."""
    ids = Ids()
    for where, entry in rows:
        message = convert_one(entry, where, ids.index)
        ids.index += 1
        ids.check(message.id, where)
        yield message


def member_rows(document: Document, name: str, label: str) -> IndexedRows | None:
    """The list member ``name`` of ``document`` as rows (streamed or in memory); ``None`` when it is no list."""
    value = document.members.get(name)
    if isinstance(value, SpanRows):
        return value
    if isinstance(value, list):
        return ListRows(label, name, value)
    return None


def model_from_envelope(head: Head) -> None:
    """Take the model a request body names (its ``model`` field) into ``head``."""
    model = head.envelope.get("model") if head.envelope is not None else None
    if isinstance(model, str) and model:
        head.model, head.model_from = model, "the request's model"


def _responses(document: Document, label: str, _key: str | None) -> Opened:
    members = document.members
    items = members.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    rows = (
        items if isinstance(items, SpanRows) else ListRows(label, "input", items) if isinstance(items, list) else None
    )
    if rows is None or not rows.head:
        raise TranscriptError(f"{label}: 'input' must be a non-empty list of Responses items", field="input")
    lead, taken = responses_lead(members, label)
    head = Head(format="responses", source=label, tools=responses_tools(members.get("tools") or [], label))
    head.envelope = envelope_of(members, taken, label)
    model_from_envelope(head)
    return head, lambda: responses_stream(rows, lead)


def _anthropic(document: Document, label: str, _key: str | None) -> Opened:
    members = document.members
    rows = member_rows(document, "messages", label)
    if rows is None or not rows.head:
        raise TranscriptError(f"{label}: 'messages' must be a non-empty list of messages", field="messages")
    head = Head(format="anthropic", source=label, tools=anthropic_tools(members.get("tools") or [], label))
    head.envelope = envelope_of(members, ("messages", "system", "tools"), label)
    model_from_envelope(head)
    system = members.get("system")
    return head, lambda: anthropic_stream(rows, system, system_where=Where(label, "system"))


def _tau_single(document: Document, label: str, key: str | None) -> Opened:
    entries = ListRows(label, "", [dict(document.preview())])
    traj = document.members.get("traj")
    if isinstance(traj, SpanRows):  # a single result with a long trajectory
        entries = ListRows(label, "", [{**document.preview(), "traj": [v for _, v in traj]}])
    head = Head(format="tau-bench", source=label)
    return head, lambda: tau_bench_stream(entries, label, key, listed=False)


def _swe_agent(document: Document, label: str, _key: str | None) -> Opened:
    history = member_rows(document, "history", label)
    steps = member_rows(document, "trajectory", label)
    head = Head(format="swe-agent", source=label)
    model = swe_agent_model(document.members)
    if model is not None:
        head.model, head.model_from = model, "replay_config agent.model.name"
    return head, lambda: swe_agent_stream(history, steps, label)


def _mini_swe_agent(document: Document, label: str, _key: str | None) -> Opened:
    rows = member_rows(document, "messages", label)
    if rows is None or not rows.head:
        raise TranscriptError(f"{label}: 'messages' must be a non-empty list of messages", field="messages")
    head = Head(format="mini-swe-agent", source=label)
    model = mini_swe_agent_model(document.members)
    if model is not None:
        head.model, head.model_from = model, "info.config.model.model_name"
    submission = mini_swe_agent_submission(document.members)
    return head, lambda: mini_swe_agent_stream(rows, submission)


def _atif(document: Document, label: str, _key: str | None) -> Opened:
    members = document.members
    steps = member_rows(document, "steps", label)
    if steps is None or not steps.head:
        raise TranscriptError(f"{label}: 'steps' must be a non-empty list of ATIF steps", field="steps")
    agent = members.get("agent")
    check_agent(agent, label)
    head = Head(format="atif", source=label)
    head.model, head.model_from = atif_model(agent, steps)
    definitions = agent.get("tool_definitions") if isinstance(agent, Mapping) else None
    head.tools = openai_tools(definitions or [], label)
    head.envelope = envelope_of(members, ("steps",), label)
    subagents = members.get("subagent_trajectories")
    if isinstance(subagents, list) and subagents:
        head.notes.append(f"{len(subagents):,} embedded subagent trajectories are not read (written back as they are)")
    return head, lambda: atif_stream(steps, label)


def _llamaindex(document: Document, label: str, key: str | None) -> Opened:
    store = document.members.get("store")
    chosen, entries = store_entries(store, label, key)
    rows = ListRows(label, f"store[{chosen!r}]", entries)
    head = Head(format="llamaindex", source=label, key=chosen)
    assert isinstance(store, Mapping)
    head.extra = {
        "store": {k: v for k, v in store.items() if k != chosen},
        "envelope": {k: v for k, v in document.members.items() if k != "store"},
    }
    if len(store) > 1:
        head.notes.append(f"read key {chosen!r} of the {len(store):,} in the chat store; --key NAME reads another")
    return head, lambda: lenient(rows)


def _compacted(document: Document, label: str, _key: str | None) -> Opened:
    """A ``ctxbudget.compacted/1`` document: its archive first (the originals), then its messages."""
    members = document.members
    if members.get("format") != COMPACTED_FORMAT:
        raise TranscriptError(
            f"{label}: a ctxbudget document is a JSON object with format {COMPACTED_FORMAT!r}", field="format"
        )
    messages = member_rows(document, "messages", label)
    if messages is None or not messages.head:
        raise TranscriptError(f"{label}: 'messages' must be a non-empty list of messages", field="messages")
    archive = member_rows(document, "archive", label)
    if members.get("archive") is not None and archive is None:
        raise TranscriptError(f"{label}: 'archive' must be a list of archive entries", field="archive")
    head = Head(format="ctxbudget-compacted", source=label, compacted=True)
    head.summary = _optional_text(members, "summary", label)
    head.goal = _optional_text(members, "goal", label)
    head.tools = tools_from(members.get("tools") or [], label)
    output = members.get("output")
    rows = output.get("rows") if isinstance(output, Mapping) else None
    if isinstance(rows, list) and all(isinstance(row, str) for row in rows):
        head.extra["output_rows"] = rows
    model = members.get("model")
    if isinstance(model, str) and model:
        head.model, head.model_from = model, "the document's model"
    return head, lambda: _compacted_items(archive, messages)


def _compacted_items(archive: Rows | None, messages: Rows) -> Iterator[Item]:
    for where, entry in archive or ():
        where.check_tree(entry)
        yield _validated(ArchiveEntry, entry, where)
    ids = Ids()
    for where, entry in messages:
        where.check_tree(entry)
        message = _validated(Message, entry, where)
        ids.check(message.id, where)
        yield message


def _validated(model: type[Message] | type[ArchiveEntry], entry: Any, where: Where) -> Any:
    from pydantic import ValidationError  # noqa: PLC0415 - pydantic is imported by the models already

    from ...errors import InvalidMessageError  # noqa: PLC0415

    if not isinstance(entry, Mapping):
        where.fail("message" if model is Message else "archive", f"expected an object, got {type(entry).__name__}")
    try:
        return model(**entry) if model is Message else model.model_validate(entry)
    except InvalidMessageError as exc:
        where.fail(exc.field or "message", str(exc))
    except ValidationError as exc:
        first = exc.errors()[0]
        error = (first.get("ctx") or {}).get("error")
        field = ".".join(str(p) for p in first["loc"])
        if isinstance(error, InvalidMessageError) and error.field:  # a nested message's own check names its field
            field = f"{field}.{error.field}" if field else error.field
        where.fail(field or "archive", str(first["msg"]).removeprefix("Value error, "))


def _optional_text(document: Mapping[str, Any], field: str, source: str) -> str | None:
    value = document.get(field)
    if value is not None and not isinstance(value, str):
        raise TranscriptError(f"{source}: {field!r} must be a string or null, got {type(value).__name__}", field=field)
    if value is not None:
        Where(source, field).check_tree(value, field)
    return value


OBJECT_READERS: dict[str, Callable[[Document, str, str | None], Opened]] = {
    "ctxbudget-compacted": _compacted,
    "llamaindex": _llamaindex,
    "tau-bench": _tau_single,
    "swe-agent": _swe_agent,
    "mini-swe-agent": _mini_swe_agent,
    "atif": _atif,
    "responses": _responses,
    "anthropic": _anthropic,
}
"""The formats whose transcript is one JSON object read its own way: each reader takes the scanned document, the
file's label and ``--key``, and gives the head and the items (a request body with ``messages`` is read as rows)."""
