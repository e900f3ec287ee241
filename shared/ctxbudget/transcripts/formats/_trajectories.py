"""Agent benchmark trajectories: SWE-agent ``.traj`` files, mini-swe-agent ``.traj.json`` files and tau-bench results.

**SWE-agent** (``{"history": [...], "trajectory": [...], "info": {...}}``). ``history`` is what the model saw. In the
classic format every action is an assistant message (``thought`` + ``action``) and its observation the next user
message; each action is read as a ``bash`` tool call (``{"command": action}``) with the thought as the assistant's
text and the observation as the tool result, as SWE-agent's function-calling mode sends them. The in-context
demonstration (``is_demo``, or ``message_type: "demonstration"``) is another task's trajectory and is left out. The
last action's observation (``submit``'s diff) is taken from ``trajectory`` when ``history`` ends without it.
History in the function-calling format (``tool_calls``, ``tool`` messages) is read as Chat Completions messages;
a file with only ``trajectory`` is read from its steps (each needs a string ``action``; a null ``observation``, from a
run stopped mid-command, leaves that call unanswered; a thought or observation of another type is refused). Ids:
``swe-system``, ``swe-000`` (the task), then ``swe-<n>a`` / ``swe-<n>t`` per step, calls ``call_swe_<n>``. The model
is the one the file's ``replay_config`` names (``agent.model.name``), when it has one.

**mini-swe-agent** (``{"info": {...}, "messages": [...], "trajectory_format": "mini-swe-agent-1.x"}``): Chat
Completions messages, each with an ``extra`` of mini-swe-agent's own (the raw response, parsed actions, cost);
``extra`` is left out of the message and each response's ``usage.prompt_tokens`` is the prompt size the file
reports for that request; the closing message (the submission: an ``exit`` message, or in version 1 a user message
holding ``info.submission``) is not read, since it is never sent. The model is ``info.config.model.model_name``.

**tau-bench** (``historical_trajectories/*.json``: a list of task results ``{"task_id", "reward", "info", "traj",
"trial"}``, or one of them). ``traj`` holds Chat Completions messages, read exactly; ``key`` picks the entry (its
index in the list, default 0; the report says which was read). Tool-call ids the trajectory reuses get a ``~2``,
``~3`` suffix so each call is answered once. Ids: ``tau-<index in traj>``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...errors import TranscriptError
from ...messages.message import Message, ToolCall
from ._items import Item, Reported
from ._providers import OpenAIReader, openai_stream
from ._stream import IndexedRows, ListRows, Rows
from ._where import Where

__all__ = [
    "is_mini_swe_agent",
    "is_swe_agent",
    "is_tau_bench",
    "mini_swe_agent_stream",
    "mini_swe_agent_submission",
    "swe_agent_model",
    "swe_agent_stream",
    "tau_bench_stream",
]

_CHAT_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")


def is_swe_agent(document: Any) -> bool:
    """A SWE-agent trajectory: an object with a ``history`` or ``trajectory`` list (and no ``messages``)."""
    return (
        isinstance(document, Mapping)
        and "messages" not in document
        and (isinstance(document.get("history"), list) or isinstance(document.get("trajectory"), list))
    )


def is_mini_swe_agent(document: Any) -> bool:
    """A mini-swe-agent trajectory: ``messages`` with its ``trajectory_format``, or its ``info.model_stats``."""
    if not isinstance(document, Mapping) or not isinstance(document.get("messages"), list):
        return False
    kind = document.get("trajectory_format")
    if isinstance(kind, str):
        return kind.startswith("mini-swe-agent")
    info = document.get("info")
    return isinstance(info, Mapping) and isinstance(info.get("model_stats"), Mapping) and "config" in info


def is_tau_bench(document: Any) -> bool:
    """A tau-bench result (an object with a ``traj`` list) or a list of them."""
    first = document[0] if isinstance(document, list) and document else document
    return isinstance(first, Mapping) and isinstance(first.get("traj"), list)


def _text_at(document: Any, *path: str) -> str | None:
    for key in path:
        if not isinstance(document, Mapping):
            return None
        document = document.get(key)
    return document if isinstance(document, str) and document else None


# -- SWE-agent -----------------------------------------------------------------------------------------------
def swe_agent_model(members: Mapping[str, Any]) -> str | None:
    """The model a SWE-agent trajectory's ``replay_config`` names (a JSON string or an object), if any."""
    config = members.get("replay_config")
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except (ValueError, RecursionError):
            return None
    return _text_at(config, "agent", "model", "name")


def swe_agent_stream(history: Rows | None, steps: IndexedRows | None, source: str) -> Iterator[Message]:
    """The messages of a SWE-agent trajectory (see the module docstring)."""
    if history is not None and history.head:
        if _function_calling(history):
            yield from openai_stream(_ChatRows(history, source))
        else:
            yield from _classic(history, steps, source)
        return
    if steps is not None and steps.head:
        yield from _from_steps(steps)
        return
    raise TranscriptError(
        f"{source}: a SWE-agent trajectory needs a non-empty 'history' or 'trajectory' list", field="history"
    )


def _function_calling(history: Rows) -> bool:
    for where, entry in history:
        where.check_tree(entry)
        if not isinstance(entry, Mapping) or not isinstance(entry.get("role"), str):
            where.fail("role", "every history entry needs a string role")
        if not _is_demo(entry) and (entry.get("tool_calls") or entry.get("role") == "tool"):
            return True
    return False


class _ChatRows:
    """A function-calling history as Chat Completions rows (SWE-agent's own keys left out, demos skipped)."""

    def __init__(self, history: Rows, source: str) -> None:
        self._history = history
        self._source = source

    @property
    def head(self) -> list[Any]:
        return [_chat_entry(e) for e in self._history.head if not _is_demo(e)]

    def __iter__(self) -> Iterator[tuple[Where, Any]]:
        index = 0
        for _, entry in self._history:
            if _is_demo(entry):
                continue
            yield Where(self._source, f"history[{index}]"), _chat_entry(entry)
            index += 1


def _is_demo(entry: Any) -> bool:
    return isinstance(entry, Mapping) and (entry.get("is_demo") is True or entry.get("message_type") == "demonstration")


def _chat_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A function-calling history entry as a Chat Completions message (SWE-agent adds its own keys)."""
    chat = {key: entry[key] for key in _CHAT_KEYS if key in entry}
    ids = entry.get("tool_call_ids")
    if entry.get("role") == "tool" and "tool_call_id" not in chat and isinstance(ids, list) and ids:
        chat["tool_call_id"] = ids[0]
    return chat


def _text(value: Any, where: Where, field: str) -> str:
    if isinstance(value, list):  # content parts
        value = "\n".join(str(p.get("text", "")) for p in value if isinstance(p, Mapping))
    if not isinstance(value, str):
        where.fail(field, f"expected a string, got {type(value).__name__}")
    return value


def _classic(history: Rows, steps: IndexedRows | None, source: str) -> Iterator[Message]:
    where = Where(source, "history")
    started = False
    users = 0
    pending: list[tuple[int, Mapping[str, Any]]] = []  # actions waiting for their observation
    number = extra = 0
    for index, (_, entry) in enumerate(history):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("role"), str):
            Where(source, f"history[{index}]").fail("role", "every history entry needs a string role")
        if _is_demo(entry):
            continue
        role = entry["role"]
        if not started and role == "system":
            yield Message(role="system", content=_text(entry.get("content"), where, "content"), id="swe-system")
        elif not started and role == "user":
            yield Message(
                role="user",
                content=_text(entry.get("content"), where, "content"),
                id="swe-000" if users == 0 else f"swe-000.{users}",
            )
            users += 1
        elif role == "assistant":
            started = True
            number += 1
            pending.append((number, entry))
        elif role == "user":
            observation = _text(entry.get("content"), where, "content")
            if pending:
                step, action = pending.pop(0)
                yield from _step(step, action, observation, where)
            else:
                yield Message(role="user", content=observation, id=f"swe-extra-{extra}")
                extra += 1
    last = steps.last() if steps is not None else None
    final = last.get("observation") if isinstance(last, Mapping) else None
    for step, action in pending:
        yield from _step(step, action, final if isinstance(final, str) else None, where)


def _step(number: int, entry: Mapping[str, Any], observation: str | None, where: Where) -> list[Message]:
    action, thought = entry.get("action"), entry.get("thought")
    if not isinstance(thought, str):
        thought = _text(entry.get("content", ""), where, "content")
    if not isinstance(action, str) or observation is None:  # nothing ran (or nothing came back): the reply as text
        return [
            Message(
                role="assistant", content=_text(entry.get("content", ""), where, "content"), id=f"swe-{number:03d}a"
            )
        ]
    call = ToolCall(id=f"call_swe_{number:03d}", name="bash", args={"command": action.strip()})
    return [
        Message(role="assistant", content=thought.strip(), tool_calls=(call,), id=f"swe-{number:03d}a"),
        Message(role="tool", content=observation, tool_call_id=call.id, name="bash", id=f"swe-{number:03d}t"),
    ]


def _from_steps(steps: Rows) -> Iterator[Message]:
    for number, (where, step) in enumerate(steps, start=1):
        where.check_tree(step)
        if not isinstance(step, Mapping):
            where.fail("step", f"expected an object, got {type(step).__name__}")
        yield from _trajectory_step(number, step, where)


def _trajectory_step(number: int, step: Mapping[str, Any], where: Where) -> list[Message]:
    """One ``trajectory`` step: the thought with the action as a ``bash`` call, then the observation as its result.

    The action must be a string (a step is the command it ran). A missing or null observation (the run stopped
    before the command returned) leaves the call unanswered, as the file does; any other non-string thought or
    observation is refused, so nothing the file holds is dropped.
    """
    thought, action, observation = step.get("thought"), step.get("action"), step.get("observation")
    if not isinstance(action, str):
        where.fail("action", f"a trajectory step's action must be a string, got {_kind(action)}")
    if thought is not None and not isinstance(thought, str):
        where.fail("thought", f"expected a string or null, got {_kind(thought)}")
    if observation is not None and not isinstance(observation, str):
        where.fail("observation", f"expected a string or null, got {_kind(observation)}")
    call = ToolCall(id=f"call_swe_{number:03d}", name="bash", args={"command": action.strip()})
    messages = [Message(role="assistant", content=(thought or "").strip(), tool_calls=(call,), id=f"swe-{number:03d}a")]
    if observation is not None:
        messages.append(
            Message(role="tool", content=observation, tool_call_id=call.id, name="bash", id=f"swe-{number:03d}t")
        )
    return messages


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


# -- mini-swe-agent ------------------------------------------------------------------------------------------
def mini_swe_agent_model(members: Mapping[str, Any]) -> str | None:
    """The model a mini-swe-agent trajectory names (``info.config.model.model_name``)."""
    return _text_at(members.get("info"), "config", "model", "model_name")


def mini_swe_agent_submission(members: Mapping[str, Any]) -> str | None:
    """What a mini-swe-agent run submitted (``info.submission``), if the file says."""
    return _text_at(members.get("info"), "submission")


def mini_swe_agent_stream(messages: Rows, submission: str | None = None) -> Iterator[Item]:
    """The messages without mini-swe-agent's ``extra``; each response's prompt tokens before its message.

    The run's end is not read: mini-swe-agent 2 writes it as an ``exit`` message, version 1 as a user message holding
    the ``submission`` (the diff the final command printed, after which the run stopped). Neither was sent.
    """
    reader = OpenAIReader()
    for where, entry in messages:
        if isinstance(entry, Mapping) and (
            entry.get("role") == "exit"
            or (submission is not None and entry.get("role") == "user" and entry.get("content") == submission)
        ):
            continue  # the run's end (the submission): never sent to the model
        extra = entry.get("extra") if isinstance(entry, Mapping) else None
        if isinstance(extra, Mapping):
            entry = {key: value for key, value in entry.items() if key != "extra"}  # noqa: PLW2901
            tokens = _prompt_tokens(extra)
            if tokens is not None and entry.get("role") == "assistant":
                yield Reported(tokens, f"{where.label}.extra.response.usage")
        yield reader.read(where, entry)


def _prompt_tokens(extra: Mapping[str, Any]) -> int | None:
    response = extra.get("response")
    usage = response.get("usage") if isinstance(response, Mapping) else None
    tokens = usage.get("prompt_tokens") if isinstance(usage, Mapping) else None
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0 else None


# -- tau-bench -----------------------------------------------------------------------------------------------
def tau_bench_stream(entries: IndexedRows, source: str, key: str | None, *, listed: bool) -> Iterator[Message]:
    """The ``traj`` of one tau-bench result (``key``: its index in a list of results, default 0)."""
    count = len(entries)
    if not count:
        raise TranscriptError(f"{source}: the file holds no tau-bench results", field="traj")
    index = _index(key, count, source)
    entry = entries.at(index)
    label = f"[{index}].traj" if listed else "traj"
    traj = entry.get("traj") if isinstance(entry, Mapping) else None
    if not isinstance(traj, list) or not traj:
        raise TranscriptError(f"{source}: {label} must be a non-empty list of messages", field="traj")
    rows = ListRows(source, label, _unique_calls(traj))
    for i, message in enumerate(openai_stream(rows)):
        yield message.model_copy(update={"id": f"tau-{i:03d}"})


def tau_bench_note(entries: IndexedRows, key: str | None, source: str) -> tuple[str, str | None]:
    """Which result is read, said plainly (the index and how to pick another), and the key."""
    count = len(entries)
    index = _index(key, count, source) if count else 0
    entry = entries.head[index] if index < len(entries.head) else None
    task = entry.get("task_id") if isinstance(entry, Mapping) else None
    about = f" (task_id {task})" if isinstance(task, (int, str)) else ""
    if key is None and count > 1:
        return f"read result 0{about} of the {count:,} in the file; --key N reads result N", "0"
    return f"read result {index}{about} of the {count:,} in the file", str(index)


def _index(key: str | None, count: int, source: str) -> int:
    if key is None:
        return 0
    try:
        index = int(key)
    except ValueError:
        raise TranscriptError(
            f"{source}: --key for a tau-bench file is an entry index, 0 to {count - 1}; got {key!r}", field="key"
        ) from None
    if not 0 <= index < count:
        raise TranscriptError(f"{source}: entry {index} does not exist: the file holds {count} results", field="key")
    return index


def _unique_calls(traj: Sequence[Any]) -> list[Any]:
    """``traj`` with reused tool-call ids made unique (``<id>~2``), each result pointing at the latest call."""
    seen: dict[str, int] = {}
    renamed: dict[str, str] = {}
    out: list[Any] = []
    for row in traj:
        if isinstance(row, Mapping) and isinstance(row.get("tool_calls"), list):
            calls = []
            for call in row["tool_calls"]:
                call_id = call.get("id") if isinstance(call, Mapping) else None
                if isinstance(call_id, str):
                    seen[call_id] = seen.get(call_id, 0) + 1
                    renamed[call_id] = call_id if seen[call_id] == 1 else f"{call_id}~{seen[call_id]}"
                    call = {**call, "id": renamed[call_id]}  # noqa: PLW2901 - the renamed copy replaces it
                calls.append(call)
            row = {**row, "tool_calls": calls}  # noqa: PLW2901 - the renamed copy replaces it
        elif isinstance(row, Mapping) and row.get("role") == "tool" and _str(row.get("tool_call_id")) in renamed:
            row = {**row, "tool_call_id": renamed[row["tool_call_id"]]}  # noqa: PLW2901
        out.append(row)
    return out


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
