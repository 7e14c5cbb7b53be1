"""``open_long_term_store``: a ``GraphARCStore`` over the ``ItemStore`` a URI names.

The backend comes from the store registry's ``items`` kind, so ``memory:`` (core),
``sqlite:PATH`` (grapharc-memory-sqlite) and whatever a plugin registers open alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import TTLConfig

from grapharc.memory.longterm.store import GraphARCStore
from grapharc.stores.uris import open_store


def open_long_term_store(uri: str, *, ttl: TTLConfig | None = None,
                         index_fields: Sequence[str] | None = None) -> GraphARCStore:
    """Open the item store ``uri`` names as a LangGraph ``BaseStore``; see ``GraphARCStore``."""
    return GraphARCStore(open_store(uri, kind="items"), ttl=ttl, index_fields=index_fields)
