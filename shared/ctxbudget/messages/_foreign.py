"""Recognise a LangChain or LlamaIndex message that reached the core, and name the converter that fixes it.

The core imports no framework: a message is recognised by the module and name of a class it inherits from, so a
``HumanMessage`` or a ``ChatMessage`` passed where a :class:`~ctxbudget.Message` (or text) belongs fails with a
short :class:`~ctxbudget.errors.InvalidMessageError` pointing at the adapter's converter, instead of a pydantic
dump of the object.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import InvalidMessageError

__all__ = ["ForeignMessage", "check_not_foreign", "foreign_message", "foreign_problem"]


class ForeignMessage(NamedTuple):
    """What a framework message is and how to convert it."""

    framework: str
    """``"LangChain"`` or ``"LlamaIndex"``."""
    kind: str
    """The message's class name, e.g. ``"HumanMessage"``."""
    converter: str
    """The adapter function that turns one such message into a :class:`~ctxbudget.Message`."""


# (module prefix of the base class, base class name, framework, converter)
_KNOWN = (
    ("langchain_core.", "BaseMessage", "LangChain", "langchain_ctxbudget.from_langchain"),
    ("llama_index.core.", "ChatMessage", "LlamaIndex", "llamaindex_ctxbudget.from_chat_message"),
)


def foreign_message(value: object) -> ForeignMessage | None:
    """``value`` as a LangChain ``BaseMessage`` or LlamaIndex ``ChatMessage`` (by its classes), else ``None``."""
    for cls in type(value).__mro__:
        module = cls.__dict__.get("__module__")
        for prefix, base, framework, converter in _KNOWN:
            if cls.__name__ == base and isinstance(module, str) and module.startswith(prefix):
                return ForeignMessage(framework, type(value).__name__, converter)
    return None


def foreign_problem(value: object, expected: str, then: str = "") -> str | None:
    """``"expected <expected>, got a LangChain HumanMessage; convert it with ...<then>"`` for a framework message."""
    found = foreign_message(value)
    if found is None:
        return None
    convert = f"convert it with {found.converter}(message){then}"
    return f"expected {expected}, got a {found.framework} {found.kind}; {convert}"


def check_not_foreign(name: str, value: object, expected: str, then: str = "") -> None:
    """Raise :class:`InvalidMessageError` naming ``name`` when ``value`` is a framework message."""
    problem = foreign_problem(value, expected, then)
    if problem is not None:
        raise InvalidMessageError(f"{name}: {problem}", field=name)
