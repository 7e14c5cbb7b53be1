"""grapharc-gateway: real model backends behind core's ``backend/model`` spec grammar.

``get_model`` is core's spec resolver, re-exported so ``from grapharc.gateway import
get_model`` reaches every registered backend: ``openai/``, ``openrouter/``,
``ollama/``, ``novita/`` and ``claude-cli/``. Importing this package stays cheap:
the chat model classes (and ``langchain_openai``) load on first use.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports
from grapharc.gateway.errors import (
    ClaudeCLIError,
    GatewayError,
    MissingCredentialError,
    ProviderError,
    SpendCeilingError,
)
from grapharc.gateway.retry import RetryPolicy
from grapharc.gateway.routing import ProviderRouting
from grapharc.gateway.spend import SpendMeter, TokenPrice
from grapharc.models import different_providers, get_model, resolve_backend, vendor_of

_LAZY_EXPORTS = {
    "WireChatModel": "grapharc.gateway.base",
    "OpenRouterChatModel": "grapharc.gateway.openrouter",
    "ClaudeCLIChatModel": "grapharc.gateway.claude_cli",
}

__all__ = [
    "ClaudeCLIError",
    "GatewayError",
    "MissingCredentialError",
    "ProviderError",
    "ProviderRouting",
    "RetryPolicy",
    "SpendCeilingError",
    "SpendMeter",
    "TokenPrice",
    "different_providers",
    "get_model",
    "resolve_backend",
    "vendor_of",
    *_LAZY_EXPORTS,
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
