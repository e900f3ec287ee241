"""Claude Code session JSONL: the files under ``~/.claude/projects/<project>/<session>.jsonl``.

One event per line. ``type`` is ``user``, ``assistant``, ``system``, ``summary``, ``file-history-snapshot``,
``queue-operation`` and a few more; a user or assistant event's ``message`` is an Anthropic Messages message, and
``uuid``/``parentUuid`` thread the events. What is read, in file order:

* the user and assistant events of the main thread. Sidechains (``isSidechain``: a subagent's own conversation),
  API error notices (``isApiErrorMessage``) and the other event types (session titles, UI notices, file snapshots,
  queue operations) never reach the model, so they are skipped, as are messages with empty content;
* consecutive assistant events of one API message (the same ``message.id``: Claude Code writes one line per content
  block) are joined into one assistant message, so parallel tool calls share the message their results answer;
* tool results inside user messages become tool messages, as :func:`~ctxbudget.providers.messages_from_anthropic`
  reads them (``is_error`` kept); thinking blocks are kept and counted;
* the event's ``uuid`` is the message id (``<uuid>#1``, ... for further messages one event yields); a uuid seen
  before (a resumed session repeats lines) is read once;
* branches the session left (a rewind or an edited prompt forks the ``parentUuid`` thread) are skipped: the thread
  leading to the last message is read, with the results of its parallel tool calls (Claude Code hangs each result
  off its own ``tool_use`` line, beside the thread) and whatever has no link to it (another root).

The file holds no system prompt (Claude Code sends its own), so the session starts with the first user message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidMessageError
from ..messages import Message
from ..providers import messages_from_anthropic
from ._where import Where, fail_from

__all__ = ["EVENT_TYPES", "claude_code_rows", "is_claude_code_event"]

EVENT_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation"})
"""Event types that mark a Claude Code session line (with its ``uuid``/``sessionId``/``leafUuid`` fields)."""
_EVENT_KEYS = frozenset({"uuid", "parentUuid", "sessionId", "leafUuid", "isSidechain", "messageId"})


def is_claude_code_event(row: Any) -> bool:
    """Whether ``row`` is a line of a Claude Code session (an event type and one of the session's id fields)."""
    if not isinstance(row, Mapping):
        return False
    kind = row.get("type")
    return isinstance(kind, str) and kind in EVENT_TYPES and bool(_EVENT_KEYS.intersection(row))


class _Turn:
    """One API message: the events it was written as, joined."""

    def __init__(self, where: Where, uuid: str | None, role: str, api_id: Any, content: Any) -> None:
        self.where = where
        self.uuid = uuid
        self.role = role
        self.api_id = api_id
        self.content = content

    def join(self, content: Any) -> None:
        """Append the content blocks of another event of the same API message."""
        self.content = [*_blocks(self.content), *_blocks(content)]


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else [content]


def claude_code_rows(entries: Sequence[tuple[Where, Any]]) -> tuple[Message, ...]:
    """The messages of a Claude Code session's lines (see the module docstring).

    Raises:
        TranscriptError: a line that is not an object, an event whose ``message`` is malformed (line and field named).
    """
    for where, entry in entries:
        if not isinstance(entry, Mapping):
            where.fail("event", f"expected a JSON object, got {type(entry).__name__}")
    abandoned = _abandoned([entry for _, entry in entries])
    turns: list[_Turn] = []
    seen: set[str] = set()
    calls: set[str] = set()  # tool_use ids of the assistant messages read so far
    for where, entry in entries:
        if not _conversational(entry):
            continue
        uuid = _uuid(entry.get("uuid"))
        if uuid is not None and (uuid in seen or (uuid in abandoned and not _answers(entry, calls))):
            continue
        if uuid is not None:
            seen.add(uuid)
        message = entry.get("message")
        if not isinstance(message, Mapping):
            where.fail("message", f"this {entry['type']} event needs a message object, got {type(message).__name__}")
        where.check_tree(message, "message")
        role, api_id, content = message.get("role", entry["type"]), message.get("id"), message.get("content")
        last = turns[-1] if turns else None
        joins = last is not None and role == last.role == "assistant" and api_id is not None
        calls.update(_call_ids(content))
        if joins and last is not None and last.api_id == api_id:
            last.join(content)
            continue
        if content in ("", [], None):
            continue
        turns.append(_Turn(where, uuid, role, api_id, content))
    return _messages(turns)


def _call_ids(content: Any) -> set[str]:
    blocks = content if isinstance(content, list) else []
    return {b["id"] for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use" and _uuid(b.get("id"))}


def _answers(entry: Mapping[str, Any], calls: set[str]) -> bool:
    """A user event holding only results of calls already read: Claude Code hangs parallel results off the thread."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, list) or not content:
        return False
    return all(
        isinstance(b, Mapping) and b.get("type") == "tool_result" and _uuid(b.get("tool_use_id")) in calls
        for b in content
    )


def _uuid(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _abandoned(events: Sequence[Mapping[str, Any]]) -> set[str]:
    """The events on branches left behind: forks off the thread that leads to the last message (a rewind, an edit).

    The thread is followed from the last user or assistant event up its ``parentUuid`` links (``logicalParentUuid``
    across a compaction boundary). An event whose ancestors reach that thread without being on it is on a branch
    the session left; events whose ancestry never meets it (another root) are kept.
    """
    parent: dict[str, str | None] = {}
    last = None
    for event in events:
        uuid = _uuid(event.get("uuid"))
        if uuid is None:
            continue
        parent.setdefault(uuid, _uuid(event.get("parentUuid")) or _uuid(event.get("logicalParentUuid")))
        if _conversational(event):
            last = uuid
    thread: set[str] = set()
    node = last
    while node is not None and node not in thread:
        thread.add(node)
        node = parent.get(node)
    meets: dict[str, bool] = {}  # uuid -> its ancestry reaches the thread off it
    for start in parent:
        path: list[str] = []
        node, found = start, False
        while node is not None and node not in meets and node not in thread and node not in path:
            path.append(node)
            node = parent.get(node)
        if node is not None:
            found = node in thread or meets.get(node, False)
        for item in path:
            meets[item] = found
    return {uuid for uuid, off in meets.items() if off}


def _conversational(entry: Mapping[str, Any]) -> bool:
    return (
        entry.get("type") in ("user", "assistant")
        and entry.get("isSidechain") is not True
        and entry.get("isApiErrorMessage") is not True
    )


def _messages(turns: list[_Turn]) -> tuple[Message, ...]:
    out: list[Message] = []
    for index, turn in enumerate(turns):
        try:
            converted = messages_from_anthropic([{"role": turn.role, "content": turn.content}])
        except InvalidMessageError as exc:
            fail_from(turn.where, exc, path=("messages[0]", "message"))
        base = turn.uuid or f"transcript-{index}"
        out.extend(
            message.model_copy(update={"id": base if k == 0 else f"{base}#{k}"}) for k, message in enumerate(converted)
        )
    return tuple(out)
