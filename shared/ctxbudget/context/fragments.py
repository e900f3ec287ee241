"""Context fragments: explicit source, trust, lifetime, role and limits for one piece of a model input.

A :class:`Fragment` is what strict assembly (:mod:`ctxbudget.context.assembly`) works with. ``trust`` describes where
the value came from and grants nothing: a fragment whose trust is in :data:`~ctxbudget.context.items.DATA_TRUSTS` (tool,
retrieved, external, memory) is data whatever it says. It may not take the ``system`` or ``developer`` role
(building one raises), and it is always rendered inside an escaped ``<context>`` envelope.

Roles (:data:`FragmentRole`):

* ``system``: rendered as a system message.
* ``developer``: the OpenAI "developer" instruction role; rendered as a system message whose metadata keeps
  ``fragment_role="developer"`` (every provider understands ``system``, not all understand ``developer``).
* ``user`` / ``assistant``: rendered with that role.

``tool`` is deliberately not a fragment role: a tool message must answer a specific tool call, which a fragment
does not carry. Tool output enters as a fragment with ``trust="tool"`` and role ``user``, i.e. as data.

Every validation failure raises :class:`~ctxbudget.errors.InvalidFragmentError` naming the fragment and the field,
never a raw pydantic ``ValidationError``; construct with ``Fragment(...)`` or :meth:`Fragment.from_mapping`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from ..errors import InvalidFragmentError
from ..messages._validation import JsonValueError, check_json, subject_id, to_usage_error
from ..messages.message import Message, MessageRole
from .items import DATA_TRUSTS, Lifetime, Trust
from .render import envelope

__all__ = ["FRAGMENT_ROLES", "INSTRUCTION_ROLES", "Fragment", "FragmentRole"]

FragmentRole = Literal["system", "developer", "user", "assistant"]
"""The roles a fragment may take; see the module docstring for how each is rendered."""

FRAGMENT_ROLES: tuple[FragmentRole, ...] = ("system", "developer", "user", "assistant")
"""Every valid :data:`FragmentRole`, in rendering-authority order."""

INSTRUCTION_ROLES: frozenset[FragmentRole] = frozenset({"system", "developer"})
"""Roles that carry instructions; data-trust fragments may never take them."""

_MESSAGE_ROLE: dict[FragmentRole, MessageRole] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
}


class Fragment(BaseModel):
    """One explicitly sourced, trusted-or-not, limited piece of a model input.

    Attributes:
        id: unique within one assembly; names the fragment in every error.
        source_id: where the value came from (a request, a file, a retriever, a tool name).
        trust: provenance (:data:`~ctxbudget.context.items.Trust`); data trusts are rendered as escaped data.
        lifetime: how long the fragment stays relevant (``request``, ``turn``, ``session``, ``persistent``).
        role: the chat role it is rendered with (:data:`FragmentRole`).
        value: the text; never truncated by ctxbudget.
        max_chars: the fragment's own limit on ``len(value)``; ``None`` = no limit.
        max_tokens: the fragment's own limit on the value's tokens; ``None`` = no limit.
        priority: 0..1, for selection strategies.
        relevance: 0..1, for selection strategies.
        freshness: 0..1, for selection strategies.
        required: a selection strategy must keep it (assembly itself never drops anything); the plan audit
            refuses a plan that drops or empties it, even when it is listed as mutable.
        metadata: free-form data carried into the rendered message's metadata.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    source_id: str = Field(min_length=1)
    trust: Trust
    lifetime: Lifetime = "turn"
    role: FragmentRole = "user"
    value: str
    max_chars: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    priority: float = Field(default=0.5, ge=0.0, le=1.0, allow_inf_nan=False)
    relevance: float = Field(default=0.5, ge=0.0, le=1.0, allow_inf_nan=False)
    freshness: float = Field(default=0.5, ge=0.0, le=1.0, allow_inf_nan=False)
    required: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, **data: Any) -> None:
        """Validate like any pydantic model, but fail with :class:`InvalidFragmentError` naming the field."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise to_usage_error(exc, InvalidFragmentError, subject_id(data, "fragment")) from None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Fragment:
        """Build a fragment from a plain mapping (e.g. JSON config); raises :class:`InvalidFragmentError`."""
        if not isinstance(data, Mapping):
            raise InvalidFragmentError(
                f"fragment: expected a Fragment or a mapping, got {type(data).__name__}", field="fragment"
            )
        bad = [key for key in data if not isinstance(key, str)]
        if bad:
            raise InvalidFragmentError(f"fragment: field names must be strings, got {bad[0]!r}", field="fragment")
        return cls(**dict(data))

    @field_validator("id", "source_id")
    @classmethod
    def _not_blank(cls, value: str, info: ValidationInfo) -> str:
        if not value.strip():
            raise ValueError(f"must not be blank (got {value!r})")
        return value

    @field_validator("role")
    @classmethod
    def _data_is_never_instruction(cls, role: FragmentRole, info: ValidationInfo) -> FragmentRole:
        trust = info.data.get("trust")
        if trust in DATA_TRUSTS and role in INSTRUCTION_ROLES:
            raise ValueError(
                f"trust {trust!r} is data and may not take the {role!r} role; use 'user' (it is rendered "
                "inside an escaped <context> envelope)"
            )
        return role

    @field_validator("max_chars", "max_tokens", mode="before")
    @classmethod
    def _integral_limit(cls, value: Any) -> Any:
        if isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value)):
            raise ValueError(f"must be a non-negative integer or None (got {value!r})")
        return value

    @field_validator("metadata")
    @classmethod
    def _metadata_is_json(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:  # it is carried into the rendered message's metadata, and so into snapshots
            check_json("metadata", value)
        except JsonValueError as exc:  # pydantic names the field already
            raise ValueError(str(exc).removeprefix("metadata: ")) from None
        return value

    @property
    def is_data(self) -> bool:
        """True when the trust is a data trust: the value is rendered inside an escaped envelope."""
        return self.trust in DATA_TRUSTS

    @property
    def message_role(self) -> MessageRole:
        """The chat role the fragment is rendered with (``developer`` becomes ``system``)."""
        return _MESSAGE_ROLE[self.role]

    def rendered_content(self) -> str:
        """The message content: the value itself, or for data trusts the value in an escaped envelope."""
        if self.is_data:
            return envelope(self.source_id, self.trust, self.value)
        return self.value

    def to_message(self) -> Message:
        """Render as a :class:`~ctxbudget.messages.message.Message` with a deterministic id (``frag_<id>``).

        The metadata carries the fragment id, source id, trust, lifetime and role, plus the fragment's own metadata.
        """
        metadata = {
            **self.metadata,
            "fragment_id": self.id,
            "source_id": self.source_id,
            "trust": self.trust,
            "lifetime": self.lifetime,
            "fragment_role": self.role,
        }
        return Message(role=self.message_role, content=self.rendered_content(), metadata=metadata, id=f"frag_{self.id}")
