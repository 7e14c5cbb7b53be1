"""grapharc-gateway: real model backends behind core's ``backend/model`` spec grammar.

``get_model`` is core's spec resolver, re-exported so ``from grapharc.gateway import
get_model`` reaches every registered backend: ``openai/``, ``openrouter/``,
``ollama/``, ``novita/`` and ``claude-cli/``. Importing this package stays cheap:
the chat model classes (and ``langchain_openai``) load on first use.
"""

from __future__ import annotations

from typing import Any

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
from grapharc.gateway.vendors import different_providers, vendor_of
from grapharc.models import get_model, resolve_backend

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


def __getattr__(name: str) -> Any:
    module_name = _LAZY_EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'grapharc.gateway' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
