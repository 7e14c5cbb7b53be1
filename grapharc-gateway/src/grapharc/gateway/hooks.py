"""grapharc-gateway's hook implementations: the OpenAI-wire backends (light module)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grapharc.plugins import BackendInfo, hookimpl

GRAPHARC_CORE_REQUIRES = ">=0.1,<0.2"

_WIRE = frozenset({"completion", "tools", "structured_output", "streaming", "async"})

BACKENDS = (
    BackendInfo(prefix="openai", factory="grapharc.gateway.openai_wire:openai_model",
                vendor="openai", capabilities=_WIRE,
                description="OpenAI and OpenAI-compatible endpoints (OPENAI_API_KEY)"),
    BackendInfo(prefix="openrouter", factory="grapharc.gateway.openai_wire:openrouter_model",
                vendor="openrouter", capabilities=_WIRE,
                description="one key for many vendors' models (OPENROUTER_API_KEY)"),
    BackendInfo(prefix="ollama", factory="grapharc.gateway.openai_wire:ollama_model",
                vendor="ollama", capabilities=_WIRE,
                description="a model on your own machine: no key, no bill, no egress"),
    BackendInfo(prefix="novita", factory="grapharc.gateway.openai_wire:novita_model",
                vendor="novita", capabilities=_WIRE,
                description="Novita's OpenAI-compatible endpoint (NOVITA_API_KEY)"),
)


@hookimpl
def register_model_backends(register: Callable[[Any], None]) -> None:
    for backend in BACKENDS:
        register(backend)
