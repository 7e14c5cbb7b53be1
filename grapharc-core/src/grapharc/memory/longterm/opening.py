"""``open_long_term_store``: a ``GraphARCStore`` over the ``ItemStore`` a URI names.

The backend comes from the store registry's ``items`` kind, so ``memory:`` (core),
``sqlite:PATH`` (grapharc-memory-sqlite), ``postgresql://...`` (grapharc-postgres) and whatever a
plugin registers open alike. With an ``embedder`` (an ``Embedder``, or a spec such as
``hashing:256`` read by ``grapharc.memory.embedders``) the backend's ``query`` search adds the
vector channel (``grapharc.memory.longterm.vectors``); the backend's factory must take it.
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import TTLConfig

from grapharc.memory.embedders import open_embedder
from grapharc.memory.longterm.store import GraphARCStore
from grapharc.memory.retrieval import Embedder
from grapharc.stores.uris import open_store


def open_long_term_store(uri: str, *, ttl: TTLConfig | None = None,
                         index_fields: Sequence[str] | None = None,
                         embedder: Embedder | str | None = None) -> GraphARCStore:
    """Open the item store ``uri`` names as a LangGraph ``BaseStore``; see ``GraphARCStore``."""
    if isinstance(embedder, str):
        embedder = open_embedder(embedder)
    options = {} if embedder is None else {"embedder": embedder}
    return GraphARCStore(open_store(uri, kind="items", **options), ttl=ttl, index_fields=index_fields)
