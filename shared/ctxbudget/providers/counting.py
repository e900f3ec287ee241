"""The counter for a model: exact, or an estimate in the provider's request shape.

Exact tiktoken for OpenAI families, the Anthropic estimate for Claude, a scaled ``o200k_base`` estimate otherwise.

The choice sits above both the messages layer's counters and :class:`~ctxbudget.providers.AnthropicCounter`, so it
lives here, in the providers layer.
"""

from __future__ import annotations

from ..errors import InvalidPolicyError
from ..messages._validation import short_repr
from ..messages.registry import DEFAULT_REGISTRY, ModelRegistry
from ..messages.tokens import EstimatingCounter, TiktokenCounter, TokenCounter
from .anthropic_tokens import AnthropicCounter

__all__ = ["counter_for_model"]


def counter_for_model(model: str, *, registry: ModelRegistry = DEFAULT_REGISTRY) -> TokenCounter:
    """Return the right counter for ``model``: exact tiktoken for OpenAI families, an estimate otherwise.

    The counter's ``exact`` property and its name (``tiktoken:...`` or ``estimate:...``) say which it is.

    Raises:
        UnknownModelError: ``model`` is not in ``registry`` (with "did you mean" suggestions); for a model the
            registry lacks, use ``EstimatingCounter()`` (``o200k_base``, factor 1) or register the model.
        InvalidPolicyError: ``registry`` is not a :class:`~ctxbudget.messages.registry.ModelRegistry`.
    """
    if not isinstance(registry, ModelRegistry):
        raise InvalidPolicyError(
            f"registry: expected a ModelRegistry, got {type(registry).__name__} {short_repr(registry)}",
            field="registry",
        )
    info = registry.get(model)
    if info.exact:
        return TiktokenCounter(info.encoding)
    if info.provider == "anthropic":  # Anthropic's block shapes and its documented tool-use system prompt
        return AnthropicCounter(info.name, factor=info.token_factor, encoding=info.encoding)
    return EstimatingCounter(info.token_factor, encoding=info.encoding)
