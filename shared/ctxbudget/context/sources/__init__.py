"""Loaders that turn project files, skills and long outputs into :class:`~ctxbudget.context.ContextItem` objects."""

from __future__ import annotations

from .instructions import (
    INSTRUCTION_FILE_NAMES,
    compact_instructions,
    find_instruction_files,
    load_compact_instructions,
    load_instruction_items,
)
from .outputs import evidence_item
from .skills import Skill, SkillLibrary, parse_front_matter

__all__ = [
    "INSTRUCTION_FILE_NAMES",
    "Skill",
    "SkillLibrary",
    "compact_instructions",
    "evidence_item",
    "find_instruction_files",
    "load_compact_instructions",
    "load_instruction_items",
    "parse_front_matter",
]
