"""The agent's own task list: Claude Code's ``TodoWrite``, ``TaskCreate`` and ``TaskUpdate``, Codex's ``update_plan``.

An agent that tracks its work writes a plan and then marks each step in progress and done. Shown as calls, that is
a run of bullets saying nothing (``TaskUpdate {"taskId":"3","status":"completed"} -> ok: Updated task #3 status``:
14 of a real session's 16 command bullets at 30%); read as a plan it says what is done and what is next:

* a whole list (``TodoWrite``, ``update_plan``) is one open item, ``Plan: ...``, keyed ``plan``: the latest replaces
  the earlier ones;
* a task created on its own (``TaskCreate``, numbered by its result: ``Task #3 created successfully: ...``) is an
  open item ``Task #3: <subject>`` keyed ``task #3``, and an update of it (``TaskUpdate``) an item of the same key
  that the ledger merges with it (:func:`merge_task`): the subject from the first, the status from the latest; a
  completed task is a finding, ``Done: task #3: <subject>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

from ..messages.message import Message, ToolCall
from .textscan import clip

__all__ = ["PLAN_KEY", "PlanItem", "is_plan_call", "merge_task", "plan_item", "task_key"]

PLAN_KEY = "plan"
"""The key of a whole task list (the latest replaces the earlier ones)."""
_LIST_TOOLS = frozenset({"todowrite", "todo_write", "update_plan", "write_todos"})
_CREATE_TOOLS = frozenset({"taskcreate", "task_create"})
_UPDATE_TOOLS = frozenset({"taskupdate", "task_update"})
_CREATED = re.compile(r"\bTask #(\d{1,6})\b")
_TASK = re.compile(
    r"^(?:Done: t|T)ask #(\d{1,6})(?:: (.*?))?(?: \((in progress|pending|blocked|cancelled|deleted)\))?$", re.DOTALL
)
"""A task's item as :func:`_task` writes it: its number, its subject (when known) and its status (when not pending)."""
_DONE = frozenset({"completed", "complete", "done"})
_DROPPED = frozenset({"deleted", "cancelled", "canceled"})
"""A task taken off the list: not open, history (a note) of what was given up."""
_CHARS = 300

PlanItem = tuple[Literal["open", "finding", "note"], str, str]
"""An item of the plan: its kind, its text and its key."""


def is_plan_call(call: ToolCall | None) -> bool:
    """``call`` writes to the agent's own task list (its result says only that it did)."""
    if call is None:
        return False
    name = call.name.lower()
    return name in _LIST_TOOLS or name in _CREATE_TOOLS or name in _UPDATE_TOOLS


def task_key(number: str) -> str:
    """The key of task ``number``."""
    return f"task #{number}"


def plan_item(call: ToolCall, result: Message | None) -> PlanItem | None:
    """The plan item ``call`` (answered by ``result``) writes, or ``None`` (not a plan call, or nothing readable)."""
    name = call.name.lower()
    if name in _LIST_TOOLS:
        steps = call.args.get("todos", call.args.get("plan"))
        return _whole_list(steps) if isinstance(steps, Sequence) and not isinstance(steps, str) else None
    if name in _CREATE_TOOLS:
        subject = call.args.get("subject") or call.args.get("title") or call.args.get("content")
        created = _CREATED.search(result.text) if result is not None else None
        if not isinstance(subject, str) or created is None:
            return None
        number = created.group(1)
        return "open", clip(f"Task #{number}: {' '.join(subject.split())}", _CHARS), task_key(number)
    if name in _UPDATE_TOOLS:
        number, status = call.args.get("taskId", call.args.get("task_id")), call.args.get("status")
        if not isinstance(number, (str, int)) or not isinstance(status, str):
            return None
        return _task("open", str(number), None, status)
    return None


def _whole_list(steps: Sequence[object]) -> PlanItem | None:
    """One item for a whole list: what is in progress, what is next, and how many are done."""
    states: list[tuple[str, str]] = []
    for step in steps:
        if isinstance(step, Mapping):
            text = step.get("content") or step.get("step") or step.get("title")
            status = step.get("status", "pending")
            if isinstance(text, str) and text.strip() and isinstance(status, str):
                states.append((" ".join(text.split()), status.lower()))
    if not states:
        return None
    doing = [text for text, status in states if status == "in_progress"]
    pending = [text for text, status in states if status not in _DONE and status != "in_progress"]
    done = sum(1 for _, status in states if status in _DONE)
    parts = [f"now {'; '.join(doing)}" if doing else "", f"next {'; '.join(pending)}" if pending else ""]
    said = "; ".join(part for part in parts if part) or "all steps done"
    return "open", clip(f"Plan ({done} of {len(states)} done): {said}", _CHARS), PLAN_KEY


def _task(kind: Literal["open", "finding"], number: str, subject: str | None, status: str) -> PlanItem:
    status = status.replace("_", " ").lower()
    if status in _DONE:
        return "finding", clip(f"Done: task #{number}: {subject or ''}".rstrip(": "), _CHARS), task_key(number)
    shown = f"Task #{number}: {subject}" if subject else f"Task #{number}"
    text = clip(f"{shown} ({status})" if status != "pending" else shown, _CHARS)
    return ("note" if status in _DROPPED else kind), text, task_key(number)


def merge_task(earlier_text: str, later_text: str, key: str) -> PlanItem:
    """One item for a task: its subject from whichever text names it (the earlier first), its status the later's."""
    first, last = _TASK.match(earlier_text), _TASK.match(later_text)
    number = key.removeprefix("task #")
    subject = (last.group(2) if last else None) or (first.group(2) if first else None)
    if later_text.startswith("Done: "):
        status = "completed"
    else:
        status = (last.group(3) if last and last.group(3) else None) or "pending"
    return _task("open", number, subject, status)
