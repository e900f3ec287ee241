"""Strict assembly: fragments in, messages out, every limit checked, nothing truncated.

:func:`assemble_fragments` validates fragments and budgets, keeps the registered order and renders one message per
fragment. It never shortens or drops anything: a fragment over its own limit or a total over the budget raises with
the numbers. :func:`assemble_context_plan` first audits a candidate plan (made by a selection or compression step)
against the original fragments: only fragments declared mutable may have been dropped or changed, and a required
fragment is never dropped (a plan may only shorten or replace it). Neither function calls a model or a compressor;
strategies are separate steps that produce candidates for this audit.

Accounting: ``chars`` is the length of the rendered message content (a data fragment's envelope included, since
that is what the model reads); ``tokens`` is the counter's per-message cost (framing included, reply priming not).
A fragment's own ``max_chars`` / ``max_tokens`` limit its ``value``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import (
    BudgetExceededError,
    DuplicateFragmentError,
    FragmentLimitError,
    InvalidFragmentError,
    InvalidPolicyError,
    PlanAuditError,
)
from ..messages._defaults import default_counter
from ..messages._validation import short_repr
from ..messages.message import Message
from ..messages.tokens import TokenCounter
from .fragments import Fragment

__all__ = ["BuiltContext", "FragmentUsage", "assemble_context_plan", "assemble_fragments"]

FragmentLike = Fragment | Mapping[str, Any]
"""A :class:`Fragment`, or a mapping :meth:`Fragment.from_mapping` accepts."""

# Fields a plan may never change, even on a mutable fragment: compression shortens a value, it does not change
# where the data came from, the authority it is rendered with, whether it is required, or how long it lives.
_PROVENANCE_FIELDS = ("source_id", "trust", "role", "required", "lifetime")
# Limits a plan may tighten but never loosen or remove.
_LIMIT_FIELDS = ("max_chars", "max_tokens")


def _loosened(original: Fragment, candidate: Fragment) -> list[str]:
    loosened = []
    for name in _LIMIT_FIELDS:
        before, after = getattr(original, name), getattr(candidate, name)
        if before is not None and (after is None or after > before):
            loosened.append(f"{name} ({before!r} -> {after!r})")
    return loosened


class FragmentUsage(BaseModel):
    """What one fragment contributed to a built context."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    source_id: str
    chars: int = Field(description="Rendered content chars (0 when not included).")
    tokens: int = Field(description="Message tokens by the counter (0 when not included).")
    included: bool = Field(description="False for an original fragment a plan dropped.")


class BuiltContext(BaseModel):
    """The result of strict assembly: the messages, per-fragment usage and the totals."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: list[Message]
    fragment_usage: list[FragmentUsage]
    total_chars: int
    total_tokens: int = Field(description="Sum of the messages' tokens; a request adds the reply priming.")


def _check_budget_value(value: object, field: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidPolicyError(f"{field}: must be a non-negative integer or None, got {value!r}", field=field)
    if isinstance(value, int):  # exact: a huge int must not be converted to float
        if value < 0:
            raise InvalidPolicyError(f"{field}: must be a non-negative integer or None, got {value!r}", field=field)
        return
    if not math.isfinite(value) or value < 0 or value != int(value):
        raise InvalidPolicyError(f"{field}: must be a non-negative integer or None, got {value!r}", field=field)


def _coerce(fragments: Iterable[FragmentLike]) -> list[Fragment]:
    # Fragment objects are re-validated too: model_copy(update=...) skips validation, and the rule that data never
    # takes an instruction role must hold for whatever a strategy hands us.
    if isinstance(fragments, (str, bytes, Mapping)) or not isinstance(fragments, Iterable):
        raise InvalidFragmentError(
            f"fragments: expected an iterable of Fragment objects or mappings, got {type(fragments).__name__}",
            field="fragments",
        )
    result = [Fragment.from_mapping(dict(f) if isinstance(f, Fragment) else f) for f in fragments]
    seen: set[str] = set()
    for fragment in result:
        if fragment.id in seen:
            positions = [i for i, other in enumerate(result) if other.id == fragment.id]
            raise DuplicateFragmentError(
                f"fragment {fragment.id!r} appears {len(positions)} times (positions {positions}); ids must be unique",
                field="id",
            )
        seen.add(fragment.id)
    return result


def _check_own_limits(fragment: Fragment, counter: TokenCounter) -> None:
    chars = len(fragment.value)
    if fragment.max_chars is not None and chars > fragment.max_chars:
        raise FragmentLimitError(
            f"fragment {fragment.id!r} has {chars:,} chars, its max_chars is {fragment.max_chars:,}",
            field="max_chars",
        )
    if fragment.max_tokens is not None:
        tokens = counter.count_text(fragment.value)
        if tokens > fragment.max_tokens:
            raise FragmentLimitError(
                f"fragment {fragment.id!r} has {tokens:,} tokens ({counter.name}), its max_tokens is "
                f"{fragment.max_tokens:,}",
                field="max_tokens",
            )


def _largest(usage: Sequence[FragmentUsage], key: str) -> str:
    top = sorted(usage, key=lambda u: -int(getattr(u, key)))[:3]
    return ", ".join(f"{u.id!r} {int(getattr(u, key)):,}" for u in top)


def _check_totals(
    usage: Sequence[FragmentUsage], max_chars: int | None, max_tokens: int | None, names: tuple[str, str]
) -> None:
    total_chars = sum(u.chars for u in usage)
    total_tokens = sum(u.tokens for u in usage)
    if max_chars is not None and total_chars > max_chars:
        raise BudgetExceededError(
            f"{len(usage)} fragments total {total_chars:,} chars, {names[0]} is {max_chars:,} "
            f"(over by {total_chars - max_chars:,}; largest: {_largest(usage, 'chars')})",
            field=names[0],
        )
    if max_tokens is not None and total_tokens > max_tokens:
        raise BudgetExceededError(
            f"{len(usage)} fragments total {total_tokens:,} tokens, {names[1]} is {max_tokens:,} "
            f"(over by {total_tokens - max_tokens:,}; largest: {_largest(usage, 'tokens')})",
            field=names[1],
        )


def _build(
    fragments: Sequence[Fragment],
    max_chars: int | None,
    max_tokens: int | None,
    counter: TokenCounter,
    names: tuple[str, str],
) -> tuple[list[Message], list[FragmentUsage]]:
    messages: list[Message] = []
    usage: list[FragmentUsage] = []
    for fragment in fragments:
        _check_own_limits(fragment, counter)
        message = fragment.to_message()
        messages.append(message)
        usage.append(
            FragmentUsage(
                id=fragment.id,
                source_id=fragment.source_id,
                chars=len(message.text),
                tokens=counter.count_message(message),
                included=True,
            )
        )
    _check_totals(usage, max_chars, max_tokens, names)
    return messages, usage


def assemble_fragments(
    fragments: Iterable[FragmentLike],
    max_chars: int | None = None,
    *,
    max_tokens: int | None = None,
    counter: TokenCounter | None = None,
) -> BuiltContext:
    """Validate ``fragments`` and render them, in the given order, one message each.

    Args:
        fragments: :class:`Fragment` objects or mappings of their fields.
        max_chars: budget for the total rendered chars; ``None`` = no limit.
        max_tokens: budget for the total message tokens; ``None`` = no limit.
        counter: counts tokens; defaults to a shared ``TiktokenCounter("o200k_base")``.

    Raises:
        InvalidFragmentError: a malformed fragment (empty id, unknown role, data trust with an instruction role...).
        DuplicateFragmentError: two fragments share an id.
        FragmentLimitError: a fragment's value is over its own ``max_chars`` / ``max_tokens``.
        BudgetExceededError: the total is over ``max_chars`` / ``max_tokens``.
        InvalidPolicyError: a budget is negative, NaN, infinite or not an integer, or ``counter`` is not a
            :class:`~ctxbudget.messages.tokens.TokenCounter`.
    """
    _check_budget_value(max_chars, "max_chars")
    _check_budget_value(max_tokens, "max_tokens")
    active = default_counter(counter)
    messages, usage = _build(_coerce(fragments), max_chars, max_tokens, active, ("max_chars", "max_tokens"))
    return BuiltContext(
        messages=messages,
        fragment_usage=usage,
        total_chars=sum(u.chars for u in usage),
        total_tokens=sum(u.tokens for u in usage),
    )


def _changes(original: Fragment, candidate: Fragment) -> list[str]:
    changes: list[str] = []
    for name in Fragment.model_fields:
        before, after = getattr(original, name), getattr(candidate, name)
        if before == after:
            continue
        if name == "value":
            changes.append(f"value ({len(before):,} -> {len(after):,} chars)")
        else:
            changes.append(f"{name} ({before!r} -> {after!r})")
    return changes


def _audit_mutable(original: Fragment, candidate: Fragment | None) -> None:
    emptied = candidate is not None and not candidate.value.strip() and bool(original.value.strip())
    if original.required and (candidate is None or emptied):
        how = "dropped" if candidate is None else "emptied"
        raise PlanAuditError(
            f"fragment {original.id!r} is required and was {how} by the plan; a plan may shorten or replace a "
            "required fragment, never drop it (mutable or not)",
            field="fragments",
        )
    if candidate is None:
        return
    pinned = [c for c in _changes(original, candidate) if c.split(" ", 1)[0] in _PROVENANCE_FIELDS]
    pinned += _loosened(original, candidate)
    if pinned:
        raise PlanAuditError(
            f"fragment {original.id!r} changed {', '.join(pinned)}; a plan may not change provenance "
            f"({', '.join(_PROVENANCE_FIELDS)}) or loosen a limit ({', '.join(_LIMIT_FIELDS)}), "
            "even of a mutable fragment",
            field="fragments",
        )


def _audit(candidates: Sequence[Fragment], originals: Sequence[Fragment], mutable: frozenset[str]) -> None:
    by_id = {f.id: f for f in originals}
    unknown = sorted(mutable - by_id.keys())
    if unknown:
        raise PlanAuditError(
            f"mutable_fragment_ids names {unknown}, which are not original fragments", field="mutable_fragment_ids"
        )
    allowed = sorted(mutable) if mutable else "none"
    for candidate in candidates:
        if candidate.id not in by_id:
            raise PlanAuditError(
                f"fragment {candidate.id!r} is not among the {len(originals)} original fragments; a plan may drop "
                "or change mutable fragments, never add new ones",
                field="fragments",
            )
    kept = {f.id: f for f in candidates}
    for original in originals:
        kept_version = kept.get(original.id)
        if original.id not in mutable:
            if kept_version is None:
                raise PlanAuditError(
                    f"fragment {original.id!r} was dropped, but it is not mutable (mutable: {allowed})",
                    field="fragments",
                )
            changes = _changes(original, kept_version)
            if changes:
                raise PlanAuditError(
                    f"fragment {original.id!r} changed {', '.join(changes)}, but it is not mutable "
                    f"(mutable: {allowed})",
                    field="fragments",
                )
        else:
            _audit_mutable(original, kept_version)
    order = [f.id for f in originals if f.id in kept]
    if [f.id for f in candidates] != order:
        raise PlanAuditError(
            f"the plan reorders fragments: {[f.id for f in candidates]}, the registered order is {order}",
            field="fragments",
        )


def _mutable_ids(ids: object) -> frozenset[str]:
    """``mutable_fragment_ids`` as a set of ids, else an :class:`InvalidPolicyError` naming it."""
    if isinstance(ids, str):
        raise InvalidPolicyError(
            f"mutable_fragment_ids: expected a collection of ids, got the string {short_repr(ids)}",
            field="mutable_fragment_ids",
        )
    if not isinstance(ids, Iterable):
        raise InvalidPolicyError(
            f"mutable_fragment_ids: expected a collection of ids (str), got {type(ids).__name__} {short_repr(ids)}",
            field="mutable_fragment_ids",
        )
    listed = list(ids)
    for index, fragment_id in enumerate(listed):
        if not isinstance(fragment_id, str):
            raise InvalidPolicyError(
                f"mutable_fragment_ids[{index}]: expected a fragment id (str), got {type(fragment_id).__name__} "
                f"{short_repr(fragment_id)}",
                field="mutable_fragment_ids",
            )
    return frozenset(listed)


def assemble_context_plan(
    *,
    fragments: Iterable[FragmentLike],
    original_fragments: Iterable[FragmentLike],
    mutable_fragment_ids: Iterable[str],
    max_input_chars: int | None = None,
    max_input_tokens: int | None = None,
    counter: TokenCounter | None = None,
) -> BuiltContext:
    """Audit a candidate plan against the original fragments, then assemble it strictly.

    The audit: every original fragment not in ``mutable_fragment_ids`` must be present and identical (every field).
    A mutable fragment may be dropped or changed, except its provenance (``source_id``, ``trust``, ``role``,
    ``required``, ``lifetime``) and its limits (tightened, never loosened). A ``required`` fragment is never dropped
    nor emptied to a blank value, even when it is mutable: it may only be shortened or replaced. An empty
    ``mutable_fragment_ids`` means nothing may change. A plan may not add fragments that are not among the
    originals, nor reorder them. ``fragment_usage`` lists every original fragment, dropped ones with
    ``included=False``.

    Args:
        fragments: the candidate plan.
        original_fragments: the fragments as registered.
        mutable_fragment_ids: ids a strategy was allowed to drop or change.
        max_input_chars: budget for the total rendered chars; ``None`` = no limit.
        max_input_tokens: budget for the total message tokens; ``None`` = no limit.
        counter: counts tokens; defaults to a shared ``TiktokenCounter("o200k_base")``.

    Raises:
        PlanAuditError: an immutable fragment was dropped or changed, a required fragment was dropped or emptied,
            a provenance field changed or a limit loosened, a fragment was added or the order changed, or
            ``mutable_fragment_ids`` names an id that is not an original.
        InvalidPolicyError: ``mutable_fragment_ids`` is not a collection of str ids (a lone string included).
        InvalidFragmentError, DuplicateFragmentError, FragmentLimitError, BudgetExceededError, InvalidPolicyError:
            as for :func:`assemble_fragments`.
    """
    _check_budget_value(max_input_chars, "max_input_chars")
    _check_budget_value(max_input_tokens, "max_input_tokens")
    mutable = _mutable_ids(mutable_fragment_ids)
    originals = _coerce(original_fragments)
    candidates = _coerce(fragments)
    _audit(candidates, originals, mutable)
    active = default_counter(counter)
    names = ("max_input_chars", "max_input_tokens")
    messages, usage = _build(candidates, max_input_chars, max_input_tokens, active, names)
    by_id = {u.id: u for u in usage}
    full_usage = [
        by_id.get(o.id) or FragmentUsage(id=o.id, source_id=o.source_id, chars=0, tokens=0, included=False)
        for o in originals
    ]
    return BuiltContext(
        messages=messages,
        fragment_usage=full_usage,
        total_chars=sum(u.chars for u in usage),
        total_tokens=sum(u.tokens for u in usage),
    )
