"""``openai:``, an embedder over an OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI's, or a
local server's such as Ollama's or llama.cpp's).

A spec is ``openai:MODEL`` with options after ``?``, URL-query style:
``openai:text-embedding-3-small?base_url=http://127.0.0.1:11434/v1&key_env=LOCAL_KEY``. Options:
``base_url`` (default OpenAI's, ``https://api.openai.com/v1``), ``key_env`` (the environment
variable holding the API key, default ``OPENAI_API_KEY``, read as every backend reads its key:
the environment, then ``./.env``), ``dimensions`` (asked of models that can shorten their vectors)
and ``timeout`` (seconds per request, default 30). The key itself is never part of the spec, so
it is in no setting, trace or log line; only the variable's name is. The request goes through
the ``openai`` client (two retries with backoff on 429, 5xx and timeouts); a failure is a
``ProviderError`` naming the spec's model and endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

from grapharc.errors import ConfigurationError
from grapharc.gateway.credentials import credential
from grapharc.gateway.errors import ProviderError

OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_TIMEOUT = 30.0
OPTIONS = ("base_url", "key_env", "dimensions", "timeout")


class OpenAIEmbedder:
    """Texts embedded by ``model`` at ``base_url``'s ``/embeddings``, one request per call."""

    def __init__(self, model: str, *, base_url: str = OPENAI_BASE_URL, api_key: str,
                 dimensions: int | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        from openai import OpenAI  # the client library only when an embedder is built

        self.model, self.base_url, self.dimensions = model, base_url, dimensions
        self._client = OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=2)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r})"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order; a failed or malformed answer is a ``ProviderError``."""
        import openai

        extra: dict[str, Any] = {} if self.dimensions is None else {"dimensions": self.dimensions}
        where = f"openai:{self.model} at {self.base_url}"
        try:
            answer = self._client.embeddings.create(model=self.model, input=list(texts),
                                                    encoding_format="float", **extra)
        except openai.APIStatusError as exc:
            raise ProviderError(where, f"HTTP {exc.status_code}: {exc.message}",
                                status_code=exc.status_code) from exc
        except openai.APIError as exc:  # a timeout, a refused or broken connection, a bad body
            raise ProviderError(where, str(exc), retryable=True) from exc
        vectors = [item.embedding for item in sorted(answer.data, key=lambda item: item.index)]
        if len(vectors) != len(texts):
            raise ProviderError(where, f"answered {len(vectors)} vectors for {len(texts)} texts")
        return vectors


def _options(spec: str, query: str) -> dict[str, str]:
    """The spec's options, each given once and known."""
    try:
        given = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as exc:
        raise ConfigurationError(f"embedder spec {spec!r} has options that cannot be read: {exc}",
                                 hint="write openai:MODEL?base_url=URL&key_env=NAME") from exc
    unknown = sorted(set(given) - set(OPTIONS))
    if unknown:
        raise ConfigurationError(f"embedder spec {spec!r} has the unknown option {unknown[0]!r}",
                                 hint=f"options: {', '.join(OPTIONS)}")
    repeated = sorted(name for name, values in given.items() if len(values) > 1)
    if repeated:
        raise ConfigurationError(f"embedder spec {spec!r} gives the option {repeated[0]!r} twice")
    return {name: values[0] for name, values in given.items()}


def _number(spec: str, options: dict[str, str], name: str, kind: type[int] | type[float]) -> Any:
    """The option ``name`` as a positive number of ``kind``, or None when it is not given."""
    if name not in options:
        return None
    try:
        number = kind(options[name])
    except ValueError:
        number = 0
    if number <= 0:
        raise ConfigurationError(f"embedder spec {spec!r} has {name}={options[name]!r}, "
                                 "which is not a positive number")
    return number


def open_openai_embedder(argument: str) -> OpenAIEmbedder:
    """The embedder of the spec ``openai:<argument>``; see the module for the options."""
    spec = f"openai:{argument}"
    model, _, query = argument.partition("?")
    if not model:
        raise ConfigurationError(f"embedder spec {spec!r} names no model",
                                 hint="write openai:MODEL, such as openai:text-embedding-3-small")
    options = _options(spec, query)
    base_url = options.get("base_url", OPENAI_BASE_URL)
    if urlsplit(base_url).scheme not in ("http", "https") or not urlsplit(base_url).hostname:
        raise ConfigurationError(f"embedder spec {spec!r} has base_url={base_url!r}, which is not an "
                                 "http(s) URL", hint="for example base_url=http://127.0.0.1:11434/v1")
    dimensions = _number(spec, options, "dimensions", int)
    timeout = _number(spec, options, "timeout", float) or DEFAULT_TIMEOUT
    api_key = credential(options.get("key_env", DEFAULT_KEY_ENV))
    return OpenAIEmbedder(model, base_url=base_url, api_key=api_key, dimensions=dimensions, timeout=timeout)
