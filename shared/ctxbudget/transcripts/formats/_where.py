r"""Where a message sits in a transcript, for error messages, and the checks every reader applies to what it read.

:class:`Where` names the place (``line 7`` for JSONL, ``messages[3]`` for JSON) and raises
:class:`~ctxbudget.errors.TranscriptError` naming the field; :meth:`Where.check_tree` refuses text that is not valid
Unicode (a lone surrogate such as a ``\ud800`` escape) and JSON nested more than :data:`MAX_DEPTH` levels, so
nothing read fails later when it is printed, written or sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from ...errors import InvalidMessageError, TranscriptError

__all__ = ["MAX_DEPTH", "TOO_DEEP", "Where", "check_text", "fail_from"]

MAX_DEPTH = 128
"""How deeply a message (or a tool spec, or a tool call's arguments) may nest JSON arrays and objects."""
TOO_DEEP = f"JSON is nested too deeply to read (a message may nest at most {MAX_DEPTH} levels)"


class Where:
    """Where a message sits, for error messages: ``line 7`` (JSONL) or ``messages[3]`` (JSON)."""

    def __init__(self, source: str, label: str) -> None:
        self.source = source
        self.label = label

    def fail(self, field: str, problem: str) -> NoReturn:
        """Raise a :class:`TranscriptError` naming this place and ``field``."""
        raise TranscriptError(f"{self.source}: {self.label}: field {field!r}: {problem}", field=field)

    def fail_source(self, problem: str, field: str) -> NoReturn:
        """Raise a :class:`TranscriptError` naming only the source (``problem`` names the place itself)."""
        raise TranscriptError(f"{self.source}: {problem}", field=field)

    def fail_plain(self, problem: str, field: str) -> NoReturn:
        """Raise a :class:`TranscriptError` naming this place (no field in the message: the place is the problem)."""
        raise TranscriptError(f"{self.source}: {self.label}: {problem}", field=field)

    def check_tree(self, value: Any, field: str = "") -> None:
        r"""Fail on text that is not valid Unicode (a lone surrogate) or nesting deeper than :data:`MAX_DEPTH`.

        ``json.loads`` turns a ``\ud800`` escape into a lone surrogate, which cannot be encoded as UTF-8: the
        transcript would read, then fail when it is printed, written or sent. Iterative, so no depth overflows it.
        """
        stack: list[tuple[Any, str, int]] = [(value, field, 0)]
        while stack:
            item, path, depth = stack.pop()
            if isinstance(item, str):
                check_text(self, item, path or "message")
            elif isinstance(item, (Mapping, list, tuple)):
                if depth >= MAX_DEPTH:
                    shown = path if len(path) <= 80 else f"{path[:60]}...{path[-17:]}"
                    self.fail(shown or "message", f"nested more than {MAX_DEPTH} levels deep")
                if isinstance(item, Mapping):
                    for key, child in item.items():
                        name = str(key)
                        if isinstance(key, str):
                            check_text(self, key, f"{path}.{name}" if path else name, "key")
                        stack.append((child, f"{path}.{name}" if path else name, depth + 1))
                else:
                    stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))


def check_text(where: Where, text: str, field: str, what: str = "text") -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        where.fail(
            field,
            f"{what} holds a lone surrogate {text[exc.start]!r} at index {exc.start}, which is not valid Unicode",
        )


def fail_from(where: Where, exc: InvalidMessageError, *, path: tuple[str, str] = ("", "")) -> NoReturn:
    """Re-raise a provider converter's :class:`InvalidMessageError` as a :class:`TranscriptError` at ``where``.

    The converter's message starts with the path it failed at (``messages[0].content[1]``); ``path`` replaces a
    leading part of it (``("messages[0]", "message")``) where the converter saw a list the file does not hold.
    """
    message = str(exc)
    if path[0] and message.startswith(path[0]):
        message = path[1] + message[len(path[0]) :]
    field = message.split(":", 1)[0] if ":" in message else exc.field or "message"
    where.fail(field if len(field) <= 80 else exc.field or "message", message.split(": ", 1)[-1])
