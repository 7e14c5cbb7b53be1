"""The five backends' factories: where each lives, which key it needs, and how to probe it.

Each factory is a small callable object (``factory(model, **kwargs)`` builds the
chat model) that also offers ``probe()`` for ``grapharc models --check``. This
module stays light: the chat model classes, and with them ``langchain_openai``, are
imported only when a model is built.

Settings come from the environment, then ``./.env`` (or ``env_file=``): the API key
variable, and ``<BACKEND>_BASE_URL`` to point a backend at another endpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grapharc.gateway.credentials import credential, lookup
from grapharc.gateway.probe import endpoint_check, executable_check, key_check
from grapharc.plugins import resolve_factory

NO_KEY = "no-key-needed"


@dataclass(frozen=True)
class WireBackend:
    """An OpenAI-wire backend: its endpoint, its key variable, and the model class it builds."""

    name: str
    default_base_url: str
    key_variable: str | None
    base_url_variable: str
    model_class: str = "grapharc.gateway.base:WireChatModel"
    free: bool = False

    def base_url(self, env_file: Path | str | None = None) -> str:
        """The endpoint: ``<BACKEND>_BASE_URL`` if set, else the provider's own."""
        value, _ = lookup(self.base_url_variable, env_file=env_file)
        return (value or self.default_base_url).rstrip("/")

    def __call__(self, model: str, *, env_file: Path | str | None = None, **kwargs: Any) -> Any:
        """Build the chat model for ``model``; explicit ``base_url`` / ``api_key`` beat settings."""
        base_url = kwargs.pop("base_url", None) or self.base_url(env_file)
        api_key = kwargs.pop("api_key", None)
        if api_key is None:
            api_key = credential(self.key_variable, env_file=env_file) if self.key_variable else NO_KEY
        kwargs.setdefault("free", self.free)
        model_class = resolve_factory(self.model_class, plugin="grapharc-gateway")
        return model_class(model=model, base_url=base_url, api_key=api_key, backend=self.name, **kwargs)

    def probe(self, *, env_file: Path | str | None = None, timeout: float = 3.0) -> list[dict[str, Any]]:
        """Key present (when one is needed) and endpoint answering."""
        checks = []
        api_key = None
        if self.key_variable is not None:
            checks.append(key_check(self.key_variable, env_file=env_file))
            api_key, _ = lookup(self.key_variable, env_file=env_file)
        checks.append(endpoint_check(self.base_url(env_file), api_key, timeout=timeout))
        return checks


@dataclass(frozen=True)
class ClaudeCLIBackend:
    """The ``claude -p`` backend: no key, no endpoint, just the executable on PATH."""

    executable: str = "claude"

    def __call__(self, model: str, **kwargs: Any) -> Any:
        """Build the completion-only Claude CLI chat model for ``model``."""
        from grapharc.gateway.claude_cli import ClaudeCLIChatModel

        kwargs.setdefault("executable", self.executable)
        return ClaudeCLIChatModel(model=model, **kwargs)

    def probe(self, *, timeout: float = 10.0) -> list[dict[str, Any]]:
        """``claude`` on PATH and answering ``--version``."""
        return [executable_check(self.executable, timeout=timeout)]


OPENAI = WireBackend("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL")
OPENROUTER = WireBackend("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY",
                         "OPENROUTER_BASE_URL", model_class="grapharc.gateway.openrouter:OpenRouterChatModel")
OLLAMA = WireBackend("ollama", "http://127.0.0.1:11434/v1", None, "OLLAMA_BASE_URL", free=True)
NOVITA = WireBackend("novita", "https://api.novita.ai/v3/openai", "NOVITA_API_KEY", "NOVITA_BASE_URL")
CLAUDE_CLI = ClaudeCLIBackend()
