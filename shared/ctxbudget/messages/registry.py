"""A registry of model context windows, output reserves and tokenizers.

Figures are the providers' published limits (input window, maximum output). OpenAI families are counted exactly
with their own encoding; other families are estimated with ``o200k_base`` scaled by a per-family factor and then
calibrated by the usage the provider reports (see :mod:`ctxbudget.messages.tokens`). Users override or add entries with
:meth:`ModelRegistry.register`.

Names are matched forgivingly but never loosely:

* provider prefixes are accepted: ``openai:gpt-4o`` (LangChain's ``init_chat_model`` form), ``openai/gpt-4o`` and
  ``bedrock/anthropic.claude-...`` (LiteLLM, OpenRouter), ``anthropic.claude-...-v1:0`` and
  ``us.anthropic.claude-...`` (Bedrock model ids), ``claude-3.5-sonnet`` (dotted versions);
* a dated or suffixed name matches its longest registered prefix when the prefix ends at a separator
  (``gpt-4o-2024-08-06``, ``claude-3-5-sonnet@20240620``), never inside a version (``gpt-4.5`` is not ``gpt-4``);
* anything else is unknown, and :meth:`ModelRegistry.get` raises :class:`~ctxbudget.errors.UnknownModelError` with
  the nearest registered names ("did you mean") and the fix.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import UnknownModelError

__all__ = ["DEFAULT_REGISTRY", "ModelInfo", "ModelRegistry", "Provider"]

Provider = Literal["openai", "anthropic", "google", "meta", "mistral", "other"]


class ModelInfo(BaseModel):
    """What ctxbudget needs to know about one model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="Canonical model name; also matched as a prefix of dated names.")
    provider: Provider
    context_window: int = Field(gt=0, description="Total tokens the model reads and writes in one request.")
    max_output_tokens: int = Field(gt=0, description="Tokens reserved for the reply.")
    encoding: str = Field(default="o200k_base", description="tiktoken encoding used for counting.")
    exact: bool = Field(default=False, description="True when `encoding` is the model's own tokenizer.")
    token_factor: float = Field(
        default=1.0, gt=0, description="Initial estimate of provider tokens per counted token (non-exact models)."
    )

    @property
    def input_budget(self) -> int:
        """Tokens available for the prompt once the output reserve is set aside."""
        return max(1, self.context_window - self.max_output_tokens)


def _openai(name: str, window: int, output: int, encoding: str = "o200k_base") -> ModelInfo:
    return ModelInfo(
        name=name, provider="openai", context_window=window, max_output_tokens=output, encoding=encoding, exact=True
    )


def _other(name: str, provider: Provider, window: int, output: int, factor: float) -> ModelInfo:
    return ModelInfo(name=name, provider=provider, context_window=window, max_output_tokens=output, token_factor=factor)


_BUILTIN: tuple[ModelInfo, ...] = (
    # OpenAI: exact.
    _openai("gpt-5", 400_000, 128_000),
    _openai("gpt-5-mini", 400_000, 128_000),
    _openai("gpt-5-nano", 400_000, 128_000),
    _openai("gpt-4.1", 1_047_576, 32_768),
    _openai("gpt-4.1-mini", 1_047_576, 32_768),
    _openai("gpt-4.1-nano", 1_047_576, 32_768),
    _openai("gpt-4o", 128_000, 16_384),
    _openai("gpt-4o-mini", 128_000, 16_384),
    _openai("o1", 200_000, 100_000),
    _openai("o3", 200_000, 100_000),
    _openai("o3-mini", 200_000, 100_000),
    _openai("o4-mini", 200_000, 100_000),
    _openai("gpt-4-turbo", 128_000, 4_096, "cl100k_base"),
    _openai("gpt-4", 8_192, 4_096, "cl100k_base"),
    _openai("gpt-3.5-turbo", 16_385, 4_096, "cl100k_base"),
    # Anthropic: estimated, then calibrated.
    _other("claude-opus-4-5", "anthropic", 200_000, 64_000, 1.15),
    _other("claude-sonnet-4-5", "anthropic", 200_000, 64_000, 1.15),
    _other("claude-haiku-4-5", "anthropic", 200_000, 64_000, 1.15),
    _other("claude-opus-4-1", "anthropic", 200_000, 32_000, 1.15),
    _other("claude-opus-4", "anthropic", 200_000, 32_000, 1.15),
    _other("claude-sonnet-4", "anthropic", 200_000, 64_000, 1.15),
    _other("claude-3-7-sonnet", "anthropic", 200_000, 64_000, 1.15),
    _other("claude-3-5-sonnet", "anthropic", 200_000, 8_192, 1.15),
    _other("claude-3-5-haiku", "anthropic", 200_000, 8_192, 1.15),
    # Google.
    _other("gemini-2.5-pro", "google", 1_048_576, 65_536, 1.0),
    _other("gemini-2.5-flash", "google", 1_048_576, 65_536, 1.0),
    _other("gemini-2.5-flash-lite", "google", 1_048_576, 65_536, 1.0),
    _other("gemini-2.0-flash", "google", 1_048_576, 8_192, 1.0),
    _other("gemini-1.5-pro", "google", 2_097_152, 8_192, 1.0),
    # Meta.
    _other("llama-4-maverick", "meta", 1_048_576, 8_192, 1.05),
    _other("llama-4-scout", "meta", 10_485_760, 8_192, 1.05),
    _other("llama-3.3-70b", "meta", 131_072, 8_192, 1.05),
    _other("llama-3.1-405b", "meta", 131_072, 8_192, 1.05),
    _other("llama-3.1-70b", "meta", 131_072, 8_192, 1.05),
    _other("llama-3.1-8b", "meta", 131_072, 8_192, 1.05),
    # Mistral.
    _other("mistral-large", "mistral", 131_072, 8_192, 1.1),
    _other("mistral-medium", "mistral", 131_072, 8_192, 1.1),
    _other("mistral-small", "mistral", 131_072, 8_192, 1.1),
    _other("codestral", "mistral", 262_144, 8_192, 1.1),
    _other("ministral-8b", "mistral", 131_072, 8_192, 1.1),
)


_PROVIDER_PREFIX = re.compile(r"^[a-z][a-z0-9_-]*:(?=.)")
"""``openai:``, ``bedrock_converse:``: LangChain's ``init_chat_model`` provider prefix (never a dotted Bedrock id)."""
_BEDROCK_VENDOR = re.compile(r"^(?:(?:us|eu|apac|au|jp|ca|us-gov|global)\.)?[a-z][a-z0-9-]*\.(?=[a-z])")
"""``anthropic.``, ``us.anthropic.``, ``mistral.``: the region and vendor of a Bedrock model id."""
_VERSION_DOT = re.compile(r"(?<=\d)\.(?=\d)")
"""The dot of ``claude-3.5-sonnet`` (OpenRouter's spelling of ``claude-3-5-sonnet``)."""
_SUGGESTIONS = 3
"""How many near names a "did you mean" offers."""
_CUTOFF = 0.6
"""The least likeness a suggestion needs (difflib's ``get_close_matches`` default)."""


def _candidates(model: str) -> list[str]:
    """The keys to try for ``model``, most literal first: as given, then with provider and vendor prefixes removed."""
    key = model.strip().lower()
    keys = [key]
    path = key.rsplit("/", 1)[-1]
    bare = _PROVIDER_PREFIX.sub("", path, count=1)
    for stripped in (path, bare, _BEDROCK_VENDOR.sub("", bare, count=1)):
        if stripped and stripped not in keys:
            keys.append(stripped)
    return keys


class ModelRegistry:
    """Look up :class:`ModelInfo` by name; provider prefixes, dated and suffixed names are accepted (see above)."""

    def __init__(self, models: Iterable[ModelInfo] = _BUILTIN) -> None:
        self._models: dict[str, ModelInfo] = {}
        for info in models:
            self.register(info)

    def register(self, info: ModelInfo) -> None:
        """Add or replace a model entry."""
        self._models[info.name.lower()] = info

    def names(self) -> list[str]:
        """Return every registered model name, sorted."""
        return sorted(self._models)

    def find(self, model: str) -> ModelInfo | None:
        """Return the entry for ``model``: exact, else the longest registered prefix ending at a separator.

        Each spelling is tried in turn: as given, without a ``provider/`` path, without a ``provider:`` prefix,
        without a Bedrock region and vendor; a dotted version (``claude-3.5``) also as ``claude-3-5``.

        Raises:
            UnknownModelError: ``model`` is not a string (a name can never match it).
        """
        if not isinstance(model, str):
            raise UnknownModelError(
                f"model: must be a model name (a string), got {type(model).__name__}", field="model"
            )
        for key in _candidates(model):
            info = self._match(key) or self._match_dotted(key)
            if info is not None:
                return info
        return None

    def _match(self, key: str) -> ModelInfo | None:
        if key in self._models:
            return self._models[key]
        best: ModelInfo | None = None
        for name, info in self._models.items():
            if _extends(key, name) and (best is None or len(name) > len(best.name)):
                best = info
        return best

    def _match_dotted(self, key: str) -> ModelInfo | None:
        """``claude-3.5-sonnet`` as ``claude-3-5-sonnet``, only when the match spans the dot (not ``gpt-4.5``)."""
        first = _VERSION_DOT.search(key)
        if first is None:
            return None
        info = self._match(_VERSION_DOT.sub("-", key))
        return info if info is not None and len(info.name) > first.start() else None

    def suggest(self, model: str) -> list[str]:
        """Up to three registered names closest to ``model`` (best first), for a "did you mean" hint."""
        keys = _candidates(model) if isinstance(model, str) else []
        scored = sorted((-max((_likeness(key, name) for key in keys), default=0.0), name) for name in self._models)
        return [name for score, name in scored[:_SUGGESTIONS] if -score >= _CUTOFF]

    def get(self, model: str) -> ModelInfo:
        """Return the entry for ``model``.

        Raises:
            UnknownModelError: ``model`` is not registered; the message names the nearest names and the fix, and
                the error carries them as ``model`` and ``suggestions``.
        """
        info = self.find(model)
        if info is None:
            raise self.unknown(model)
        return info

    def unknown(self, model: str) -> UnknownModelError:
        """The error for an unregistered ``model``: nearest names, then how to give the window instead."""
        suggestions = self.suggest(model)
        quoted = [repr(name) for name in suggestions]
        hint = f" Did you mean {' or '.join(filter(None, [', '.join(quoted[:-1]), *quoted[-1:]]))}?" if quoted else ""
        return UnknownModelError(
            f"model: {model!r} is not in the model registry ({len(self._models)} models), so its window is "
            f"unknown.{hint} Give the window yourself: max_tokens=N in Python, --max-tokens N on the ctxbudget "
            "command line; or register the model: DEFAULT_REGISTRY.register(ModelInfo(name=..., provider=..., "
            "context_window=..., max_output_tokens=...))",
            field="model",
            model=model,
            suggestions=tuple(suggestions),
        )


def _likeness(key: str, name: str) -> float:
    """How alike ``key`` and ``name`` are (difflib's ratio), also comparing a dated key's stem with the name."""
    whole = difflib.SequenceMatcher(None, key, name).ratio()
    return max(whole, difflib.SequenceMatcher(None, key[: len(name) + 1], name).ratio())


def _extends(key: str, name: str) -> bool:
    """``key`` is ``name`` followed by a separator (``-``, ``:``, ``@``, ...), not a digit, letter or dot."""
    if not key.startswith(name) or len(key) == len(name):
        return key == name
    following = key[len(name)]
    return not (following.isalnum() or following == ".")


DEFAULT_REGISTRY = ModelRegistry()
"""The process-wide default registry; register your own models on it or pass a registry explicitly."""
