"""Shape checks: an argument or a model field is of its declared type, however the object was built.

pydantic's ``model_construct`` and ``model_copy(update=...)`` skip its checks, so a field may be missing or hold
anything; every ``validate_*`` function of :mod:`ctxbudget.cognitive.validation` starts with :func:`check_shape`.
"""

from __future__ import annotations

import typing
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["check_shape", "expect_type"]

_T = TypeVar("_T")


def expect_type(value: Any, expected: type[_T], error: type[Exception], where: str) -> _T:
    """Return ``value`` when it is an ``expected``; else raise ``error`` naming the argument and the type received.

    Every public entry point of the cognitive API checks its arguments with this, so a wrong argument (``None``,
    a dict, a string) raises the entry point's typed error instead of a raw ``TypeError`` or ``AttributeError``.

    Args:
        value: the argument.
        expected: the type it must be.
        error: the typed error to raise.
        where: the argument's name in the message, e.g. ``"citation.binding"``.

    Returns:
        ``value``, narrowed to ``expected``.
    """
    if not isinstance(value, expected):
        raise error(f"{where}: must be a {expected.__name__}, got {type(value).__name__}")
    return value


def _type_problem(value: object, annotation: Any) -> str | None:
    """What is wrong with ``value`` as a value of the field type ``annotation`` (a class or ``tuple[X, ...]``)."""
    if typing.get_origin(annotation) is tuple:
        if not isinstance(value, tuple):
            return f"must be a tuple, got {type(value).__name__}"
        item_type = typing.get_args(annotation)[0]
        for index, item in enumerate(value):
            problem = _type_problem(item, item_type)
            if problem is not None:
                return f"[{index}] {problem}"
        return None
    if isinstance(value, annotation) and not (annotation is int and isinstance(value, bool)):
        return None
    name = annotation.__name__
    article = "an" if name[0].lower() in "aeiou" else "a"
    return f"must be {article} {name}, got {type(value).__name__}"


def check_shape(model: BaseModel, error: type[Exception], where: str) -> None:
    """Check every field of ``model`` is present and of its declared type, whatever way the model was built.

    ``model_construct`` and ``model_copy(update=...)`` skip pydantic's validation, so a field may be missing or
    hold anything; the rules that follow would then pass a ``float`` byte count or a ``"no"`` flag.

    Args:
        model: the model instance.
        error: the typed error to raise.
        where: the prefix the message names the field with (the field is named by its JSON key).

    Raises:
        Exception: ``error``, naming the first field that is missing or of the wrong type.
    """
    values = model.__dict__
    for name, field in type(model).model_fields.items():
        label = f"{where}.{field.alias or name}"
        if name not in values:
            raise error(f"{label}: is missing")
        problem = _type_problem(values[name], field.annotation)
        if problem is not None:
            raise error(f"{label}: {problem}")
