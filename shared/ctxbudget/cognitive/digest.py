r"""The two digests of the contract: the domain-separated canonical digest and the plain SHA-256 digest.

The canonical digest of ``value`` under ``domain`` is::

    "sha256:" + hex(sha256(b"agentic-ontology-canonical-v1\0"
                           + u64_be(len(domain)) + domain
                           + u64_be(len(J)) + J))

where ``J`` is the compact JSON (no spaces, UTF-8, non-ASCII written as is) of the JSON array ``value``. Nested
structs are JSON objects with camelCase keys in declaration order; pydantic models in ``value`` are written that
way. Floats are refused: their decimal form differs between JSON implementations, so their digest would not be
portable.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ..errors import UsageError

__all__ = ["CANONICAL_PREFIX", "canonical_digest", "canonical_json", "sha256_digest"]

CANONICAL_PREFIX = b"agentic-ontology-canonical-v1\x00"
"""The fixed bytes every canonical digest starts with."""


def sha256_digest(data: bytes) -> str:
    """Return ``"sha256:"`` + the lowercase hex SHA-256 of ``data`` (no domain separation).

    Args:
        data: the bytes to hash, e.g. a document's UTF-8 content.

    Returns:
        A digest such as ``"sha256:e3b0c442..."``.

    Raises:
        UsageError: ``data`` is not bytes (e.g. a ``str``: encode it first).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise UsageError(f"sha256 digest: data must be bytes, got {type(data).__name__}", field="data")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def canonical_json(value: Sequence[Any]) -> bytes:
    """Return the compact UTF-8 JSON of ``value``, the ``J`` of the canonical digest.

    Args:
        value: a JSON array (list or tuple) of strings, integers, booleans, ``None``, nested arrays, mappings
            with string keys, or pydantic models (written with their camelCase aliases, in declaration order).

    Returns:
        The JSON bytes, with no spaces and non-ASCII characters written as UTF-8.

    Raises:
        UsageError: ``value`` is not an array, holds a float or another non-JSON value, or holds text that is
            not valid Unicode (a lone surrogate).
    """
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise UsageError(f"canonical digest: value must be a JSON array, got {type(value).__name__}", field="value")
    text = json.dumps(_jsonable(value, "value"), ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError("canonical digest: value holds text with a lone surrogate", field="value") from None


def canonical_digest(domain: str, value: Sequence[Any]) -> str:
    """Return the contract's domain-separated digest of the JSON array ``value``.

    Args:
        domain: the digest domain, e.g. ``"a3s.use.capability-snapshot.v1"``.
        value: the JSON array of fields, see :func:`canonical_json`.

    Returns:
        ``"sha256:"`` + 64 lowercase hex digits.

    Raises:
        UsageError: ``value`` cannot be written as canonical JSON, or ``domain`` is not a string of valid Unicode.
    """
    if not isinstance(domain, str):
        raise UsageError(f"canonical digest: domain must be a string, got {type(domain).__name__}", field="domain")
    try:
        domain_bytes = domain.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError("canonical digest: domain holds a lone surrogate", field="domain") from None
    body = canonical_json(value)
    framed = (
        CANONICAL_PREFIX + struct.pack(">Q", len(domain_bytes)) + domain_bytes + struct.pack(">Q", len(body)) + body
    )
    return sha256_digest(framed)


def _jsonable(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                raise UsageError(f"canonical digest: {where} has a non-string key {key!r}", field="value")
        return {key: _jsonable(item, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item, f"{where}[{index}]") for index, item in enumerate(value)]
    raise UsageError(
        f"canonical digest: {where} is a {type(value).__name__}, which has no canonical JSON form", field="value"
    )
