"""grapharc-gateway: real model backends behind core's ``backend/model`` spec grammar.

``get_model`` is core's spec resolver, re-exported so ``from grapharc.gateway import
get_model`` reaches every registered backend: ``openai/``, ``openrouter/``,
``ollama/``, ``novita/`` and ``claude-cli/``. Importing this package stays cheap:
the chat model classes (and ``langchain_openai``) load on first use.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    **dict.fromkeys(("ClaudeCLIError", "GatewayError", "MissingCredentialError", "ProviderError",
                     "SpendCeilingError"), "grapharc.gateway.errors"),
    "RetryPolicy": "grapharc.gateway.retry",
    "ProviderRouting": "grapharc.gateway.routing",
    "SpendMeter": "grapharc.gateway.spend",
    "TokenPrice": "grapharc.gateway.spend",
    **dict.fromkeys(("different_providers", "get_model", "resolve_backend", "vendor_of"),
                    "grapharc.models"),
    "WireChatModel": "grapharc.gateway.base",
    "OpenRouterChatModel": "grapharc.gateway.openrouter",
    "ClaudeCLIChatModel": "grapharc.gateway.claude_cli",
}

__all__ = [*_LAZY_EXPORTS]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
