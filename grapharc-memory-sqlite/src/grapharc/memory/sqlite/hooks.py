"""grapharc-memory-sqlite's hook implementations: the ``sqlite:`` scheme for claims."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grapharc.plugins import StoreInfo, hookimpl


@hookimpl
def register_stores(register: Callable[[Any], None]) -> None:
    register(StoreInfo(scheme="sqlite", kinds=frozenset({"claims"}),
                       factory="grapharc.memory.sqlite.store:open_claim_store",
                       description="durable claims with provenance in one SQLite file"))
