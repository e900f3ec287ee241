"""One bullet per file: what was done to it, in order (``src/a.py: read, edited x2``), and its latest state.

A file reaches the ledger in three forms: a file operation (``path: read``, ``path: edited -> FAILED: ...``), a
listing that named it (``path (found by Grep)``) and an output line that said something about it (``wrote 3 rows to
out/a.csv``). :func:`merge_artifact` joins two bullets of one file into one; being found by a search is said only
while nothing else was done to the file. :func:`canonical_paths` tells a relative path from a search
(``cmd/cli/explain.go``) and the absolute path an editor used (``/Users/alex/cli/cmd/cli/explain.go``) are the same
file, when only one known file ends so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ._salient import Salient
from .textscan import clip, informative_tokens

__all__ = ["ONLY_LISTED", "canonical_paths", "merge_artifact"]

_OPS_SPLIT = re.compile(r" -> | — ")
_COUNT = re.compile(r"^(.*?) x(\d+)$")
ONLY_LISTED = re.compile(r" \(((?:found|listed) by [^()]{1,80})\)$")
"""How the bullet of a file a search or a listing only named ends (``a.go (found by Grep)``): nothing was done to it."""
_LISTED_THEN = re.compile(r" \(((?:found|listed) by [^()]{1,80})\)(?: -> (.+))?", re.DOTALL)
_MAX_CHARS = 280
_DRIVE = re.compile(r"^[a-z]:[\\/]", re.IGNORECASE)
"""A Windows path's drive (``d:\\``): the path is absolute."""


@dataclass(frozen=True)
class _Parts:
    path: str | None
    """The path as the bullet spells it (``None``: an output line naming the file somewhere inside)."""
    ops: tuple[tuple[str, int], ...]
    detail: str | None


def _parts(text: str, key: str) -> _Parts:
    """The path, operations and detail of an artifact bullet of the file ``key``."""
    if not text.lower().startswith(key):
        return _Parts(None, (), text)
    path, rest = text[: len(key)], text[len(key) :]
    listing = _LISTED_THEN.fullmatch(rest)
    if listing:  # "a.json (found by Grep)", or with what a later output line said of it: "... -> - a.json broke"
        return _Parts(path, _listing_ops(listing.group(1)), listing.group(2))
    if not rest:
        return _Parts(path, (), None)
    if rest.startswith(": "):
        head, *detail = _OPS_SPLIT.split(rest[2:], maxsplit=1)
        ops = _ops(head)
        if ops:
            return _Parts(path, ops, detail[0] if detail else None)
    return _Parts(path, (), text)


def _listing_ops(said: str) -> tuple[tuple[str, int], ...]:
    """``found by Glob, Grep; listed by Bash`` as one operation per tool: ``found by Glob``, ``found by Grep``, ..."""
    ops: list[tuple[str, int]] = []
    for part in said.split("; "):
        how, _, tools = part.partition(" by ")
        ops.extend((f"{how} by {tool}", 1) for tool in tools.split(", ") if tool)
    return tuple(ops)


def _ops(head: str) -> tuple[tuple[str, int], ...]:
    """``read, edited x2`` as operations and counts; ``()`` when ``head`` is not a list of operations."""
    out = []
    for part in head.split(", "):
        match = _COUNT.match(part)
        op, count = (match.group(1), int(match.group(2))) if match else (part, 1)
        if not (op.isalpha() and len(op) <= 10):
            return ()
        out.append((op, count))
    return tuple(out)


def merge_artifact(earlier: Salient, later: Salient, key: str) -> Salient:
    """One bullet for the file ``key``: the operations of both in order, the latest detail (a failure, a line)."""
    first, last = _parts(earlier.text, earlier.key or key), _parts(later.text, later.key or key)
    spelt = [p.path for p in (last, first) if p.path is not None]
    path = max(spelt, key=len) if spelt else key
    counted: dict[str, int] = {}
    for op, count in (*first.ops, *last.ops):
        counted[op] = counted.get(op, 0) + count
    done = {op: n for op, n in counted.items() if not op.startswith(("found by ", "listed by "))}
    if done:
        text = f"{path}: " + ", ".join(op if n == 1 else f"{op} x{n}" for op, n in done.items())
    elif counted:
        by: dict[str, list[str]] = {}  # "found by Glob, Grep"
        for op in counted:
            how, _, tool = op.partition(" by ")
            by.setdefault(how, []).append(tool)
        said = "; ".join(f"{how} by {', '.join(tools)}" for how, tools in by.items())
        text = f"{path} ({said})"
    else:
        text = path
    acted = any(op in done for op, _ in last.ops)  # being found by a search says nothing of the file's state
    detail = last.detail if last.detail is not None or acted else first.detail
    if detail and detail != text:
        text = detail if text == path else f"{text} -> {detail}"
    return later._replace(text=clip(text, _MAX_CHARS), key=key, tokens=informative_tokens(text))


def canonical_paths(keys: Iterable[str]) -> dict[str, str]:
    """For each relative path among ``keys`` that exactly one longer key ends with (at a ``/``), that key.

    A bare file name counts (``trailers_test.go``, as ``go test`` names the file a failure is in) when it is unique.

    Linear in the paths' length: each key's ``/`` is visited once, and the suffix after it is cut and looked up only
    when a relative key is that long (a path of 50,000 ``a/`` is not cut 50,000 times).
    """
    distinct = set(keys)
    # A Windows path's separators are backslashes (``src\\segments\\a.go`` beside ``d:\\repo\\src\\segments\\a.go``);
    # one relative path can be spelt both ways (Grep's ``src\\a.go``, Git Bash's ``src/a.go``): both are that file.
    slashed = {key: key.replace("\\", "/") for key in distinct}
    relative: dict[str, list[str]] = {}
    for key in sorted(distinct):
        path = slashed[key]
        if ("/" in path or "." in key) and not path.startswith(("/", "~")) and not _DRIVE.match(key):
            relative.setdefault(path.removeprefix("./"), []).append(key)
    if not relative:
        return {}
    lengths = {len(path) for path in relative}  # a suffix is cut and looked up only when one is that long
    longer: dict[str, set[str]] = {}
    for key in distinct:
        path = slashed[key]
        at = path.find("/", 1)
        while at > 0:
            if len(path) - at - 1 in lengths and (suffix := path[at + 1 :]) in relative and key not in relative[suffix]:
                longer.setdefault(suffix, set()).add(key)
            at = path.find("/", at + 1)
    same = {spelt: next(iter(found)) for short, found in longer.items() if len(found) == 1 for spelt in relative[short]}
    for short, found in longer.items():  # "a.go" in "x/a.go" and "/abs/x/a.go", which are one file: that file
        if len(found) > 1 and len(targets := {same.get(key, key) for key in found}) == 1:
            same.update(dict.fromkeys(relative[short], next(iter(targets))))
    for short, spelt in relative.items():  # one relative path spelt two ways, no longer one: the first spelling
        if short not in longer and len(spelt) > 1:
            same.update(dict.fromkeys(spelt[1:], spelt[0]))
    return same
