"""Validation every entry point shares: typed errors from pydantic's, and what JSON and a snapshot can hold.

Public models whose fields a caller fills in (fragments, planner configs) must fail with one of our
:class:`~ctxbudget.errors.UsageError` subclasses, naming the field and the value, never with a raw pydantic error.

Every JSON payload a caller or a provider gives us (message metadata, tool-call arguments, content-block data, tool
parameters) is checked here, once, when it arrives: :func:`check_json` refuses a value that JSON cannot hold
(``NaN``/``Infinity``, bytes, sets, objects, non-string keys, lone surrogates) or that a snapshot could not be
written and read back with (nesting past :data:`MAX_JSON_DEPTH`, an integer past :data:`MAX_INT_DIGITS` digits),
and :func:`parse_json` reads JSON text under the same limits without recursing. Both are iterative and copy no
text, whatever the size or depth.
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ..errors import UsageError

__all__ = [
    "MAX_INT_DIGITS",
    "MAX_JSON_DEPTH",
    "JsonValueError",
    "NotJsonError",
    "check_json",
    "check_utf8",
    "describe_error",
    "parse_json",
    "short_repr",
    "subject_id",
    "to_usage_error",
]

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 80, 80, 40


def short_repr(value: Any) -> str:
    """A bounded ``repr`` for error messages: never deep (a value nested past the recursion limit), never huge."""
    if type(value) is int and value.bit_length() > _SAFE_INT_BITS:  # repr() itself would raise past 4,300 digits
        return f"<an integer of about {_digits(value):,} digits>"
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


# -- what JSON and a snapshot can hold ---------------------------------------------------------------------------
MAX_JSON_DEPTH = 100
"""How deeply metadata, tool-call arguments and block data may nest (a snapshot adds a few levels around them)."""
MAX_INT_DIGITS = 4_300
"""The longest integer a snapshot holds: Python's default ``sys.get_int_max_str_digits()``, past which neither
``json.dumps`` nor ``json.loads`` accepts one (so a snapshot with it could be written here and not read back)."""
_SAFE_INT_BITS = 14_284
"""Integers of at most this many bits have at most :data:`MAX_INT_DIGITS` digits (2**14284 < 10**4300)."""
_INT_LIMIT = 10**MAX_INT_DIGITS
_JSON_SCALARS = (str, int, float, bool, type(None))
_FLAT_SCALARS = frozenset((bool, type(None)))
_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonValueError(ValueError):
    """A value (or parsed JSON text) that JSON or a snapshot cannot hold; the message names the field and where."""


class NotJsonError(ValueError):
    """Text that is not one JSON document as RFC 8259 defines it (``NaN`` and ``Infinity`` are not JSON)."""


def _digits(value: int) -> int:
    """About how many decimal digits ``value`` has, without converting it (exact to within one)."""
    return int(abs(value).bit_length() * math.log10(2)) + 1


def _int_problem(value: int) -> str | None:
    bits = value.bit_length()
    if bits <= _SAFE_INT_BITS or (bits == _SAFE_INT_BITS + 1 and abs(value) < _INT_LIMIT):
        return None
    return (
        f"an integer of about {_digits(value):,} digits, which a snapshot cannot hold (at most "
        f"{MAX_INT_DIGITS:,} digits); send it as a string"
    )


def _float_problem(value: float) -> str | None:
    if math.isfinite(value):
        return None
    return f"{value!r}, which is not a JSON value (JSON has no NaN or Infinity); use null or a string"


def check_utf8(field: str, text: str, where: str | None = None) -> None:
    """Refuse text that cannot be encoded as UTF-8 (a lone surrogate): it could never be sent or persisted.

    ASCII text is accepted from a flag; other text is searched in place (no encoded copy, whatever its size).

    Raises:
        JsonValueError: naming ``field`` and, when given, ``where`` inside it.
    """
    if text.isascii():
        return
    found = _SURROGATE.search(text)
    if found is not None:
        inside = f" (in {where})" if where is not None and where != field else ""
        raise JsonValueError(
            f"{field}: contains an unpaired surrogate {found.group()!r} at index {found.start()}{inside}, which is "
            "not valid Unicode text (decode the source with errors='replace' or fix the producer)"
        )


def _flat_scalar(item: Any) -> bool:
    """Whether ``item`` is a JSON scalar the fast path accepts without the walk.

    An ASCII ``str``, an ``int`` of at most :data:`MAX_INT_DIGITS` digits (by its bits), a finite ``float``, a
    ``bool`` or ``None``.
    """
    kind = type(item)
    if kind is str:
        return bool(item.isascii())
    if kind is int:
        return bool(item.bit_length() <= _SAFE_INT_BITS)
    if kind is float:
        return math.isfinite(item)
    return kind in _FLAT_SCALARS


def _flat_ascii(value: Any) -> bool:
    """Whether ``value`` is a dict of ASCII ``str`` keys to flat scalars (:func:`_flat_scalar`).

    The common case (message metadata, most tool arguments), checked without the general walk: such a dict is
    always valid JSON. ``False`` only means the walk must decide.
    """
    if type(value) is not dict:
        return False
    return all(type(key) is str and key.isascii() and _flat_scalar(item) for key, item in value.items())


def _scalar_problem(item: Any) -> str | None:
    """Why the JSON scalar ``item`` cannot be held (a huge int, NaN, Infinity), else ``None``."""
    if isinstance(item, bool) or item is None:
        return None
    if isinstance(item, int):
        return _int_problem(item)
    return _float_problem(item)


def check_json(field: str, value: Any) -> None:
    """Refuse a value that could not be sent or persisted as JSON, naming ``field`` and where inside it.

    Only JSON's own types are allowed (``str``, ``int``, ``float``, ``bool``, ``None``, lists/tuples, and dicts
    with string keys); text must be valid Unicode, floats finite, integers at most :data:`MAX_INT_DIGITS` digits,
    and nesting may not pass :data:`MAX_JSON_DEPTH`. Iterative, so no depth overflows it.

    Raises:
        JsonValueError: the first problem found, as ``"<field>: <problem> (at <path>)"``.
    """
    if _flat_ascii(value):
        return
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            check_utf8(field, item, path)
        elif isinstance(item, _JSON_SCALARS):
            problem = _scalar_problem(item)
            if problem is not None:
                raise JsonValueError(f"{field}: {_shown(path)} holds {problem}")
        elif isinstance(item, (dict, list, tuple)):
            if depth >= MAX_JSON_DEPTH:
                raise JsonValueError(f"{field}: nested more than {MAX_JSON_DEPTH} levels deep (at {_shown(path)})")
            stack.extend(_children(field, item, path, depth))
        else:
            raise JsonValueError(
                f"{field}: {_shown(path)} holds a {type(item).__name__!r} value, which is not JSON "
                "(use str, int, float, bool, None, lists and dicts with string keys)"
            )


def _children(field: str, item: dict[Any, Any] | list[Any] | tuple[Any, ...], path: str, depth: int) -> list[Any]:
    """The members of a list or dict as walk entries; a dict's keys are checked here."""
    if not isinstance(item, dict):
        return [(child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item)]
    children = []
    for key, child in item.items():
        if not isinstance(key, str):
            shown = f"{type(key).__name__} {short_repr(key)}"
            raise JsonValueError(f"{field}: keys must be strings, got {shown} in {_shown(path)}")
        check_utf8(field, key, f"{path} key")
        children.append((child, f"{path}.{key}", depth + 1))
    return children


def _shown(path: str) -> str:
    return path if len(path) <= 80 else f"{path[:40]}...{path[-37:]}"


def _refuse_constant(name: str) -> Any:
    raise NotJsonError(f"{name} is not a JSON value (JSON has no NaN or Infinity)")


def parse_json(text: str, field: str) -> Any:
    """``text`` parsed as JSON, under the limits :func:`check_json` enforces; never a ``RecursionError``.

    Raises:
        NotJsonError: ``text`` is not JSON (RFC 8259: ``NaN`` and ``Infinity`` are not JSON either).
        JsonValueError: ``text`` is JSON that a snapshot cannot hold: nested past :data:`MAX_JSON_DEPTH` levels,
            or holding an integer past :data:`MAX_INT_DIGITS` digits (or a lone surrogate escape); named
            ``field``.
    """
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise NotJsonError(f"{exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:  # the parser recursed past Python's limit: far deeper than MAX_JSON_DEPTH
        raise JsonValueError(f"{field}: nested more than {MAX_JSON_DEPTH} levels deep") from None
    except NotJsonError:
        raise
    except ValueError:  # an integer past sys.get_int_max_str_digits(), refused by int() itself
        raise JsonValueError(
            f"{field}: holds an integer of more than {MAX_INT_DIGITS:,} digits, which a snapshot cannot hold; "
            "send it as a string"
        ) from None
    check_json(field, value)
    return value
