"""Agent benchmark trajectories: SWE-agent ``.traj`` files and tau-bench results.

**SWE-agent** (``{"history": [...], "trajectory": [...], "info": {...}}``). ``history`` is what the model saw. In the
classic format every action is an assistant message (``thought`` + ``action``) and its observation the next user
message; each action is read as a ``bash`` tool call (``{"command": action}``) with the thought as the assistant's
text and the observation as the tool result, as SWE-agent's function-calling mode sends them. The in-context
demonstration (``is_demo``, or ``message_type: "demonstration"``) is another task's trajectory and is left out. The
last action's observation (``submit``'s diff) is taken from ``trajectory`` when ``history`` ends without it.
History in the function-calling format (``tool_calls``, ``tool`` messages) is read as Chat Completions messages;
a file with only ``trajectory`` is read from its steps. Ids: ``swe-system``, ``swe-000`` (the task), then
``swe-<n>a`` / ``swe-<n>t`` per step, calls ``call_swe_<n>``.

**tau-bench** (``historical_trajectories/*.json``: a list of task results ``{"task_id", "reward", "info", "traj",
"trial"}``, or one of them). ``traj`` holds Chat Completions messages, read exactly; ``key`` picks the entry (its
index in the list, default 0). Tool-call ids the trajectory reuses get a ``~2``, ``~3`` suffix so each call is
answered once. Ids: ``tau-<index in traj>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import TranscriptError
from ..messages import Message, ToolCall
from ._providers import Read, openai_rows
from ._where import Where

__all__ = ["is_swe_agent", "is_tau_bench", "swe_agent_document", "tau_bench_document"]

_CHAT_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")


def is_swe_agent(document: Any) -> bool:
    """A SWE-agent trajectory: an object with a ``history`` or ``trajectory`` list (and no ``messages``)."""
    return (
        isinstance(document, Mapping)
        and "messages" not in document
        and (isinstance(document.get("history"), list) or isinstance(document.get("trajectory"), list))
    )


def is_tau_bench(document: Any) -> bool:
    """A tau-bench result (an object with a ``traj`` list) or a list of them."""
    first = document[0] if isinstance(document, list) and document else document
    return isinstance(first, Mapping) and isinstance(first.get("traj"), list)


# -- SWE-agent -----------------------------------------------------------------------------------------------
def swe_agent_document(document: Mapping[str, Any], source: str) -> Read:
    """The messages of a SWE-agent trajectory (see the module docstring)."""
    where = Where(source, "history")
    history = document.get("history")
    steps = document.get("trajectory")
    where.check_tree(history, "history")
    Where(source, "trajectory").check_tree(steps, "trajectory")
    if isinstance(history, list) and history:
        entries = [m for m in history if not _is_demo(m)]
        for index, entry in enumerate(entries):
            if not isinstance(entry, Mapping) or not isinstance(entry.get("role"), str):
                Where(source, f"history[{index}]").fail("role", "every history entry needs a string role")
        if any(entry.get("tool_calls") or entry.get("role") == "tool" for entry in entries):
            rows = [(Where(source, f"history[{i}]"), _chat_entry(e)) for i, e in enumerate(entries)]
            return Read(openai_rows(rows))
        return Read(_classic(entries, steps if isinstance(steps, list) else [], where))
    if isinstance(steps, list) and steps:
        return Read(_from_steps(steps, Where(source, "trajectory")))
    raise TranscriptError(
        f"{source}: a SWE-agent trajectory needs a non-empty 'history' or 'trajectory' list", field="history"
    )


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


def _classic(entries: list[Mapping[str, Any]], steps: list[Any], where: Where) -> tuple[Message, ...]:
    system = next((e for e in entries if e["role"] == "system"), None)
    messages = (
        []
        if system is None
        else [Message(role="system", content=_text(system.get("content"), where, "content"), id="swe-system")]
    )
    start = next((i for i, e in enumerate(entries) if e["role"] == "assistant"), len(entries))
    users = [e for e in entries[:start] if e["role"] == "user"]
    messages += [
        Message(
            role="user", content=_text(e.get("content"), where, "content"), id="swe-000" if k == 0 else f"swe-000.{k}"
        )
        for k, e in enumerate(users)
    ]
    actions = [e for e in entries[start:] if e["role"] == "assistant"]
    observations = [_text(e.get("content"), where, "content") for e in entries[start:] if e["role"] == "user"]
    last = steps[-1] if steps and isinstance(steps[-1], Mapping) else {}
    if len(observations) < len(actions) and isinstance(last.get("observation"), str):
        observations += [last["observation"]] * (len(actions) - len(observations))
    for number, action in enumerate(actions, start=1):
        messages += _step(number, action, observations[number - 1] if number <= len(observations) else None, where)
    messages += [
        Message(role="user", content=text, id=f"swe-extra-{k}") for k, text in enumerate(observations[len(actions) :])
    ]
    return tuple(messages)


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


def _from_steps(steps: list[Any], where: Where) -> tuple[Message, ...]:
    messages: list[Message] = []
    for number, step in enumerate(steps, start=1):
        if not isinstance(step, Mapping):
            where.fail(f"trajectory[{number - 1}]", f"expected an object, got {type(step).__name__}")
        observation = step.get("observation")
        messages += _step(number, step, observation if isinstance(observation, str) else None, where)
    return tuple(messages)


# -- tau-bench -----------------------------------------------------------------------------------------------
def tau_bench_document(document: Any, source: str, key: str | None) -> Read:
    """The ``traj`` of one tau-bench result (``key``: its index in a list of results, default 0)."""
    entries = document if isinstance(document, list) else [document]
    if not entries:
        raise TranscriptError(f"{source}: the file holds no tau-bench results", field="traj")
    index = _index(key, len(entries), source)
    entry = entries[index]
    label = f"[{index}].traj" if isinstance(document, list) else "traj"
    traj = entry.get("traj") if isinstance(entry, Mapping) else None
    if not isinstance(traj, list) or not traj:
        raise TranscriptError(f"{source}: {label} must be a non-empty list of messages", field="traj")
    rows = [(Where(source, f"{label}[{i}]"), row) for i, row in enumerate(_unique_calls(traj))]
    messages = openai_rows(rows)
    renamed = tuple(m.model_copy(update={"id": f"tau-{i:03d}"}) for i, m in enumerate(messages))
    return Read(renamed, key=str(index) if isinstance(document, list) else None)


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
