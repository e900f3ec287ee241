"""Context assembly: fragments and strict assembly, the planner, prompt-safe envelopes, evidence excerpts, sources.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages._lazy import lazy_face

if TYPE_CHECKING:
    from .assembly import (
        BuiltContext,
        FragmentUsage,
        assemble_context_plan,
        assemble_fragments,
    )
    from .evidence import (
        excerpt,
    )
    from .fragments import (
        FRAGMENT_ROLES,
        INSTRUCTION_ROLES,
        Fragment,
        FragmentRole,
    )
    from .items import (
        DATA_TRUSTS,
        ContextItem,
        Lifetime,
        Trust,
        trust_score,
    )
    from .planner import (
        DroppedItem,
        DropReason,
        PlannedItem,
        PlannerConfig,
        PlanResult,
        plan_context,
        score_item,
    )
    from .render import (
        SEPARATOR,
        escape_attribute,
        escape_content,
        render_envelope,
        render_item,
        render_items,
    )
    from .sources import (
        INSTRUCTION_FILE_NAMES,
        Skill,
        SkillLibrary,
        compact_instructions,
        evidence_item,
        find_instruction_files,
        load_compact_instructions,
        load_instruction_items,
        parse_front_matter,
    )

__all__ = [
    "DATA_TRUSTS",
    "FRAGMENT_ROLES",
    "INSTRUCTION_FILE_NAMES",
    "INSTRUCTION_ROLES",
    "SEPARATOR",
    "BuiltContext",
    "ContextItem",
    "DropReason",
    "DroppedItem",
    "Fragment",
    "FragmentRole",
    "FragmentUsage",
    "Lifetime",
    "PlanResult",
    "PlannedItem",
    "PlannerConfig",
    "Skill",
    "SkillLibrary",
    "Trust",
    "assemble_context_plan",
    "assemble_fragments",
    "compact_instructions",
    "escape_attribute",
    "escape_content",
    "evidence_item",
    "excerpt",
    "find_instruction_files",
    "load_compact_instructions",
    "load_instruction_items",
    "parse_front_matter",
    "plan_context",
    "render_envelope",
    "render_item",
    "render_items",
    "score_item",
    "trust_score",
]

_LAZY: dict[str, str] = {
    "BuiltContext": "assembly",
    "ContextItem": "items",
    "DATA_TRUSTS": "items",
    "DropReason": "planner",
    "DroppedItem": "planner",
    "FRAGMENT_ROLES": "fragments",
    "Fragment": "fragments",
    "FragmentRole": "fragments",
    "FragmentUsage": "assembly",
    "INSTRUCTION_FILE_NAMES": "sources",
    "INSTRUCTION_ROLES": "fragments",
    "Lifetime": "items",
    "PlanResult": "planner",
    "PlannedItem": "planner",
    "PlannerConfig": "planner",
    "SEPARATOR": "render",
    "Skill": "sources",
    "SkillLibrary": "sources",
    "Trust": "items",
    "assemble_context_plan": "assembly",
    "assemble_fragments": "assembly",
    "compact_instructions": "sources",
    "escape_attribute": "render",
    "escape_content": "render",
    "evidence_item": "sources",
    "excerpt": "evidence",
    "find_instruction_files": "sources",
    "load_compact_instructions": "sources",
    "load_instruction_items": "sources",
    "parse_front_matter": "sources",
    "plan_context": "planner",
    "render_envelope": "render",
    "render_item": "render",
    "render_items": "render",
    "score_item": "planner",
    "trust_score": "items",
}


__getattr__, __dir__ = lazy_face(__name__, _LAZY)
