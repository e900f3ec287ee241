"""Claude Code session JSONL (``~/.claude/projects/<project>/<session>.jsonl``), read as Claude Code sends it.

One event per line. ``type`` is ``user``, ``assistant``, ``system``, ``attachment``, ``summary``,
``file-history-snapshot``, ``queue-operation`` and a few more; a user or assistant event's ``message`` is an
Anthropic Messages message, and ``uuid``/``parentUuid`` thread the events. The file is read twice: first the
thread (ids and links only, a few hundred bytes an event), then the messages, one at a time. What is read:

* **the live chain**: the thread leading to the last message, up its ``parentUuid`` links: what Claude Code sends.
  A ``compact_boundary`` system event (Claude Code compacted the conversation) has no parent, so the chain starts at
  it: its continuation summary (the ``isCompactSummary`` user message) and what follows are sent; the same holds for
  a new conversation started in the same file (a plan carried into a cleared context). The results of parallel tool
  calls, which Claude Code hangs off each ``tool_use`` line beside the chain, are part of it; the messages a
  compaction kept (``compactMetadata.preservedMessages``) too;
* everything else (the history before a boundary, earlier conversations, branches a rewind or an edited prompt
  left) is yielded as :class:`~._items.Replaced`: kept and reported, never sent. A file whose events name no parent
  at all has no thread to follow: all of it is read as sent;
* sidechains (``isSidechain``: a subagent's conversation) are skipped; a file that holds only sidechain events (a
  subagent's own ``agent-*.jsonl``) is refused with the way to read it, ``include_sidechains=True``
  (``--include-sidechains``), which reads the sidechain as the thread;
* harness content is read as sent (Claude Code sends it to the model) and marked ``isMeta``, so a summary never
  takes it for the user's words: ``isMeta`` lines and user text made only of Claude Code's command tags
  (``<command-name>``, ``<local-command-stdout>``, ``<local-command-caveat>``, ...), counted in the head's notes;
  ``<system-reminder>`` blocks inside user text stay in it (the summary reads past them); API error notices
  (``isApiErrorMessage``) and the other event types never reach the model;
* consecutive assistant events of one API message (the same ``message.id``: Claude Code writes one line per content
  block) are joined into one assistant message; tool results inside user messages become tool messages, as
  :func:`~ctxbudget.providers.messages_from_anthropic` reads them; thinking blocks are kept and counted;
* the event's ``uuid`` is the message id (``<uuid>#1``, ... for further messages one event yields); a uuid seen
  before (a resumed session repeats lines) is read once;
* each API message's ``usage`` on the live chain is yielded as :class:`~._items.Reported` (``input_tokens`` +
  ``cache_creation_input_tokens`` + ``cache_read_input_tokens``: the whole prompt of that request), before the
  reply; the last assistant's ``message.model`` names the model (``<synthetic>`` placeholders are not models).

The file holds no system prompt or tool definitions (Claude Code sends its own), so the session starts with the
first user message; the report measures what Claude Code adds from the file's first usage figure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ...errors import InvalidMessageError, TranscriptError
from ...messages.message import Message
from ...providers import messages_from_anthropic
from ._claude_harness import strip_harness_tags
from ._items import Head, Item, Replaced, Reported
from ._stream import Rows
from ._where import Where, fail_from

__all__ = ["EVENT_TYPES", "claude_code_stream", "is_claude_code_event"]

EVENT_TYPES = frozenset(
    {"user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation", "attachment", "progress"}
)
"""Event types that mark a Claude Code session line (with its ``uuid``/``sessionId``/``leafUuid`` fields)."""
_EVENT_KEYS = frozenset({"uuid", "parentUuid", "sessionId", "leafUuid", "isSidechain", "messageId"})
_NOT_A_MODEL = "<synthetic>"


def is_claude_code_event(row: Any) -> bool:
    """Whether ``row`` is a line of a Claude Code session (an event type and one of the session's id fields)."""
    if not isinstance(row, Mapping):
        return False
    kind = row.get("type")
    return isinstance(kind, str) and kind in EVENT_TYPES and bool(_EVENT_KEYS.intersection(row))


def _uuid(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class _Thread:
    """Pass one: the events' links (ids only), the live chain and the compaction boundaries."""

    def __init__(self, rows: Rows, source: str, include_sidechains: bool) -> None:
        self.include_sidechains = include_sidechains
        self.parent: dict[str, str | None] = {}
        self.boundaries: list[str] = []
        self.models: dict[str, tuple[int, str, str]] = {}  # assistant uuid -> (row, model, where)
        self.preserved: set[str] = set()
        last: str | None = None
        main = side = 0
        names: dict[str, str] = {}  # one str object per distinct model name
        for row, (where, entry) in enumerate(rows):
            if not isinstance(entry, Mapping):
                where.fail("event", f"expected a JSON object, got {type(entry).__name__}")
            uuid = _uuid(entry.get("uuid"))
            if uuid is None:
                continue
            self._link(uuid, entry)
            if not self.conversational(entry, sidechains=True):
                continue
            if entry.get("isSidechain") is True:
                side += 1
                if not include_sidechains:
                    continue
            else:
                main += 1
            last = uuid
            model = _model(entry)
            if model is not None:
                self.models[uuid] = (row, names.setdefault(model, model), where.label)
        if main == 0 and side and not include_sidechains:
            raise TranscriptError(
                f"{source}: every message is on a sidechain (isSidechain: true, {side:,} events): this is a "
                "subagent's own transcript (agent-*.jsonl); read it with --include-sidechains",
                field="isSidechain",
            )
        linked = any(parent is not None for parent in self.parent.values())
        self.flat = not linked  # no event names a parent: no thread to follow, every message is sent
        self.live = self._chain(last) | self.preserved

    def _link(self, uuid: str, entry: Mapping[str, Any]) -> None:
        self.parent.setdefault(uuid, _uuid(entry.get("parentUuid")))
        if entry.get("type") == "system" and entry.get("subtype") == "compact_boundary":
            self.boundaries.append(uuid)
            metadata = entry.get("compactMetadata")
            kept = metadata.get("preservedMessages") if isinstance(metadata, Mapping) else None
            uuids = kept.get("uuids") if isinstance(kept, Mapping) else None
            if isinstance(uuids, list):
                self.preserved.update(u for u in uuids if isinstance(u, str))

    def _chain(self, last: str | None) -> set[str]:
        """The events from ``last`` up its ``parentUuid`` links to its root: what Claude Code sends.

        A ``compact_boundary`` has no parent (its ``logicalParentUuid`` only records the history before it), and
        neither does the first event of a new conversation in the same file (a plan carried into a cleared
        context): the chain stops there.
        """
        chain: set[str] = set()
        node = last
        while node is not None and node not in chain:
            chain.add(node)
            node = self.parent.get(node)
        return chain

    def conversational(self, entry: Mapping[str, Any], *, sidechains: bool = False) -> bool:
        """A user or assistant event that reaches the model (sidechains only when asked)."""
        return (
            entry.get("type") in ("user", "assistant")
            and (sidechains or self.include_sidechains or entry.get("isSidechain") is not True)
            and entry.get("isApiErrorMessage") is not True
        )

    def last_model(self) -> tuple[str, str] | None:
        """The model of the last assistant message on the live chain, with where the file names it."""
        found = [self.models[uuid] for uuid in self.live if uuid in self.models]
        if not found:
            return None
        _, model, where = max(found)
        return model, where


def _model(entry: Mapping[str, Any]) -> str | None:
    message = entry.get("message")
    model = message.get("model") if entry.get("type") == "assistant" and isinstance(message, Mapping) else None
    return model if isinstance(model, str) and model and model != _NOT_A_MODEL else None


def claude_code_stream(
    rows: Rows, source: str, *, include_sidechains: bool = False
) -> tuple[Head, Callable[[], Iterator[Item]]]:
    """The head and items of a Claude Code session (see the module docstring).

    Raises:
        TranscriptError: a line that is not an object, an event whose ``message`` is malformed (line and field
            named), or a file of sidechain events only (unless ``include_sidechains``).
    """
    thread = _Thread(rows, source, include_sidechains)
    head = Head(format="claude-code", source=source, jsonl=True)
    found = thread.last_model()
    if found is not None:
        head.model, head.model_from = found[0], f"message.model of {found[1]}"
    if thread.boundaries:
        count = len(thread.boundaries)
        head.notes.append(
            f"Claude Code compacted this session {count:,} time{'s' if count != 1 else ''}: what it sends starts at "
            "its continuation summary; the messages before are history, kept but not sent"
        )
    if include_sidechains:
        head.notes.append("sidechain events (isSidechain) are read as the thread (--include-sidechains)")
    return head, lambda: _items(rows, thread, head)


class _Turn:
    """One API message: the events it was written as, joined."""

    def __init__(
        self, where: Where, uuid: str | None, *, role: str, api_id: Any, content: Any, live: bool, meta: bool = False
    ) -> None:
        self.where = where
        self.uuid = uuid
        self.role = role
        self.api_id = api_id
        self.content = content
        self.live = live
        self.meta = meta  # harness text (isMeta, command tags only): sent, but not the person's words
        self._own = False  # whether self.content is a list of this turn's own (joined lines extend it)

    def continued_by(self, role: str, api_id: Any) -> bool:
        """Whether an event of ``role`` and API message id ``api_id`` is another line of this assistant message."""
        return role == self.role == "assistant" and api_id is not None and self.api_id == api_id

    def join(self, content: Any) -> None:
        """Append the content blocks of another event of the same API message (one list, extended in place)."""
        if not isinstance(self.content, list) or not self._own:
            self.content = _blocks(self.content)  # a copy of its own: the event's list is never changed
            self._own = True
        self.content.extend(_blocks(content))


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else [content]


def _items(rows: Rows, thread: _Thread, head: Head) -> Iterator[Item]:
    reader = _Reader(thread)
    for where, entry in rows:
        yield from reader.read(where, entry)
    yield from reader.flush()
    if reader.meta:
        head.notes.append(
            f"{reader.meta:,} user line{'s' if reader.meta != 1 else ''} of Claude Code harness content (isMeta, "
            "command tags only) kept as sent and marked isMeta: not read as the user's statements"
        )


class _Reader:
    """Pass two: the events in file order, as messages (live or history), usage figures between them.

    An assistant API message stays open while its lines come in: Claude Code writes one line per content block and
    may write a block's tool result before the message's next block. The results read meanwhile wait
    (:attr:`results`) and follow the whole message, as the request Claude Code sends has them.
    """

    def __init__(self, thread: _Thread) -> None:
        self.thread = thread
        self.seen: set[str] = set()
        self.calls: set[str] = set()  # tool_use ids of the live assistant messages read so far
        self.reported: set[str | None] = set()
        self.pending: _Turn | None = None
        self.results: list[_Turn] = []
        self.index = 0
        self.meta = 0

    def read(self, where: Where, entry: Mapping[str, Any]) -> Iterator[Item]:
        """The items one event gives: the previous message when this one starts another, a usage figure."""
        uuid = _uuid(entry.get("uuid"))
        if not self.thread.conversational(entry) or not self._first_time(uuid):
            return
        message = entry.get("message")
        if not isinstance(message, Mapping):
            where.fail("message", f"this {entry['type']} event needs a message object, got {type(message).__name__}")
        where.check_tree(message, "message")
        role, api_id = message.get("role", entry["type"]), message.get("id")
        content = message.get("content")
        meta = role == "user" and (entry.get("isMeta") is True or _without_harness(content) is None)
        self.meta += meta and content not in ("", [], None)
        pending = self.pending
        if pending is not None and pending.continued_by(role, api_id):  # another block of the open message
            if pending.live:
                self.calls.update(_call_ids(content))
            pending.join(content)
            return
        thread = self.thread
        live = uuid is None or thread.flat or uuid in thread.live or (role == "user" and _answers(content, self.calls))
        if role == "assistant":
            if live:
                self.calls.update(_call_ids(content))
                yield from self._usage(where, entry, message, api_id)
        elif pending is not None and pending.role == "assistant" and _only_results(content):
            self.results.append(_Turn(where, uuid, role=role, api_id=api_id, content=content, live=live))
            return
        if content in ("", [], None):
            return
        yield from self.flush()
        self.pending = _Turn(where, uuid, role=role, api_id=api_id, content=content, live=live, meta=meta)

    def _first_time(self, uuid: str | None) -> bool:
        """Not a line repeated (a resumed session repeats lines)."""
        if uuid is None:
            return True
        if uuid in self.seen:
            return False
        self.seen.add(uuid)
        return True

    def _usage(self, where: Where, entry: Mapping[str, Any], message: Mapping[str, Any], api_id: Any) -> Iterator[Item]:
        usage = _prompt_tokens(message)
        once = api_id if isinstance(api_id, str) else None  # lines of one API message share its usage
        if usage is None or (once is not None and once in self.reported) or _model(entry) is None:
            return
        self.reported.add(once)
        yield from self.flush()
        yield Reported(usage, where.label)

    def flush(self) -> Iterator[Message | Replaced]:
        """The open message's messages, then the results that waited for it."""
        turns = [self.pending, *self.results] if self.pending is not None else list(self.results)
        self.pending, self.results = None, []
        for turn in turns:
            yield from self._converted(turn)

    def _converted(self, turn: _Turn) -> Iterator[Message | Replaced]:
        try:
            converted = messages_from_anthropic([{"role": turn.role, "content": turn.content}])
        except InvalidMessageError as exc:
            fail_from(turn.where, exc, path=("messages[0]", "message"))
        base = turn.uuid or f"transcript-{self.index}"
        self.index += 1
        for k, message in enumerate(converted):
            update: dict[str, Any] = {"id": base if k == 0 else f"{base}#{k}"}
            if turn.meta:
                update["metadata"] = {**message.metadata, "isMeta": True}
            renamed = message.model_copy(update=update)
            yield renamed if turn.live else Replaced(renamed)


def _only_results(content: Any) -> bool:
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content)
    )


def _prompt_tokens(message: Mapping[str, Any]) -> int | None:
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        return None
    parts = [usage.get(key) for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    if not any(isinstance(part, int) and not isinstance(part, bool) for part in parts):
        return None
    return sum(part for part in parts if isinstance(part, int) and not isinstance(part, bool) and part > 0)


def _without_harness(content: Any) -> Any:
    """User content without Claude Code's harness text; ``None`` when nothing of the user's is left."""
    if isinstance(content, str):
        text = strip_harness_tags(content)
        return text if text.strip() else None
    if not isinstance(content, list):
        return content
    kept = []
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
            text = strip_harness_tags(block["text"])
            if text.strip():
                kept.append({**block, "text": text} if text != block["text"] else block)
            continue
        kept.append(block)
    return kept or None


def _call_ids(content: Any) -> set[str]:
    blocks = content if isinstance(content, list) else []
    return {b["id"] for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use" and _uuid(b.get("id"))}


def _answers(content: Any, calls: set[str]) -> bool:
    """User content holding only results of live calls: Claude Code hangs parallel results beside the chain."""
    if not isinstance(content, list) or not content:
        return False
    return all(
        isinstance(b, Mapping) and b.get("type") == "tool_result" and _uuid(b.get("tool_use_id")) in calls
        for b in content
    )
