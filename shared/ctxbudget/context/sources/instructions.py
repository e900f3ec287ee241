"""Project instruction files (``AGENTS.md``, ``CLAUDE.md``) and their "Compact Instructions" sections.

Instruction files are read only when the caller passes ``trusted=True``: a project the user has not trusted is
never read, and the loaders then return nothing (an empty list, ``None``) rather than raising, so a session can pass
its trust flag straight through. ``trusted`` has no default: every caller decides explicitly.

Files are collected from the project root down to the working directory (root first), ``AGENTS.md`` before
``CLAUDE.md`` in each directory, so more specific instructions come later and read as refinements.
"""

from __future__ import annotations

import re
from pathlib import Path

from ctxbudget.context.items import ContextItem
from ctxbudget.errors import SourceError
from ctxbudget.messages._counter_inputs import not_text

__all__ = [
    "INSTRUCTION_FILE_NAMES",
    "compact_instructions",
    "find_instruction_files",
    "load_compact_instructions",
    "load_instruction_items",
]

INSTRUCTION_FILE_NAMES: tuple[str, ...] = ("AGENTS.md", "CLAUDE.md")
"""File names read in each directory, in this order."""

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMPACT = re.compile(r"compact\s+instructions", re.IGNORECASE)


def _directories(root: Path, cwd: Path | None) -> list[Path]:
    base = root.resolve()
    if not base.is_dir():
        raise SourceError(f"root: {str(root)!r} is not a directory", field="root")
    target = base if cwd is None else (base / cwd).resolve()
    if target != base and base not in target.parents:
        raise SourceError(f"cwd: {str(cwd)!r} is not inside the project root {str(base)!r}", field="cwd")
    chain = [target, *[p for p in target.parents if p == base or base in p.parents]]
    return list(reversed(chain))


def find_instruction_files(root: str | Path, cwd: str | Path | None = None) -> list[Path]:
    """Paths of the instruction files from ``root`` down to ``cwd`` (root first); reads nothing.

    Raises:
        SourceError: ``root`` is not a directory, or ``cwd`` is outside it.
    """
    found: list[Path] = []
    for directory in _directories(Path(root), None if cwd is None else Path(cwd)):
        found.extend(directory / name for name in INSTRUCTION_FILE_NAMES if (directory / name).is_file())
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise SourceError(f"path: cannot read {str(path)!r}: {exc}", field="path") from exc


def load_instruction_items(root: str | Path, cwd: str | Path | None = None, *, trusted: bool) -> list[ContextItem]:
    """Load the instruction files as required, developer-trust :class:`ContextItem` objects.

    Each item's id and source are the file's path relative to ``root`` (POSIX form), its type is
    ``instructions``; ``metadata["path"]`` holds the absolute path.

    Args:
        root: the project root.
        cwd: the working directory (absolute, or relative to ``root``); defaults to ``root``.
        trusted: read the files only when True; False returns ``[]`` without touching the disk.

    Raises:
        SourceError: ``root`` is not a directory, ``cwd`` is outside it, or a file cannot be read.
    """
    if not trusted:
        return []
    base = Path(root).resolve()
    items: list[ContextItem] = []
    for path in find_instruction_files(base, cwd):
        relative = path.relative_to(base).as_posix()
        items.append(
            ContextItem(
                id=relative,
                source=relative,
                type="instructions",
                content=_read(path),
                trust="developer",
                relevance=1.0,
                priority=1.0,
                required=True,
                metadata={"path": str(path)},
            )
        )
    return items


def compact_instructions(markdown: str) -> str | None:
    """Return the section under the first heading that matches ``compact instructions`` (any case or spacing).

    The section runs to the next heading of the same or a higher level (its own sub-headings are kept). ATX
    headings (``#`` .. ``######``) are recognised; lines inside fenced code blocks are never headings. Returns
    ``None`` when there is no such heading or its section is blank; otherwise the section, stripped.

    Raises:
        UsageError: ``markdown`` is not a ``str``.
    """
    if not isinstance(markdown, str):
        raise not_text(markdown, "markdown")
    lines = markdown.splitlines()
    level: int | None = None
    section: list[str] = []
    fence: str | None = None
    for line in lines:
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
        heading = None if fence is not None or fence_match else _HEADING.match(line)
        if heading and level is None and _COMPACT.search(heading.group(2) or ""):
            level = len(heading.group(1))
            continue
        if level is not None:
            if heading and len(heading.group(1)) <= level:
                break
            section.append(line)
    text = "\n".join(section).strip()
    return text or None


def load_compact_instructions(root: str | Path, cwd: str | Path | None = None, *, trusted: bool) -> str | None:
    """Join the "Compact Instructions" sections of every instruction file from ``root`` down to ``cwd``.

    Sections are joined by a blank line, root first. Returns ``None`` when ``trusted`` is False (nothing is read)
    or when no file has such a section.

    Raises:
        SourceError: as for :func:`load_instruction_items`.
    """
    sections = [
        section
        for item in load_instruction_items(root, cwd, trusted=trusted)
        if (section := compact_instructions(item.content)) is not None
    ]
    return "\n\n".join(sections) if sections else None
