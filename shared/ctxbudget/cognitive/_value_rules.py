"""The contract's rules on plain values: each returns what is wrong with a value, or ``None``.

The ``validate_*`` functions apply them to a model's fields and raise with a message of the form
``"<where>.<field>: <problem>"`` (:func:`raise_first`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = [
    "MAX_DOCUMENT_PATH_BYTES",
    "MAX_EVIDENCE_IDS",
    "MAX_FORMAT_VERSION_BYTES",
    "MAX_HEADING_BYTES",
    "MAX_PACKAGE_VERSION_BYTES",
    "MAX_PROVIDER_NAME_BYTES",
    "MAX_QUERY_BYTES",
    "MAX_SURFACE_ID_BYTES",
    "digest_problem",
    "document_path_problem",
    "evidence_ids_problem",
    "exact_problem",
    "generation_problem",
    "package_id_problem",
    "plain_problem",
    "query_problem",
    "raise_first",
    "recompute_problem",
    "show",
    "surface_id_problem",
    "utf8_size",
]

MAX_PACKAGE_VERSION_BYTES = 128
MAX_FORMAT_VERSION_BYTES = 64
MAX_SURFACE_ID_BYTES = 256
MAX_QUERY_BYTES = 4096
MAX_DOCUMENT_PATH_BYTES = 512
MAX_HEADING_BYTES = 128
MAX_EVIDENCE_IDS = 256
MAX_PROVIDER_NAME_BYTES = 128
_U64_MAX = 2**64 - 1

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_PACKAGE_PART = re.compile(r"[a-z0-9_-]+")
_SURFACE_REST = re.compile(r"[A-Za-z0-9\-._:/@]*")
_DRIVE = re.compile(r"[A-Za-z]:")


def show(value: object) -> str:
    """``repr(value)``, cut to 80 characters: how a rule quotes the value it rejects."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def utf8_size(value: str) -> int | None:
    """The UTF-8 size of ``value``, or ``None`` when it holds a lone surrogate (not valid UTF-8)."""
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return None


def _control_char(value: str, allowed: str = "") -> str | None:
    for char in value:
        if char not in allowed and unicodedata.category(char) == "Cc":
            return char
    return None


def _text_problem(value: object, max_bytes: int, *, allowed_controls: str = "") -> str | None:  # noqa: PLR0911 - one early return per rule, in contract order
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    size = utf8_size(value)
    if size is None:
        return "is not valid UTF-8 (it holds a lone surrogate)"
    if not value.strip():
        return "must not be empty or blank"
    if value != value.strip():
        return f"{show(value)} must be trimmed (no leading or trailing whitespace)"
    control = _control_char(value, allowed_controls)
    if control is not None:
        return f"control character U+{ord(control):04X} is not allowed"
    if size > max_bytes:
        return f"is {size:,} bytes, the limit is {max_bytes:,}"
    return None


def plain_problem(value: object, max_bytes: int) -> str | None:
    """Check the "plain value" rule: a non-empty, trimmed string without control characters, <= ``max_bytes``.

    Args:
        value: the value to check.
        max_bytes: the largest allowed UTF-8 size.

    Returns:
        What is wrong, or ``None`` when the value is plain.
    """
    return _text_problem(value, max_bytes)


def query_problem(value: object) -> str | None:
    r"""Check a request query: trimmed, non-empty, <= 4096 bytes, no control characters but ``\n`` and ``\t``.

    Args:
        value: the query.

    Returns:
        What is wrong, or ``None``.
    """
    return _text_problem(value, MAX_QUERY_BYTES, allowed_controls="\n\t")


def surface_id_problem(value: object, max_bytes: int = MAX_SURFACE_ID_BYTES) -> str | None:  # noqa: PLR0911 - one early return per rule, in contract order
    """Check the surfaceId rule (also used for session ids): ASCII, alphanumeric first, then ``[A-Za-z0-9-._:/@]``.

    Args:
        value: the identifier.
        max_bytes: the largest allowed size (256 for both surface and session ids).

    Returns:
        What is wrong, or ``None``.
    """
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not value:
        return "must not be empty"
    if not value.isascii():
        return f"{show(value)} must be ASCII"
    if not (value[0].isalnum()):
        return f"{show(value)} must start with a letter or digit"
    if not _SURFACE_REST.fullmatch(value, 1):
        return f"{show(value)} may only contain letters, digits and - . _ : / @"
    if len(value) > max_bytes:
        return f"is {len(value):,} bytes, the limit is {max_bytes:,}"
    return None


def package_id_problem(value: object) -> str | None:
    """Check a package id: ``publisher/name``, exactly one slash, each part ``[a-z0-9_-]+``.

    Args:
        value: the package id.

    Returns:
        What is wrong, or ``None``.
    """
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    parts = value.split("/")
    if len(parts) != 2 or not all(_PACKAGE_PART.fullmatch(part) for part in parts):
        return f"{show(value)} must be 'publisher/name' with each part matching [a-z0-9_-]+"
    return None


def generation_problem(value: object) -> str | None:
    """Check a lifecycle generation: an unsigned 64-bit integer that is not 0.

    Args:
        value: the generation.

    Returns:
        What is wrong, or ``None``.
    """
    if not isinstance(value, int) or isinstance(value, bool):
        return f"must be an integer, got {type(value).__name__}"
    if value == 0:
        return "must not be 0"
    if not 0 < value <= _U64_MAX:
        return f"{value} does not fit an unsigned 64-bit integer"
    return None


def digest_problem(value: object) -> str | None:
    """Check a digest: ``sha256:`` followed by exactly 64 lowercase hex digits.

    Args:
        value: the digest.

    Returns:
        What is wrong, or ``None``.
    """
    if not isinstance(value, str) or not _DIGEST.fullmatch(value):
        return f"{show(value)} is not a digest of the form sha256:<64 lowercase hex digits>"
    return None


def document_path_problem(value: object) -> str | None:  # noqa: PLR0911 - one early return per rule, in contract order
    """Check a citation's documentPath: relative, ``/``-separated, ends ``.md``, no empty, ``.`` or ``..`` segment.

    Args:
        value: the path.

    Returns:
        What is wrong, or ``None``.
    """
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    size = utf8_size(value)
    if size is None:
        return "is not valid UTF-8 (it holds a lone surrogate)"
    if not value:
        return "must not be empty"
    if size > MAX_DOCUMENT_PATH_BYTES:
        return f"is {size:,} bytes, the limit is {MAX_DOCUMENT_PATH_BYTES:,}"
    if "\\" in value:
        return f"{show(value)} must not contain a backslash"
    if value.startswith("/") or _DRIVE.match(value):
        return f"{show(value)} must be relative, not absolute"
    control = _control_char(value)
    if control is not None:
        return f"control character U+{ord(control):04X} is not allowed"
    for segment in value.split("/"):
        if segment in ("", ".", ".."):
            return f"segment {segment!r} is not allowed" if segment else "empty segment is not allowed"
    if not value.endswith(".md"):
        return f"{show(value)} must end with '.md'"
    return None


def evidence_ids_problem(value: object) -> str | None:
    """Check evidenceIds: 1..256 sha256 digests in strictly ascending order (so no duplicates).

    Args:
        value: the evidence ids.

    Returns:
        What is wrong, or ``None``.
    """
    if isinstance(value, str) or not isinstance(value, Sequence):
        return f"must be an array, got {type(value).__name__}"
    if not 1 <= len(value) <= MAX_EVIDENCE_IDS:
        return f"has {len(value)} entries, it must have 1..{MAX_EVIDENCE_IDS}"
    for index, item in enumerate(value):
        problem = digest_problem(item)
        if problem is not None:
            return f"[{index}] {problem}"
        if index and value[index - 1] >= item:
            relation = "repeats" if value[index - 1] == item else "sorts before"
            return f"[{index}] {relation} [{index - 1}]: ids must be strictly ascending"
    return None


def raise_first(error: type[Exception], where: str, checks: Sequence[tuple[str, str | None]]) -> None:
    """Raise ``error("<where>.<field>: <problem>")`` for the first ``(field, problem)`` with a problem."""
    for field, problem in checks:
        if problem is not None:
            raise error(f"{where}.{field}: {problem}")


def exact_problem(value: object, expected: str) -> str | None:
    """What is wrong with ``value`` as the exact schema string ``expected``, or ``None``."""
    return None if value == expected else f"{show(value)} is not the exact schema {expected!r}"


def recompute_problem(stated: str, recomputed: str, consequence: str = "") -> str | None:
    """What is wrong with a ``stated`` digest that is not the ``recomputed`` one (``consequence`` appended)."""
    if stated == recomputed:
        return None
    return f"{stated} does not match the recomputed {recomputed}{consequence}"
