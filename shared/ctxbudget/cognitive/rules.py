"""Session-level rules of a bound session, framework-neutral, for a host's ``ContextSession`` to apply.

- :func:`check_providers`, at configuration time: a bound session queries only its cognitive provider. General
  retrieval and graph providers are rejected, a cognitive provider may never come through the generic provider
  list (its binding could not be persisted), personal-memory recall is suppressed, and workspace instructions and
  skills stay available.
- :func:`check_resume`, on restore: the snapshot's binding and the re-injected provider's binding must be the same
  binding, compared as whole objects (limits included).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal, cast, get_args

from ..errors import (
    BindingMismatchError,
    CognitiveExclusivityError,
    InvalidBinding,
    MissingProviderError,
    UnexpectedBindingError,
    UsageError,
)
from .models import PackageBinding
from .session import CognitiveContextSession
from .validation import expect_type

__all__ = ["PROVIDER_KINDS", "ProviderKind", "check_providers", "check_resume", "provider_kind"]

ProviderKind = Literal["retrieval", "graph", "memory", "instructions", "skills", "cognitive"]
"""What a context provider supplies. A provider object declares it with a ``kind`` attribute."""

PROVIDER_KINDS: frozenset[str] = frozenset(get_args(ProviderKind))
"""Every :data:`ProviderKind`."""

_GENERAL: frozenset[str] = frozenset({"retrieval", "graph"})


def provider_kind(provider: object) -> ProviderKind | None:
    """Return the kind of a provider (or of a kind string), or ``None`` when it cannot be told.

    A string is taken as a kind; a :class:`~ctxbudget.cognitive.CognitiveContextSession` is ``"cognitive"``;
    any other object declares its kind with a ``kind`` attribute.

    Args:
        provider: a kind string or a provider object.

    Returns:
        The kind, or ``None`` for an unknown string or an object without a known ``kind``.
    """
    if isinstance(provider, CognitiveContextSession):
        return "cognitive"
    kind = provider if isinstance(provider, str) else getattr(provider, "kind", None)
    if isinstance(kind, str) and kind in PROVIDER_KINDS:
        return cast(ProviderKind, kind)
    return None


def check_providers(kinds_or_providers: Iterable[object], *, bound: bool) -> bool:
    """Check the generic context-provider list of a session; return whether personal-memory recall is suppressed.

    Args:
        kinds_or_providers: the generic provider list, as :data:`ProviderKind` strings or provider objects.
        bound: whether the session is bound to a cognitive package (through its dedicated option).

    Returns:
        ``True`` when personal-memory recall must be suppressed, i.e. when the session is bound.

    Raises:
        CognitiveExclusivityError: a cognitive provider is in the generic list (bound or not); or the session is
            bound and the list holds a general retrieval or graph provider, or a provider whose kind cannot be
            told (it fails closed: it might be general retrieval).
    """
    if isinstance(kinds_or_providers, (str, bytes, Mapping)) or not isinstance(kinds_or_providers, Iterable):
        raise UsageError(
            f"providers: expected an iterable of provider kinds or providers, got {type(kinds_or_providers).__name__}",
            field="providers",
        )
    for index, item in enumerate(kinds_or_providers):
        kind = provider_kind(item)
        label = f"providers[{index}] ({_label(item)})"
        if kind == "cognitive":
            raise CognitiveExclusivityError(
                f"{label}: a cognitive provider must be bound with the dedicated cognitive context option, "
                "not the generic provider list, because its binding could not be persisted there"
            )
        if not bound:
            continue
        if kind in _GENERAL:
            raise CognitiveExclusivityError(
                f"{label}: a session bound to an exact cognitive package queries only its provider; "
                f"a general {kind} provider cannot accompany it"
            )
        if kind is None:
            raise CognitiveExclusivityError(
                f"{label}: unknown provider kind in a bound session; declare kind as one of "
                f"{sorted(PROVIDER_KINDS - _GENERAL - {'cognitive'})}"
            )
    return bound


def check_resume(stored_binding: PackageBinding | None, provider_binding: PackageBinding | None) -> None:
    """Check a restored session's binding against the binding of the provider re-injected by the host.

    Args:
        stored_binding: the binding in the snapshot, or ``None`` when the session was never bound.
        provider_binding: the re-injected cognitive session's binding, or ``None`` when none was injected.

    Raises:
        InvalidBinding: a binding given is not a PackageBinding (nor ``None``).
        MissingProviderError: the snapshot is bound but no provider was re-injected.
        UnexpectedBindingError: a binding was injected for a session that was never bound.
        BindingMismatchError: the bindings differ in any field, limits included (the fields are named).
    """
    for name, value in (("stored_binding", stored_binding), ("provider_binding", provider_binding)):
        if value is not None:
            expect_type(value, PackageBinding, InvalidBinding, name)
    if stored_binding is None:
        if provider_binding is None:
            return
        raise UnexpectedBindingError(
            f"a binding to {_identity(provider_binding)} was supplied for a session that was never bound; "
            "a binding cannot be added on resume"
        )
    if provider_binding is None:
        raise MissingProviderError(
            f"the snapshot is bound to {_identity(stored_binding)}; re-inject a provider with that exact binding"
        )
    if stored_binding != provider_binding:
        changed = _differences(stored_binding.to_dict(), provider_binding.to_dict())
        raise BindingMismatchError(
            f"the re-injected binding differs from the snapshot's in {', '.join(changed)} "
            f"(stored {_identity(stored_binding)}, injected {_identity(provider_binding)})"
        )


def _identity(binding: PackageBinding) -> str:
    return f"{binding.package_id}@{binding.package_version} generation {binding.lifecycle_generation}"


def _label(item: object) -> str:
    if isinstance(item, str):
        return repr(item)
    name = getattr(item, "name", None)
    return f"{type(item).__name__} {name!r}" if isinstance(name, str) else type(item).__name__


def _differences(stored: dict[str, object], injected: dict[str, object], prefix: str = "") -> list[str]:
    changed: list[str] = []
    for key, value in stored.items():
        other = injected.get(key)
        if isinstance(value, dict) and isinstance(other, dict):
            changed.extend(_differences(value, other, f"{prefix}{key}."))
        elif value != other:
            changed.append(f"{prefix}{key} ({value!r} -> {other!r})")
    return changed
