"""The base of the contract's wire types: frozen, strict pydantic models whose JSON round-trips exactly.

Python attributes are snake_case; the JSON keys are the contract's camelCase, in the contract's order. Unknown keys
are rejected, and JSON read with :meth:`WireModel.from_json` must carry every key (nested objects too). No
constructor or reader lets a pydantic ``ValidationError`` escape: it becomes the model's typed error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic.alias_generators import to_camel
from typing_extensions import Self

from ..errors import CognitiveContextError, ResponseDrift, UsageError

__all__ = ["WireModel", "digest_or", "strict_loads"]

# Set while reading wire JSON: every model (nested ones too, which pydantic builds through our ``__init__``, so
# a validation context would not reach them) must then carry exactly its camelCase keys.
_WIRE_MODE: ContextVar[bool] = ContextVar("ctxbudget_cognitive_wire_mode", default=False)


class WireModel(BaseModel):
    """Shared behaviour of every wire type: camelCase aliases, strict types, exact JSON round trip, typed errors."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
    )

    _wire_error: ClassVar[type[CognitiveContextError]] = CognitiveContextError

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise self._wire_error(_describe(type(self).__name__, exc)) from None
        except TypeError as exc:  # a nested object with non-string keys cannot even be passed as keywords
            raise self._wire_error(f"{type(self).__name__}: not a JSON object with string keys ({exc})") from None

    @model_validator(mode="before")
    @classmethod
    def _exact_keys_on_the_wire(cls, data: Any) -> Any:
        if _WIRE_MODE.get() and isinstance(data, dict):
            aliases = [str(field.alias) for field in cls.model_fields.values()]
            missing = [alias for alias in aliases if alias not in data]
            unknown = sorted(str(key) for key in data if key not in aliases)
            if unknown:
                raise ValueError(f"unknown key(s) {', '.join(unknown)}")
            if missing:
                raise ValueError(f"missing key(s) {', '.join(missing)}")
        return data

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON object: camelCase keys in contract order, nested types as objects."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> str:
        """Return compact JSON (no spaces, non-ASCII as is) with the keys in contract order."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """Parse JSON written by :meth:`to_json` or by another implementation of the contract.

        Every key must be present, no unknown or duplicate key is allowed, and every rule is checked.

        Args:
            text: the JSON text (``bytes`` must be UTF-8).

        Returns:
            The validated model.

        Raises:
            CognitiveContextError: the model's typed error (see the module docstring) naming what is wrong.
        """
        return cls.from_dict(_parse_json(text, cls._wire_error, cls.__name__))

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """Validate an already-parsed JSON object (e.g. from a session snapshot) like :meth:`from_json`.

        Args:
            data: the JSON object, with camelCase keys.

        Returns:
            The validated model.

        Raises:
            CognitiveContextError: the model's typed error naming what is wrong.
        """
        token = _WIRE_MODE.set(True)
        try:
            return cls.model_validate(data, strict=True)
        except ValidationError as exc:
            raise cls._wire_error(_describe(cls.__name__, exc)) from None
        except TypeError as exc:  # a (nested) object with non-string keys
            raise cls._wire_error(f"{cls.__name__}: not a JSON object with string keys ({exc})") from None
        except CognitiveContextError as exc:
            if cls._wire_error is ResponseDrift and not isinstance(exc, ResponseDrift):
                raise ResponseDrift(f"{cls.__name__} carries an invalid binding: {exc}") from None
            raise
        finally:
            _WIRE_MODE.reset(token)


def digest_or(error: type[CognitiveContextError], where: str, compute: Any) -> str:
    """``compute()``, a digest; a value that cannot be digested raises ``error`` naming ``where`` instead."""
    try:
        digest: str = compute()
    except UsageError as exc:
        raise error(f"{where}: {exc}") from None
    return digest


def _describe(model: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False)[:3]:
        location = ".".join(str(part) for part in error["loc"]) or "(object)"
        problems.append(f"{location}: {error['msg']}")
    more = exc.error_count() - len(problems)
    suffix = f" (and {more} more)" if more > 0 else ""
    return f"{model} does not match the contract: {'; '.join(problems)}{suffix}"


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_loads(text: str) -> Any:
    """``json.loads`` as the wire reads: a key given twice, ``NaN`` or ``Infinity`` is a ``ValueError``.

    Nesting deeper than the parser can recurse still raises ``RecursionError``; callers turn both into their typed
    error.
    """
    return json.loads(text, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant)


def _parse_json(text: str | bytes, error: type[CognitiveContextError], model: str) -> Mapping[str, Any]:
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise error(f"{model} JSON is not valid UTF-8") from None
    if not isinstance(text, str):
        raise error(f"{model} JSON must be str or bytes, got {type(text).__name__}")
    try:
        data = strict_loads(text)
    except (ValueError, RecursionError) as exc:
        raise error(f"{model} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise error(f"{model} JSON must be an object, got {type(data).__name__}")
    return data
