"""Backends that speak the OpenAI chat-completions wire: openai, openrouter, ollama, novita.

One table says where each one lives and which key it needs; one factory builds
a ``ChatOpenAI`` for any of them. ``langchain_openai`` is imported only here,
when a model is actually built.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from grapharc.gateway.credentials import credential


@dataclass(frozen=True)
class WireEndpoint:
    """Where an OpenAI-wire backend lives and how it authenticates."""

    backend: str
    base_url: str | None
    key_variable: str | None
    base_url_variable: str


ENDPOINTS: dict[str, WireEndpoint] = {
    "openai": WireEndpoint("openai", None, "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "openrouter": WireEndpoint("openrouter", "https://openrouter.ai/api/v1",
                               "OPENROUTER_API_KEY", "OPENROUTER_BASE_URL"),
    "ollama": WireEndpoint("ollama", "http://127.0.0.1:11434/v1", None, "OLLAMA_BASE_URL"),
    "novita": WireEndpoint("novita", "https://api.novita.ai/v3/openai",
                           "NOVITA_API_KEY", "NOVITA_BASE_URL"),
}


def build_wire_model(backend: str, model: str, **kwargs: Any) -> Any:
    """A ``ChatOpenAI`` for ``model`` on ``backend``; explicit kwargs beat the environment."""
    from langchain_openai import ChatOpenAI

    endpoint = ENDPOINTS[backend]
    base_url = kwargs.pop("base_url", None) or os.environ.get(endpoint.base_url_variable) \
        or endpoint.base_url
    api_key = kwargs.pop("api_key", None)
    if api_key is None:
        api_key = credential(endpoint.key_variable) if endpoint.key_variable else "no-key-needed"
    return ChatOpenAI(model=model, base_url=base_url, api_key=api_key, **kwargs)


def openai_model(model: str, **kwargs: Any) -> Any:
    """Factory for ``openai/<model>`` (OPENAI_API_KEY)."""
    return build_wire_model("openai", model, **kwargs)


def openrouter_model(model: str, **kwargs: Any) -> Any:
    """Factory for ``openrouter/<vendor>/<model>`` (OPENROUTER_API_KEY)."""
    return build_wire_model("openrouter", model, **kwargs)


def ollama_model(model: str, **kwargs: Any) -> Any:
    """Factory for ``ollama/<model>``: a local server, no key."""
    return build_wire_model("ollama", model, **kwargs)


def novita_model(model: str, **kwargs: Any) -> Any:
    """Factory for ``novita/<model>`` (NOVITA_API_KEY)."""
    return build_wire_model("novita", model, **kwargs)
