"""Embedders chosen by a spec string, ``<scheme>:<argument>``, through the embedder registry.

Core registers ``hashing:`` (``grapharc.memory.hashing_embedder``, local); grapharc-gateway
registers ``openai:`` (an OpenAI-compatible ``/v1/embeddings`` endpoint); a plugin adds its own
with the ``register_embedders`` hook. Nothing is embedded unless an operator names a spec: there is
no default embedder, and the vector channel of the long-term store is off without one.
"""

from __future__ import annotations

from grapharc.errors import ConfigurationError
from grapharc.memory.retrieval import Embedder
from grapharc.plugins import UnknownNameError, registry, resolve_factory


class EmbedderSpecError(ConfigurationError, ValueError):
    """An embedder spec that cannot be read, or whose embedder did not come out as one."""


def known_embedders() -> dict[str, str]:
    """Each registered embedder scheme and its description."""
    return {scheme: entry.item.description for scheme, entry in sorted(registry("embedders").items())}


def open_embedder(spec: str) -> Embedder:
    """The embedder ``spec`` names, such as ``hashing:256`` or ``openai:text-embedding-3-small``
    (a bare scheme, ``hashing``, is its spec with an empty argument)."""
    if not isinstance(spec, str) or not spec.partition(":")[0]:
        raise EmbedderSpecError(f"embedder spec {spec!r} is not of the form <scheme>:<argument>",
                                hint=f"for example hashing:256; schemes: {', '.join(known_embedders())}")
    scheme, _, argument = spec.partition(":")
    entries = registry("embedders")
    if scheme not in entries:
        raise UnknownNameError(
            "embedder scheme", scheme, sorted(entries),
            hint="install the distribution that provides it (openai: comes with grapharc-gateway)")
    entry = entries[scheme]
    embedder = resolve_factory(entry.item.factory, plugin=entry.distribution)(argument)
    if not isinstance(embedder, Embedder):
        raise EmbedderSpecError(f"{entry.distribution}'s embedder {scheme!r} returned a "
                                f"{type(embedder).__name__}, which has no embed(texts) method")
    return embedder
