"""grapharc-memory-ladybug's hook implementations: the ``ladybug:`` scheme for claims."""

from __future__ import annotations

from grapharc.plugins import RegisterStore, StoreInfo, hookimpl


@hookimpl
def register_stores(register: RegisterStore) -> None:
    register(StoreInfo(scheme="ladybug", kinds=frozenset({"claims"}),
                       factory="grapharc.memory.ladybug.store:open_claim_store",
                       description="claims in LadybugDB; supersession is a graph edge"))
