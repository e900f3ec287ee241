"""The ledger's text form: its sections, the section of each kind of item, and how a ledger is written and read back.

A ledger is Markdown: one ``## <section>`` heading per section that has bullets (:data:`LEDGER_SECTIONS`, in order),
one ``- <item>`` bullet per item; the statements read out of a paste are bullets nested under the paste's own
(:data:`NESTED`), so they are read back together. The current task is written ``Now: ...``, an earlier request that
nothing answered yet ``Asked: ...``, one the conversation went on from (work followed it) ``Earlier: ...``; an error
a later success answered ends with :data:`RESOLVED`. :func:`parse_ledger` reads such a text back into items with the
same readers, so a ledger survives snapshots and is cumulative (a summary is never summarized inside another).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence

from ._records import item_tokens, join_fields, split_fields
from ._salient import SalienceKind, Salient, item_key
from .memo import ReadMemo
from .statements import classify

__all__ = [
    "LEDGER_SECTIONS",
    "NESTED",
    "NOTHING_LISTED",
    "PASTED_STATEMENTS",
    "RESOLVED",
    "SECTION_OF",
    "STATEMENTS",
    "SUPERSEDED",
    "parse_ledger",
    "read_from_paste",
    "render_ledger",
]

NOTHING_LISTED = "(no room left)"
"""A ledger's one line when no item fits the room it has (a newest turn that fills the window): not "(none)" under
"Open items", which said the work had nothing open. As short as that was: a line of a tight budget."""
_NOTHING = frozenset({NOTHING_LISTED, "(none)"})
"""Lines that list nothing (``(none)``: how an earlier version said it), skipped when a summary is read back."""

LEDGER_SECTIONS = (
    "Task",
    "User facts and constraints",
    "Decisions",
    "Findings",
    "Files and artifacts",
    "Commands and results",
    "Errors",
    "Open items",
    "Latest request",
    "Notes",
)
"""The sections of a ledger, in order. ``Notes`` holds free text from a summary written elsewhere (untrusted)."""

SECTION_OF: dict[SalienceKind, str] = {
    "task": "Task",
    "constraint": "User facts and constraints",
    "preference": "User facts and constraints",
    "fact": "User facts and constraints",
    "paste": "User facts and constraints",
    "decision": "Decisions",
    "finding": "Findings",
    "artifact": "Files and artifacts",
    "command": "Commands and results",
    "call": "Commands and results",
    "figure": "Commands and results",
    "error": "Errors",
    "open": "Open items",
    "request": "Task",
    "question": "Task",
    "note": "Notes",
}
"""The section each kind of item is shown in."""
STATEMENTS = frozenset({"fact", "constraint", "preference", "paste"})
"""The kinds of the user's statements (what supersession replaces and a capitals label may be dropped from)."""
PASTED_STATEMENTS = frozenset({"fact", "constraint", "preference"})
"""The statements read out of a pasted message besides its paste bullet, written nested under that bullet."""
NESTED = "  - "
"""How a statement read out of a paste is written: a bullet nested under the paste's own."""
_UNDER = "\x00"
"""Marks a nested bullet while a ledger is written (never in a bullet's text: texts are printable lines)."""
_HEADING = re.compile(r"^#{1,4}\s+(\S.*)$")
_LEGACY = {  # sections of summaries written before this ledger (snapshots keep them)
    "Decisions and facts": "Decisions",
    "Files and commands": "Commands and results",
    "Goal": "Task",
}
_NOW = "Now: "
_ASKED = "Asked: "
_EARLIER = "Earlier: "
_ORIGIN = "Origin: "
RESOLVED = " (resolved later)"
"""Marks an error whose call or file later succeeded."""
SUPERSEDED = "(superseded) "
"""Marks a statement a later one corrected that still holds a value the correction does not restate."""

_KIND_OF_SECTION: dict[str, SalienceKind] = {
    "Decisions": "decision",
    "Findings": "finding",
    "Files and artifacts": "artifact",
    "Errors": "error",
    "Open items": "open",
    "Latest request": "request",
    "Notes": "note",
}


def _kind_for(section: str, text: str) -> SalienceKind | None:
    """The kind of a bullet read back from ``section`` (``None``: skip it)."""
    if section == "User facts and constraints":
        kind = "paste" if text.startswith("User pasted ") else classify(text)
        return kind if kind in STATEMENTS else "fact"
    if section == "Task":
        # the task then ("Now: ...") is a request like any other now; a newer one makes it "Asked"
        return None if text.startswith(_ORIGIN) else "request"
    if section == "Commands and results":
        if " -> " not in text:
            return "figure"
        return "command" if text.split(" -> ", 1)[0].split(":", 1)[0].count(" ") == 0 and ": " in text else "call"
    return _KIND_OF_SECTION.get(section, "note")


def _remembered_kind(memo: ReadMemo, section: str, text: str) -> SalienceKind | None:
    """:func:`_kind_for`, remembered: a bullet kept from summary to summary is classified once."""
    return memo.get(("kind", section, text), lambda: _kind_for(section, text), lambda _kind: len(text))


def parse_ledger(summary: str | None, *, memo: ReadMemo | None = None) -> list[Salient]:
    """The items of an earlier summary, oldest first, ordered before anything new (negative ``order``).

    Bullets under an unknown heading, and free text outside any heading (a summary another summarizer wrote), are
    read as notes: they never enter a section a ledger trusts (facts, decisions, errors ...). With ``memo``, a
    summary read before is not read again.
    """
    if not summary:
        return []
    if memo is not None:
        return list(
            memo.get(("ledger", summary), lambda: tuple(_parse(summary, memo)), lambda _items: 2 * len(summary))
        )
    return _parse(summary)


_PLACES = ("earlier", "sections", "asked", "now", "latest")
"""Where a bullet read back falls in conversation order (:func:`_place`), oldest first."""


def _place(section: str | None, text: str) -> tuple[str, str]:
    """Where a bullet of ``section`` falls in conversation order (one of :data:`_PLACES`), and its text unprefixed."""
    if section == "Latest request":
        return "latest", text
    if section != "Task":
        return "sections", text
    for place, prefix in (("asked", _ASKED), ("now", _NOW)):
        if text.startswith(prefix):
            return place, text.removeprefix(prefix)
    return "earlier", text.removeprefix(_EARLIER)


def _parse(summary: str, memo: ReadMemo | None = None) -> list[Salient]:
    # Items are read back in conversation order as far as the text tells it: requests the conversation went on from
    # come first, then what the sections record, then the requests nothing answered yet, the current task, and the
    # latest request (newer than the work, so a request still open stays "Asked" until work follows it).
    buckets: dict[str, list[_Read]] = {place: [] for place in _PLACES}
    nested: set[int] = set()  # ids of the entries read from a paste's nested bullets (they share its place in order)
    section: str | None = None
    under_paste = False
    for number, line in enumerate(summary.splitlines()):
        if line.startswith("#"):
            heading = _HEADING.match(line)
            if heading:
                name = heading.group(1).strip().rstrip(":").strip()
                section = _LEGACY.get(name, name if name in LEDGER_SECTIONS else "Notes")
                continue
        text = line.strip().removeprefix("- ").strip()
        if not text or text in _NOTHING or (section is None and text.startswith("[")):
            continue
        if section is None:
            buckets["sections"].append(_read("note", text))
            continue
        # With a memo, the same bullet stood in earlier summaries: its kind is known.
        kind = _kind_for(section, text) if memo is None else _remembered_kind(memo, section, text)
        inside = under_paste and line.startswith(NESTED) and section == SECTION_OF["paste"]
        under_paste = (kind == "paste" and not inside) or (inside and kind in PASTED_STATEMENTS)
        if kind in ("call", "command", "figure"):
            # A record's bullet: its fields are items again, each kept or not on its own.
            fields = split_fields(kind, text, number)
            buckets["sections"].extend(_remembered(memo, kind, field) for kind, field in fields)
        elif kind is not None:
            place, shown = _place(section, text)
            entry = _remembered(memo, kind, shown)
            if inside and kind in PASTED_STATEMENTS:
                entry = (*entry,)  # its own tuple: a bullet met twice is two entries, one of them nested
                nested.add(id(entry))
            buckets[place].append(entry)
    parsed = [entry for place in _PLACES for entry in buckets[place]]
    total = len(parsed)
    out: list[Salient] = []
    order = -total
    for index, (kind, text, key, tokens) in enumerate(parsed):
        if id(parsed[index]) not in nested:  # a paste's statement is ordered with the paste, as when it was read
            order = index - total
        out.append(Salient(kind, text, key, order, tokens))
    return out


_Read = tuple[SalienceKind, str, "str | None", frozenset[str]]
"""An item read back, but for its place in order: its kind, text, key and informative tokens."""


def _read(kind: SalienceKind, text: str) -> _Read:
    return kind, text, item_key(kind, text), item_tokens(text)


def _remembered(memo: ReadMemo | None, kind: SalienceKind, text: str) -> _Read:
    """:func:`_read`, remembered: a bullet usually stood in the summary before this one too."""
    if memo is None:
        return _read(kind, text)
    return memo.get(("read", kind, text), lambda: _read(kind, text), lambda _read: 2 * len(text))


def read_from_paste(items: Iterable[Salient]) -> Callable[[Salient], bool]:
    """Whether an item is a statement read out of a pasted message among ``items`` (the paste's bullet is not one).

    Such statements are written nested under their paste's bullet, and weigh as the paste's, not as what the user
    said (:mod:`~ctxbudget.compaction._ledger_select`).
    """
    pasted = {item.order for item in items if item.kind == "paste"}
    return lambda item: item.kind in PASTED_STATEMENTS and item.order in pasted


def render_ledger(
    items: Sequence[Salient], task: Salient | None, request: Salient | None, *, answered_below: float = -math.inf
) -> str:
    """The ledger text of ``items`` (in conversation order), with the current ``task`` and latest ``request``.

    A request or question ordered before ``answered_below`` (the last work the ledger records) is written
    ``Earlier: ``: the conversation went on from it. One after it is ``Asked: ``, still open.
    """
    by_section: dict[str, list[str]] = {name: [] for name in LEDGER_SECTIONS}
    if task is not None:
        by_section["Task"].append(_NOW + task.text)
    nested = read_from_paste(items)
    for item in sorted(items, key=lambda i: (i.order, i.kind != "paste")):
        asked = item.kind in ("request", "question")
        prefix = (_EARLIER if item.order < answered_below else _ASKED) if asked else ""
        if nested(item):
            prefix = _UNDER  # read out of the paste just above: nested under its bullet
        by_section[SECTION_OF[item.kind]].append(prefix + item.text)
    if request is not None:
        by_section["Latest request"] = [request.text]
    by_section["Commands and results"] = join_fields(by_section["Commands and results"])
    blocks = [
        f"## {name}\n" + "\n".join(NESTED + b[1:] if b.startswith(_UNDER) else f"- {b}" for b in bullets)
        for name, bullets in by_section.items()
        if bullets
    ]
    return "\n".join(blocks) if blocks else f"## Notes\n- {NOTHING_LISTED}"
