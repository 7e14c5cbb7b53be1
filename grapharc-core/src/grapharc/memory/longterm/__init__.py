"""The long-term store: LangGraph's ``BaseStore`` over GraphARC's item stores.

``contracts`` holds the ``ItemStore`` Protocol a backend implements (the in-process
``memory:`` one is ``inprocess.InMemoryItemStore``; grapharc-memory-sqlite serves
``sqlite:``, grapharc-postgres ``postgresql://``), ``store.GraphARCStore`` serves any of them as
a ``BaseStore``, and ``open_long_term_store("memory:", embedder="hashing:256")`` opens one by URI
through the store registry (kind ``items``), the vector channel on when an embedder is named.
``filters``, ``namespaces``, ``texts`` and ``vectors`` are the rules every backend shares. Names
are exported lazily so importing this package costs nothing.
"""

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    "ItemStore": "grapharc.memory.longterm.contracts",
    "StoredItem": "grapharc.memory.longterm.contracts",
    "ItemStoreError": "grapharc.memory.longterm.contracts",
    "InvalidItemError": "grapharc.memory.longterm.contracts",
    "InvalidItemNamespaceError": "grapharc.memory.longterm.contracts",
    "InvalidItemSearchError": "grapharc.memory.longterm.contracts",
    "ItemStoreClosedError": "grapharc.memory.longterm.contracts",
    "GraphARCStore": "grapharc.memory.longterm.store",
    "InMemoryItemStore": "grapharc.memory.longterm.inprocess",
    "open_long_term_store": "grapharc.memory.longterm.opening",
}

__all__ = list(_LAZY_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
