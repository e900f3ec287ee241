"""Offline tiktoken encodings.

tiktoken downloads its BPE rank files on first use; a machine that reaches only the package registries cannot. We
ship the two rank files current OpenAI models use (``o200k_base``, ``cl100k_base``) gzipped inside the package,
verify each against the SHA-256 tiktoken itself publishes for it, and build :class:`tiktoken.Encoding` objects from
them. The result encodes byte-for-byte like ``tiktoken.get_encoding(name)``.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from importlib import resources
from typing import Final

import tiktoken

from ..errors import EncodingDataError, UnknownModelError
from ._validation import short_repr

__all__ = ["ENCODING_NAMES", "get_encoding"]

_ENDOFTEXT = "<|endoftext|>"

# Published by tiktoken (tiktoken_ext/openai_public.py) for the downloaded files; we check the same bytes.
_EXPECTED_SHA256: Final = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

_PATTERNS: Final = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k_base": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}

_SPECIAL_TOKENS: Final = {
    "cl100k_base": {
        _ENDOFTEXT: 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {_ENDOFTEXT: 199999, "<|endofprompt|>": 200018},
}

ENCODING_NAMES: Final = tuple(sorted(_EXPECTED_SHA256))
"""The encodings available offline."""

_cache: dict[str, tiktoken.Encoding] = {}
_lock = threading.Lock()


def _load_ranks(name: str) -> dict[bytes, int]:
    resource = resources.files("ctxbudget.messages").joinpath("_encodings").joinpath(f"{name}.tiktoken.gz")
    try:
        raw = gzip.decompress(resource.read_bytes())
    except (OSError, EOFError) as exc:
        raise EncodingDataError(f"encoding {name!r}: bundled rank file unreadable: {exc}") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != _EXPECTED_SHA256[name]:
        raise EncodingDataError(
            f"encoding {name!r}: bundled rank file has sha256 {digest}, tiktoken publishes {_EXPECTED_SHA256[name]}"
        )
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def get_encoding(name: str) -> tiktoken.Encoding:
    """Return the named encoding, loaded from the bundled files (no network), cached per process.

    Raises:
        UnknownModelError: ``name`` is not one of :data:`ENCODING_NAMES`.
        EncodingDataError: the bundled file is missing or does not match tiktoken's published hash.
    """
    if not isinstance(name, str) or name not in _EXPECTED_SHA256:
        raise UnknownModelError(
            f"encoding: {short_repr(name)} is not bundled; available: {', '.join(ENCODING_NAMES)}", field="encoding"
        )
    with _lock:
        encoding = _cache.get(name)
        if encoding is None:
            encoding = tiktoken.Encoding(
                name=name,
                pat_str=_PATTERNS[name],
                mergeable_ranks=_load_ranks(name),
                special_tokens=_SPECIAL_TOKENS[name],
            )
            _cache[name] = encoding
        return encoding
