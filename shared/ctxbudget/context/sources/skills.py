"""Skills: folders holding a ``SKILL.md`` whose front matter names and describes the skill.

Only a skill's name and description enter the prompt by default (:meth:`SkillLibrary.items`); its body is read
from disk when asked for (:meth:`SkillLibrary.load`). Front matter is the block between a first line ``---`` and
the next ``---`` line; each ``key: value`` line is read literally (surrounding quotes stripped), so no YAML
library is needed. ``name`` and ``description`` are required.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ctxbudget.context.items import ContextItem, Trust
from ctxbudget.errors import SourceError
from ctxbudget.messages._counter_inputs import not_text

__all__ = ["Skill", "SkillLibrary", "parse_front_matter"]

SKILL_FILE = "SKILL.md"


class Skill(BaseModel):
    """A discovered skill: name, description and where its ``SKILL.md`` is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    path: Path


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Split ``text`` into (front-matter fields, body); no front matter gives ``({}, text)``.

    Raises:
        SourceError: the front matter is opened by ``---`` but never closed.
        UsageError: ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise not_text(text)
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---"), None)
    if end is None:
        raise SourceError("front matter: opened with '---' on line 1 but never closed", field="front_matter")
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep and key.strip() and not line[:1].isspace():
            fields[key.strip()] = _unquote(value.strip())
    return fields, "".join(lines[end + 1 :]).lstrip("\r\n")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise SourceError(f"path: cannot read {str(path)!r}: {exc}", field="path") from exc


def _parse_skill(path: Path) -> Skill:
    try:
        fields, _ = parse_front_matter(_read(path))
    except SourceError as exc:
        raise SourceError(f"skill {str(path)!r}: {exc}", field=exc.field) from None
    for key in ("name", "description"):
        if not fields.get(key):
            raise SourceError(f"skill {str(path)!r}: front matter has no {key!r} (found: {sorted(fields)})", field=key)
    return Skill(name=fields["name"], description=fields["description"], path=path)


class SkillLibrary:
    """The skills found under one or more directories (any depth), keyed by name.

    Args:
        roots: directories to scan for ``SKILL.md`` files.
        trust: the trust given to skill items (default ``developer``: the caller chose these directories).

    Raises:
        SourceError: a root is not a directory, a ``SKILL.md`` is malformed, or two skills share a name.
    """

    def __init__(self, roots: Iterable[str | Path], *, trust: Trust = "developer") -> None:
        self.trust: Trust = trust
        self._skills: dict[str, Skill] = {}
        for root in roots:
            base = Path(root)
            if not base.is_dir():
                raise SourceError(f"roots: {str(base)!r} is not a directory", field="roots")
            for path in sorted(base.rglob(SKILL_FILE)):
                self._add(_parse_skill(path))

    def _add(self, skill: Skill) -> None:
        existing = self._skills.get(skill.name)
        if existing is not None:
            raise SourceError(
                f"skill {skill.name!r} is defined twice: {str(existing.path)!r} and {str(skill.path)!r}",
                field="name",
            )
        self._skills[skill.name] = skill

    def __len__(self) -> int:
        return len(self._skills)

    def names(self) -> list[str]:
        """Skill names, sorted."""
        return sorted(self._skills)

    def get(self, name: str) -> Skill:
        """The skill called ``name``; raises :class:`SourceError` listing the known names."""
        skill = self._skills.get(name)
        if skill is None:
            raise SourceError(
                f"skill {name!r} is not in the library ({len(self._skills)} skills: {', '.join(self.names())})",
                field="name",
            )
        return skill

    def items(self) -> list[ContextItem]:
        """One item per skill, ``"<name>: <description>"``, source ``skills``, type ``skill``; sorted by name."""
        return [
            ContextItem(
                id=f"skill:{skill.name}",
                source="skills",
                type="skill",
                content=f"{skill.name}: {skill.description}",
                trust=self.trust,
                metadata={"path": str(skill.path)},
            )
            for skill in (self._skills[name] for name in self.names())
        ]

    def load(self, name: str) -> str:
        """Read the body of skill ``name`` (its ``SKILL.md`` without the front matter), from disk, now."""
        skill = self.get(name)
        _, body = parse_front_matter(_read(skill.path))
        return body

    def load_item(self, name: str, *, relevance: float = 1.0) -> ContextItem:
        """The body of skill ``name`` as an item (id ``skill-body:<name>``, type ``skill_body``)."""
        skill = self.get(name)
        return ContextItem(
            id=f"skill-body:{name}",
            source="skills",
            type="skill_body",
            content=self.load(name),
            trust=self.trust,
            relevance=relevance,
            metadata={"path": str(skill.path)},
        )
