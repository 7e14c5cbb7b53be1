"""grapharc-memory-sqlite's hook implementations: the ``sqlite:`` scheme for claims, artifacts and items.

It is the local default for claims: a bare path where a claim store is expected (``--memory
notes.db``, ``memory = "notes.db"``) means ``sqlite:`` at that path.
"""

from __future__ import annotations

from grapharc.plugins import RegisterStore, StoreInfo, hookimpl


@hookimpl
def register_stores(register: RegisterStore) -> None:
    register(StoreInfo(scheme="sqlite", kinds=frozenset({"claims"}),
                       factory="grapharc.memory.sqlite.store:open_claim_store",
                       description="durable claims with provenance in one SQLite file",
                       local_default=True))
    register(StoreInfo(scheme="sqlite", kinds=frozenset({"artifacts"}),
                       factory="grapharc.memory.sqlite.artifacts:open_artifact_store",
                       description="versioned artifacts in the claims file, blobs in FILE.blobs/"))
    register(StoreInfo(scheme="sqlite", kinds=frozenset({"items"}),
                       factory="grapharc.memory.sqlite.items:open_item_store",
                       description="the long-term store's items (LangGraph BaseStore) in one SQLite file"))
