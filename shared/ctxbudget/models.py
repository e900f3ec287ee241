"""A registry of model context windows, output reserves and tokenizers.

Figures are the providers' published limits (input window, maximum output). OpenAI families are counted exactly
with their own encoding; other families are estimated with ``o200k_base`` scaled by a per-family factor and then
calibrated by the usage the provider reports (see :mod:`ctxbudget.tokens`). Users override or add entries with
:meth:`ModelRegistry.register`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import UnknownModelError

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


class ModelRegistry:
    """Look up :class:`ModelInfo` by name; dated or suffixed names match their longest registered prefix."""

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
        """Return the entry for ``model`` (exact, else the longest prefix match, ignoring provider prefixes).

        Raises:
            UnknownModelError: ``model`` is not a string (a name can never match it).
        """
        if not isinstance(model, str):
            raise UnknownModelError(
                f"model: must be a model name (a string), got {type(model).__name__}", field="model"
            )
        key = model.strip().lower()
        if "/" in key:  # "openai/gpt-4o", "anthropic/claude-sonnet-4-5"
            key = key.rsplit("/", 1)[1]
        if key in self._models:
            return self._models[key]
        best: ModelInfo | None = None
        for name, info in self._models.items():
            if key.startswith(name) and (best is None or len(name) > len(best.name)):
                best = info
        return best

    def get(self, model: str) -> ModelInfo:
        """Return the entry for ``model`` or raise :class:`UnknownModelError` naming the model."""
        info = self.find(model)
        if info is None:
            raise UnknownModelError(
                f"model: {model!r} is not in the registry ({len(self._models)} models); pass max_tokens= "
                "explicitly or register it with ModelRegistry.register(ModelInfo(...))",
                field="model",
            )
        return info


DEFAULT_REGISTRY = ModelRegistry()
"""The process-wide default registry; register your own models on it or pass a registry explicitly."""
