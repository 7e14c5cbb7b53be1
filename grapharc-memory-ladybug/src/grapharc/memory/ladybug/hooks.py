"""grapharc-memory-ladybug's hook implementations: the ``ladybug:`` scheme for claims."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grapharc.plugins import StoreInfo, hookimpl


@hookimpl
def register_stores(register: Callable[[Any], None]) -> None:
    register(StoreInfo(scheme="ladybug", kinds=frozenset({"claims"}),
                       factory="grapharc.memory.ladybug.store:open_claim_store",
                       description="claims in LadybugDB; supersession is a graph edge"))
