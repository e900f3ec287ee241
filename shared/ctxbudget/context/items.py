"""Provenance vocabulary and the planner's unit of context, shared by fragments, sources and bindings.

``Trust`` says where data came from; it grants nothing. Text from a tool, a retriever or any external source is data
whatever it says: it is never rendered with the system role and is always escaped inside its envelope.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InvalidFragmentError
from ..messages._validation import short_repr, subject_id, to_usage_error

__all__ = [
    "DATA_TRUSTS",
    "TRUST_SCORES",
    "ContextItem",
    "Lifetime",
    "Trust",
    "checked_items",
    "not_an_item",
    "trust_score",
]

Trust = Literal["system", "developer", "user", "assistant", "memory", "tool", "retrieved", "external"]
"""Where content came from. ``tool``, ``retrieved`` and ``external`` (and ``memory``) are data, never instructions."""

Lifetime = Literal["request", "turn", "session", "persistent"]
"""How long content stays relevant: one model request, one user turn, the session, or across sessions."""

DATA_TRUSTS: frozenset[Trust] = frozenset({"tool", "retrieved", "external", "memory"})
"""Trust levels whose content is rendered as data and may never take the system role."""

TRUST_SCORES: dict[Trust, float] = {
    "system": 1.0,
    "developer": 0.9,
    "user": 0.8,
    "assistant": 0.6,
    "memory": 0.5,
    "tool": 0.4,
    "retrieved": 0.3,
    "external": 0.1,
}
"""The planner's 0..1 weight per trust level, as :func:`trust_score` gives it (read it, never change it)."""


def checked_items(items: object, field: str = "items") -> list[ContextItem]:
    """``items`` as a list of :class:`ContextItem`, else an :class:`InvalidFragmentError` naming ``field``."""
    if isinstance(items, (str, bytes, dict)) or not isinstance(items, Iterable):
        raise InvalidFragmentError(
            f"{field}: must be an iterable of ContextItem, got {type(items).__name__}", field=field
        )
    listed = list(items)
    for index, item in enumerate(listed):
        if not isinstance(item, ContextItem):
            raise InvalidFragmentError(
                f"{field}[{index}]: expected a ContextItem, got {type(item).__name__}", field=field
            )
    return listed


def not_an_item(item: object, field: str = "item") -> InvalidFragmentError:
    """The error for an ``item`` (or the argument ``field``) that is not a :class:`ContextItem`."""
    return InvalidFragmentError(
        f"{field}: expected a ContextItem, got {type(item).__name__} {short_repr(item)}", field=field
    )


def trust_score(trust: Trust) -> float:
    """Return the planner's 0..1 weight for a trust level (system 1.0 ... external 0.1).

    Raises:
        InvalidFragmentError: ``trust`` is not one of the :data:`Trust` levels.
    """
    score = TRUST_SCORES.get(trust) if isinstance(trust, str) else None
    if score is None:
        raise InvalidFragmentError(
            f"trust: expected one of {', '.join(map(repr, TRUST_SCORES))}, got {type(trust).__name__} "
            f"{short_repr(trust)}",
            field="trust",
        )
    return score


class ContextItem(BaseModel):
    """One candidate piece of context for the planner.

    An instruction file, a skill, a memory, a retrieved document, a tool result, a delegated summary, cited
    knowledge.

    ``source`` groups items for per-source caps; ``source_key`` identifies the underlying thing for dedupe
    (defaults to ``source`` + ``id``). Scores are 0..1.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, description="Unique id of this item.")
    source: str = Field(min_length=1, description="Where it came from, e.g. 'AGENTS.md', 'retriever', 'skill'.")
    type: str = Field(default="context", min_length=1, description="Rendered as the envelope's type attribute.")
    content: str = Field(description="The text that enters the prompt.")
    trust: Trust = "retrieved"
    relevance: float = Field(default=0.5, ge=0.0, le=1.0)
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    freshness: float = Field(default=0.5, ge=0.0, le=1.0)
    required: bool = Field(default=False, description="Always included (and counted), whatever the budget.")
    source_key: str | None = Field(default=None, description="Dedupe key; items sharing it keep only the best.")
    metadata: dict[str, Any] = Field(default_factory=dict)

    if not TYPE_CHECKING:  # keep the pydantic plugin's typed signature for static checking

        def __init__(self, /, **data: Any) -> None:
            """Validate; a malformed field raises :class:`InvalidFragmentError` naming it (not a pydantic error)."""
            try:
                super().__init__(**data)
            except ValidationError as exc:
                raise to_usage_error(exc, InvalidFragmentError, subject_id(data, "context item")) from None

    @property
    def dedupe_key(self) -> str | tuple[str, str]:
        r"""The key dedupe groups by: ``source_key`` when given, else one naming ``source`` and ``id``.

        That is ``f"{source}\x00{id}"`` (a ``source_key`` spelled so marks an item a copy of that one), or the tuple
        ``(source, id)`` when either holds a NUL, so two different ``(source, id)`` pairs never share a key.
        """
        if self.source_key is not None:
            return self.source_key
        if "\x00" in self.source or "\x00" in self.id:
            return (self.source, self.id)
        return f"{self.source}\x00{self.id}"
