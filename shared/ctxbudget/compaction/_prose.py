"""What of a user message is read for its statements: its prose, and lists joined to the sentence they finish.

A message's prose is its lines outside code fences and examples (:func:`~ctxbudget.compaction.harness.strip_examples`),
its two ends when it is long, and, for a paste (code, a log, a document), only the lines that read as a person's
words. A list whose lead-in stops on a word its sentence goes on after ("an environment where", "should include:")
finishes that sentence, so it is read as one line with it (:func:`continued`).
"""

from __future__ import annotations

import re
from collections import Counter

from .harness import strip_examples

__all__ = [
    "FENCE",
    "LIST_MARKER",
    "PASTE_CHARS",
    "SCAN_HEAD",
    "SCAN_TAIL",
    "continued",
    "ends",
    "is_prose",
    "prose_of",
    "unbold",
    "word_count",
]

SCAN_HEAD = 6_000
"""Characters of a message read for statements from its start (and :data:`SCAN_TAIL` from its end)."""
SCAN_TAIL = 2_000
PASTE_CHARS = 2_500
"""A user message longer than this, or holding a fenced block, is a paste: its opening prose is read, not all of it."""
FENCE = "```"
LIST_MARKER = re.compile(r"^(?:[-*•>]+|\d{1,3}[.)]|[a-z][.)]|#{1,6})\s+")
"""A list item's or a heading's marker at the start of a line."""
_CODE_SPAN = re.compile(r"`[^`\n]{1,200}`")
_RUN_MARKER = re.compile(r"(?:--- (?:FAIL|PASS|SKIP)|=== (?:RUN|PAUSE|CONT|NAME)):? ")
"""A line go test (and runners like it) writes for a test: ``--- FAIL: TestX (0.00s)``, ``=== RUN   TestX``."""
_DIGITS = re.compile(r"\d+")
_BOLD = re.compile(
    r"\*\*(?=\S)((?:(?!\*\*)[^\n]){1,300}?)(?<=\S)\*\*"
    r"|(?<!\w)__(?=\S)([^\n_]{0,300}?\s[^\n_]{0,300}?)(?<=\S)__(?!\w)"
)
"""Markdown bold (``**Root cause**``, ``__two words__``); a dunder (``__init__``) or ``**kwargs`` is no markup."""
_MARKDOWN_LINK = re.compile(r"\[[^\[\]\n]{1,200}\]\([^()\s]{1,300}\)")
"""A markdown link (``[engine.go:394](src/prompt/engine.go:394)``): it reads as a word in a sentence."""


def prose_of(text: str) -> tuple[str, bool]:
    """The part of a message read for statements, and whether the message is a paste (code, a log, a document).

    The part read is its prose lines, outside code fences and examples, at most :data:`SCAN_HEAD` plus
    :data:`SCAN_TAIL` chars. Whether it is a paste is read from the whole message, as it was sent.
    """
    pasted = FENCE in text or len(text) > PASTE_CHARS
    text = strip_examples(text)
    if FENCE in text:
        text = "\n".join(text.split(FENCE)[0::2])  # outside the fences
    if len(text) > SCAN_HEAD + SCAN_TAIL:
        text = ends(text)
    if pasted:
        lines = [line for line in text.splitlines() if is_prose(line)]
        shapes = Counter(_DIGITS.sub("#", line) for line in lines)
        # a line that recurs with other numbers ("Captured state before prompt: 1 untracked files") a program printed
        text = "\n".join(line for line in lines if shapes[_DIGITS.sub("#", line)] == 1)
    return text, pasted


def ends(text: str) -> str:
    """The first :data:`SCAN_HEAD` and last :data:`SCAN_TAIL` characters of a long text, cut between words."""
    head = text[:SCAN_HEAD]
    head = head[: head.rfind(" ")] if " " in head[SCAN_HEAD // 2 :] else head
    tail = text[-SCAN_TAIL:]
    tail = tail[tail.find(" ") + 1 :] if " " in tail[: SCAN_TAIL // 2] else tail
    return f"{head}\n{tail}"


def is_prose(line: str) -> bool:
    """A line of a paste that reads as the user's words: mostly letters and spaces, not indented code or a log."""
    stripped = line.strip()
    if len(stripped) < 12 or " " not in stripped:
        return False
    if line[:1].isspace() and not LIST_MARKER.match(stripped):
        return False  # indented: code or a log
    if "\t" in stripped or "   " in stripped or _RUN_MARKER.match(stripped):
        return False  # aligned in columns, or a test runner's own line: a run's output ("ok  \tpkg\t2.1s")
    plain = _MARKDOWN_LINK.sub("link", _CODE_SPAN.sub("code", stripped))  # `code` and [a](b.go) read as words
    letters = sum(map(str.isalpha, plain)) + plain.count(" ")  # a space is not alpha: counted once
    return letters >= 0.75 * len(plain)


_LEAD_IN = re.compile(
    r"\b(?:where|that|which|when|whether|if|include|includes|including|such as|like|with|to|of|for|by|are|is)"
    r"\s*:?\s*$",
    re.IGNORECASE,
)
"""A line that ends on a word its sentence goes on after ("an environment where", "should include:"): the list
after it finishes that sentence."""
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(\S.*)$")
_MAX_JOINED = 12
_QUOTED_LINES = 3


def _quotes_closed(lines: list[str]) -> list[str]:
    """``lines`` with a line that leaves a double quote open joined to the next, up to the line that closes it.

    ``say "No associated`` and ``Entire checkpoint"`` are one sentence. At most :data:`_QUOTED_LINES` lines become
    one: a stray quote (``a 5" screen``) joins a few lines, never a paragraph.
    """
    if not any(line.count('"') % 2 for line in lines):
        return lines
    out: list[str] = []
    joined = 0
    for line in lines:
        if out and joined and line.strip():
            out[-1] = f"{out[-1].rstrip()} {line.strip()}"
            joined = joined + 1 if out[-1].count('"') % 2 and joined < _QUOTED_LINES - 1 else 0
            continue
        out.append(line)
        joined = 1 if line.count('"') % 2 else 0
    return out


def continued(lines: list[str]) -> list[str]:
    """``lines`` with each list that finishes its lead-in's sentence joined to it as one line (and open quotes closed).

    "You are operating in an environment where" followed by "1. You issue at least one command", "2. You see the
    result(s)" is one statement; its items alone are fragments. A list after a heading or a label ("Constraints:",
    "## Rules") is not joined: each of its items stands on its own.
    """
    lines = _quotes_closed(lines)
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not _LEAD_IN.search(line) or _ITEM.match(line) or line.lstrip().startswith("#"):
            out.append(line)
            continue
        ahead = index
        while ahead < len(lines) and not lines[ahead].strip():
            ahead += 1
        items: list[str] = []
        while ahead < len(lines) and len(items) < _MAX_JOINED and (item := _ITEM.match(lines[ahead])) is not None:
            items.append(item.group(1).strip().rstrip(".;"))
            ahead += 1
        if not items:
            out.append(line)
            continue
        out.append(f"{line.strip()} {'; '.join(items)}.")
        index = ahead
    return out


def unbold(text: str) -> str:
    """``text`` without Markdown bold markers, outside code spans: names such as ``__init__`` stay as written."""
    if "**" not in text and "__" not in text:
        return text
    parts = text.split("`")
    parts[0::2] = [_BOLD.sub(lambda m: m.group(1) or m.group(2), part) for part in parts[0::2]]
    return "`".join(parts)


_WORD = re.compile(r"[A-Za-z]{2,}")


def word_count(text: str) -> int:
    """The words of ``text``: runs of two letters or more (a lone letter, "I", is none; ``<groupId>`` is one)."""
    return len(_WORD.findall(text))
