"""Turn pydantic's ``ValidationError`` into ctxbudget's typed errors.

Public models whose fields a caller fills in (fragments, planner configs) must fail with one of our
:class:`~ctxbudget.errors.UsageError` subclasses, naming the field and the value, never with a raw pydantic error.
"""

from __future__ import annotations

import reprlib
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from .errors import UsageError

__all__ = ["describe_error", "short_repr", "subject_id", "to_usage_error"]

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 80, 80, 40


def short_repr(value: Any) -> str:
    """A bounded ``repr`` for error messages: never deep (a value nested past the recursion limit), never huge."""
    try:
        return _REPR.repr(value)
    except Exception:  # a broken __repr__ must not replace the error being reported
        return f"<{type(value).__name__}>"


def _field_of(error: ErrorDetails) -> str | None:
    parts = [str(part) for part in error["loc"]]
    return ".".join(parts) if parts else None


def describe_error(error: ErrorDetails) -> str:
    """One readable line for one pydantic error: ``field: message (got <value>)``."""
    field = _field_of(error)
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "literal_error":
        expected = (error.get("ctx") or {}).get("expected", "")
        message = f"must be one of {expected}"
    if error["type"] == "value_error":  # our own validators already name the value
        return f"{field}: {message}" if field else message
    got = error.get("input")
    rendered = short_repr(got) if not isinstance(got, dict) else "a mapping"
    prefix = f"{field}: " if field else ""
    return f"{prefix}{message} (got {rendered})"


def to_usage_error(exc: ValidationError, error_cls: type[UsageError], subject: str) -> UsageError:
    """Build ``error_cls`` from ``exc``: the first error names the field; every error is in the message.

    Args:
        exc: the pydantic error.
        error_cls: the :class:`UsageError` subclass to raise.
        subject: what was being built, e.g. ``"fragment 'intro'"``; starts the message.
    """
    errors = exc.errors(include_url=False)
    field = _field_of(errors[0]) if errors else None
    details = "; ".join(describe_error(error) for error in errors)
    return error_cls(f"{subject}: {details}", field=field)


def subject_id(data: dict[str, Any], kind: str) -> str:
    """``"<kind> '<id>'"`` when ``data`` carries a usable id, else ``"<kind> (no id)"``."""
    value = data.get("id")
    return f"{kind} {value!r}" if isinstance(value, str) and value else f"{kind} (no id)"
