"""grapharc-gateway's hook implementations: the five model backends and the ``openai:`` embedder
(a light module).

Factories are named as strings so nothing heavier than the factory objects in
``grapharc.gateway.backends`` is imported until a model is built.
"""

from __future__ import annotations

from grapharc.plugins import BackendInfo, EmbedderInfo, RegisterBackend, RegisterEmbedder, hookimpl

WIRE_CAPABILITIES = frozenset({"completion", "tools", "structured_output", "streaming", "async"})
CLI_CAPABILITIES = frozenset({"completion", "async"})

BACKENDS = (
    BackendInfo(prefix="openai", factory="grapharc.gateway.backends:OPENAI", vendor="openai",
                capabilities=WIRE_CAPABILITIES,
                description="OpenAI's API (OPENAI_API_KEY); token counts only, so price it with "
                            "price_per_million="),
    BackendInfo(prefix="openrouter", factory="grapharc.gateway.backends:OPENROUTER", vendor="openrouter",
                capabilities=WIRE_CAPABILITIES,
                description="one key for many vendors' models (OPENROUTER_API_KEY); routing and "
                            "per-call cost"),
    BackendInfo(prefix="ollama", factory="grapharc.gateway.backends:OLLAMA", vendor="ollama",
                capabilities=WIRE_CAPABILITIES,
                description="a model on your own machine: no key, no bill (charged 0.0), no egress"),
    BackendInfo(prefix="novita", factory="grapharc.gateway.backends:NOVITA", vendor="novita",
                capabilities=WIRE_CAPABILITIES,
                description="Novita's OpenAI-compatible endpoint (NOVITA_API_KEY)"),
    BackendInfo(prefix="claude-cli", factory="grapharc.gateway.backends:CLAUDE_CLI", vendor="anthropic",
                capabilities=CLI_CAPABILITIES,
                description="claude -p as a pure inference endpoint: completion only, every tool "
                            "disabled; spends subscription quota"),
)


@hookimpl
def register_model_backends(register: RegisterBackend) -> None:
    for backend in BACKENDS:
        register(backend)


@hookimpl
def register_embedders(register: RegisterEmbedder) -> None:
    register(EmbedderInfo(scheme="openai", factory="grapharc.gateway.embeddings:open_openai_embedder",
                          description="an OpenAI-compatible /v1/embeddings endpoint: openai:MODEL"
                                      "?base_url=URL&key_env=NAME (default OpenAI's, OPENAI_API_KEY)"))
