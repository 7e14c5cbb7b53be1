"""The ``openrouter/`` chat model: the shared wire model plus OpenRouter's routing and cost.

OpenRouter reserves credit against ``max_tokens``, so the default here is a modest
2048 rather than the model's whole output window; pass ``max_tokens=`` to change it.
Every request asks for usage accounting, so each call's ``cost_usd`` is the
provider's own figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator

from grapharc.gateway.base import WireChatModel
from grapharc.gateway.routing import ProviderRouting, routing_body

DEFAULT_MAX_TOKENS = 2048


class OpenRouterChatModel(WireChatModel):
    """A wire model whose requests carry ``fallback_models`` and ``provider`` preferences."""

    backend: str = "openrouter"
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    fallback_models: list[str] = Field(default_factory=list)
    provider: ProviderRouting | None = None

    @field_validator("provider", mode="before")
    @classmethod
    def _coerce_provider(cls, value: ProviderRouting | Mapping[str, Any] | None) -> ProviderRouting | None:
        return None if value is None else ProviderRouting.coerce(value)

    @property
    def _default_params(self) -> dict[str, Any]:
        params = super()._default_params
        params["extra_body"] = {**routing_body(self.model_name, self.fallback_models, self.provider),
                                **(params.get("extra_body") or {})}
        return params
