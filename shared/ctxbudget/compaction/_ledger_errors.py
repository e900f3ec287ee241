"""How the ledger merges a call's runs: failures counted or kept first, resolved by a success, outputs that changed.

Several calls that failed the same way (three debug scripts that each hit ``PolynomialError: Piecewise generators do
not make sense``) are one bullet naming each call: one failure, met three times, not three.

A model that sees one failure retries the call; one that sees it failed four times with the same arguments and the
same error changes them (``... (failed 4 times)``). A call that failed one way and then another says what the work
got past (``(first: ModuleNotFoundError ...)``). An error whose call (or file) later succeeded is kept, marked
:data:`~ctxbudget.compaction._ledger_text.RESOLVED` (it explains what was tried). A reproduction run before and after
a fix prints two things: its latest output is the state, its first says what the fix changed (``python
reproduce.py -> ok: Method in send: 'GET' (first: Method in send: "B'GET'")``).
"""

from __future__ import annotations

import json
import re

from ._ledger_text import RESOLVED
from ._salient import Salient
from .textscan import clip

__all__ = ["TIMES", "repeated", "rerun", "resolve_errors", "same_failures"]

_NOT_CORE = re.compile(r"^(?:-{1,2}[\w-]+(?:=\S*)?|\d?>>?&?\S*|<\S*)$")
"""A flag (``--short``, ``-n``) or a redirection (``2>&1``, ``>/dev/null``) of a command line."""
_FIRST = re.compile(r" \(first: ([^()]{1,200}(?:\([^()]{0,80}\)[^()]{0,100})*)\)$")
"""How an error bullet names the different way its call failed first (read back from an earlier ledger)."""
_FIRST_CHARS = 120
_OK = " -> ok: "
_RERUN_CHARS = 100
"""Longest output of a command's run, first or latest, that a rerun names beside the latest (a script's result)."""
TIMES = " (failed {} times)"
"""How an error bullet says how many times its call failed the same way."""
_REPEATS = re.compile(r" \(failed (\d{1,6}) times\)$")
"""How an error bullet says its call failed the same way more than once (read back from an earlier ledger)."""


def repeated(earlier: Salient, later: Salient) -> Salient:
    """``later``, saying how its call failed before ``earlier``'s way: how many times, or how it failed first.

    A model that sees one failure retries the call; one that sees it failed four times with the same arguments and
    the same error changes them. A call that failed one way and then another (``No module named 'marshmallow'``,
    then, once installed, an ``AttributeError``) says what the work got past. An error resolved since is not
    carried on.
    """
    if RESOLVED in earlier.text:
        return later
    before, first_before, times_before = _failure_parts(earlier.text)
    after, first_after, times_after = _failure_parts(later.text)
    if before == after:
        first, times = first_before or first_after, times_before + times_after
    else:
        first, times = first_before or before.partition(" -> ")[2], times_after
    shown = f" (first: {clip(first, _FIRST_CHARS)})" if first and first != after.partition(" -> ")[2] else ""
    return later._replace(text=f"{after}{shown}{TIMES.format(times) if times > 1 else ''}")


def rerun(earlier: Salient, later: Salient) -> Salient:
    """``later``, a command's latest successful run, naming what ``earlier`` (its first run) printed when that differs.

    Only a run that succeeded both times and printed something short each time: a listing's or a file's contents
    changed by an edit are the edit's news, and a long output's first excerpt would cost more than it says.
    """
    before, first_before, _ = _failure_parts(earlier.text)
    after, first_after, _ = _failure_parts(later.text)
    _, ok_before, printed_before = before.partition(_OK)
    _, ok_after, printed_after = after.partition(_OK)
    first = first_before or (printed_before if ok_before else None)
    if not ok_after or first is None or first_after is not None:
        return later
    if first == printed_after or len(first) > _RERUN_CHARS or len(printed_after) > _RERUN_CHARS or " … " in first:
        return later
    return later._replace(text=f"{after} (first: {first})")


def _failure_parts(text: str) -> tuple[str, str | None, int]:
    """An error bullet's call and failure, the first failure it names (if any), and its count (1 when none)."""
    match = _REPEATS.search(text)
    times = int(match.group(1)) if match else 1
    text = text[: match.start()] if match else text
    first = _FIRST.search(text)
    return (text[: first.start()], first.group(1), times) if first else (text, None, times)


def _command_core(key: str) -> str:
    """A command's key without its flags, redirections and later pipeline stages: what was run.

    ``git status --short 2>&1 | head`` and ``git status 2>&1`` are both ``bash: git status``.
    """
    first = key.split(" | ", 1)[0]
    return " ".join(word for word in first.split() if not _NOT_CORE.match(word))


def resolve_errors(items: list[Salient]) -> list[Salient]:
    """An error whose call (or file) later succeeded is kept, marked resolved (it explains what was tried).

    A command counts as succeeding later when the same command ran again with other flags or output plumbing.
    """
    succeeded: dict[str, int] = {}
    for item in items:
        ok = " -> ok" in item.text or (item.kind == "artifact" and "FAILED" not in item.text)
        if item.kind in ("command", "call", "artifact") and item.key and ok:
            for key in {item.key, _command_core(item.key)} if item.kind == "command" else {item.key}:
                succeeded[key] = max(item.order, succeeded.get(key, -(10**9)))
    out = []
    for item in items:
        key = item.key or ""
        later = max(
            succeeded.get(key, -(10**9)),
            succeeded.get(key.split(" ", 1)[-1], -(10**9)),
            succeeded.get(_command_core(key), -(10**9)) if " " in key else -(10**9),
        )
        resolved = item.kind == "error" and later > item.order and RESOLVED not in item.text
        out.append(item._replace(text=item.text + RESOLVED) if resolved else item)
    return out


_SHOWN_CALLS = 4
"""Most calls one bullet of a shared failure names (the rest are counted)."""
_CALL_CHARS = 70
"""Longest call one bullet of a shared failure names (a longer one, a script given inline, keeps its own bullet)."""
_JSON_CALL_CHARS = 2_000
"""Longest JSON arguments read to show a later call of a shared failure by the fields it changes."""


def same_failures(items: list[Salient]) -> list[Salient]:
    """Errors of different calls with the same failure as one bullet, at the latest one's place, naming each call.

    ``bash: python a.py; python b.py -> PolynomialError: ...``: resolved when each of them was.
    """
    groups: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        if item.kind == "error" and " -> " in item.text:
            failure = item.text.partition(" -> ")[2].removesuffix(RESOLVED)
            groups.setdefault(failure, []).append(index)
    merged: dict[int, Salient | None] = {}
    for failure, indices in groups.items():
        if len(indices) < 2:  # one call: nothing shared
            continue
        calls = list(dict.fromkeys(items[i].text.partition(" -> ")[0] for i in indices))
        changed = _changed_fields(calls)
        if changed is not None:
            calls = changed
        elif any(len(call) > _CALL_CHARS for call in calls):
            continue  # a script given inline is its own bullet: cut, it would say less than the call it names
        tools = {call.partition(": ")[0] for call in calls}
        if len(tools) == 1 and all(": " in call for call in calls):  # "bash: a; b", the tool named once
            tool = tools.pop()
            calls = [f"{tool}: {calls[0].partition(': ')[2]}", *(call.partition(": ")[2] for call in calls[1:])]
        more = len(calls) - _SHOWN_CALLS
        named = "; ".join(calls[:_SHOWN_CALLS]) + (f"; and {more} more" if more > 0 else "")
        resolved = all(items[i].text.endswith(RESOLVED) for i in indices)
        last = items[indices[-1]]
        merged[indices[-1]] = last._replace(text=f"{named} -> {failure}{RESOLVED if resolved else ''}")
        merged.update(dict.fromkeys(indices[:-1]))
    if not merged:
        return items
    kept = (merged.get(index, item) for index, item in enumerate(items))  # None: merged into a later bullet
    return [item for item in kept if item is not None]


def _changed_fields(calls: list[str]) -> list[str] | None:
    """Calls of one tool with JSON arguments, the first whole and each later one by the fields it changes.

    ``return_delivered_order_items {"order_id":"#W3792453","item_ids":[...],"payment_method_id":"paypal_3024827"}``
    failing three times the same way is one failure of three orders: the later calls differ in their order and items,
    not in their payment method. A later call that drops an argument, or changes none as JSON reads it (``1`` and
    ``1.0`` are two values here, as they were two texts), is shown whole. ``None`` unless every call is ``tool {...}``
    of the same tool, its arguments whole JSON of at most :data:`_JSON_CALL_CHARS` (read back from a summary a model
    wrote, a call can be anything).
    """
    parts = [call.partition(" ") for call in calls]
    if len({tool for tool, _, _ in parts}) != 1:
        return None
    if not all(rest.startswith("{") and len(rest) <= _JSON_CALL_CHARS for _, _, rest in parts):
        return None
    try:
        arguments = [json.loads(rest) for _, _, rest in parts]
        if not all(isinstance(given, dict) for given in arguments):
            return None
        first = {key: _canonical(value) for key, value in arguments[0].items()}
        shown = [calls[0]]
        for (_, _, rest), given in zip(parts[1:], arguments[1:], strict=True):
            changed = {key: value for key, value in given.items() if first.get(key) != _canonical(value)}
            whole = not changed or any(key not in given for key in first)
            shown.append(rest if whole else json.dumps(changed, ensure_ascii=False, separators=(",", ":")))
    except (ValueError, RecursionError):
        return None  # clipped, no JSON, or nested past what the parser reads: each call stays as it was shown
    return shown


def _canonical(value: object) -> str:
    """``value`` as JSON text, keys sorted: ``true``, ``1`` and ``1.0`` stay three values (Python's ``==`` says one)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
