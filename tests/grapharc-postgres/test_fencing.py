"""A worker whose lease was taken over cannot write a checkpoint on PostgreSQL, and the lease is
checked in the write's own transaction: a pre-check that passed before the takeover does not
let the write through, and no takeover can land between the check and the write."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base.id import uuid6

from grapharc.postgres.checkpoints import PostgresCheckpoints
from grapharc.postgres.fencing import FencingPostgresSaver
from grapharc.postgres.sessions import PostgresSessionStore
from grapharc.session import LeaseLostError, SessionBusyError
from grapharc.session.fencing import Leases, fence
from grapharc.session.lease import Lease
from grapharc.testing.langgraph_suite import run_langgraph_suite, sync_capabilities, threaded

TTL = 10.0


@pytest.fixture
def stores(postgres_uri: str) -> Any:
    """The session store and the checkpoint provider on this test's database."""
    store, checkpoints = PostgresSessionStore(postgres_uri), PostgresCheckpoints(postgres_uri)
    yield store, checkpoints
    checkpoints.close()
    store.close()


def config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": None}}


def checkpoint() -> dict[str, Any]:
    return {"v": 4, "id": str(uuid6()), "ts": "2026-12-01T00:00:00+00:00", "channel_values": {"x": [1]},
            "channel_versions": {"x": 1}, "versions_seen": {}}


def rows(uri: str, thread_id: str) -> dict[str, int]:
    """How many checkpoint, blob and write rows the thread has."""
    with psycopg.connect(uri) as conn:
        return {table: conn.execute(f"SELECT COUNT(*) FROM {table} WHERE thread_id = %s",
                                    (thread_id,)).fetchone()[0]
                for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")}


def taken_over(store: PostgresSessionStore) -> tuple[Leases, Lease]:
    """Runner A's leases after runner B took thread t over; A's own pre-check would still say it
    holds the thread (as a check made just before the takeover did)."""
    store.create("t", "g", 1.0)
    stale = store.claim_start("t", runner="A", ttl=TTL, now=2.0, input={}, inbox=None)
    leases = Leases(lambda lease: True)
    leases.held["t"] = stale
    store.claim_recovery("t", runner="B", ttl=TTL, now=2.0 + 2 * TTL)
    return leases, stale


def test_a_worker_whose_lease_was_taken_over_writes_no_checkpoint(postgres_uri: str, stores: Any) -> None:
    store, checkpoints = stores
    leases, _ = taken_over(store)
    saver = fence(checkpoints.saver(), leases)
    with pytest.raises(LeaseLostError, match="runner A lost its lease on thread t"):
        saver.put(config("t"), checkpoint(), {"step": 1}, {"x": 1})
    with pytest.raises(LeaseLostError, match="runner A"):
        saver.put_writes({"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}},
                         [("x", "late")], "task-1")
    assert rows(postgres_uri, "t") == {"checkpoints": 0, "checkpoint_blobs": 0, "checkpoint_writes": 0}
    assert store.get("t").runner == "B"


def test_an_async_worker_whose_lease_was_taken_over_writes_no_checkpoint(postgres_uri: str,
                                                                        stores: Any) -> None:
    store, checkpoints = stores
    leases, _ = taken_over(store)

    async def scenario() -> None:
        async with checkpoints.async_saver() as opened:
            saver = fence(opened, leases)
            with pytest.raises(LeaseLostError, match="runner A lost its lease on thread t"):
                await saver.aput(config("t"), checkpoint(), {"step": 1}, {"x": 1})
            with pytest.raises(LeaseLostError, match="runner A"):
                await saver.aput_writes(
                    {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}},
                    [("x", "late")], "task-1")

    asyncio.run(scenario())
    assert rows(postgres_uri, "t") == {"checkpoints": 0, "checkpoint_blobs": 0, "checkpoint_writes": 0}


def test_the_current_lease_holder_and_an_unleased_thread_write_as_usual(postgres_uri: str,
                                                                      stores: Any) -> None:
    store, checkpoints = stores
    store.create("t", "g", 1.0)
    leases = Leases(lambda lease: False)  # never consulted: the check is the write's own
    leases.held["t"] = store.claim_start("t", runner="A", ttl=TTL, now=2.0, input={}, inbox=None)
    saver = fence(checkpoints.saver(), leases)
    stored = saver.put(config("t"), checkpoint(), {"step": 1}, {"x": 1})
    saver.put_writes(stored, [("x", "more")], "task-1")
    saver.put(config("unleased"), checkpoint(), {"step": 1}, {"x": 1})
    assert rows(postgres_uri, "t") == {"checkpoints": 1, "checkpoint_blobs": 1, "checkpoint_writes": 1}
    assert rows(postgres_uri, "unleased")["checkpoints"] == 1


def test_no_takeover_lands_between_the_lease_check_and_the_write(postgres_uri: str, stores: Any) -> None:
    store, checkpoints = stores
    store.create("t", "g", 1.0)
    leases = Leases(lambda lease: True)
    leases.held["t"] = store.claim_start("t", runner="A", ttl=TTL, now=2.0, input={}, inbox=None)
    refused: list[str] = []

    class StealingBeforeTheWrite(FencingPostgresSaver):
        """Tries to take the thread over once its lease was checked, just before each write."""

        def _pinned_to(self, conn: Any) -> Any:
            with pytest.raises(SessionBusyError, match="being claimed by another runner") as busy:
                store.claim_recovery("t", runner="B", ttl=TTL, now=2.0 + 2 * TTL)
            refused.append(str(busy.value))
            return super()._pinned_to(conn)

    saver = fence(StealingBeforeTheWrite(checkpoints.saver().database), leases)
    saver.put(config("t"), checkpoint(), {"step": 1}, {"x": 1})
    assert refused, "the write never ran inside a transaction holding the lease check"
    assert rows(postgres_uri, "t")["checkpoints"] == 1
    store.claim_recovery("t", runner="B", ttl=TTL, now=2.0 + 2 * TTL)  # once the write committed
    with pytest.raises(LeaseLostError, match="runner A"):
        saver.put(config("t"), checkpoint(), {"step": 2}, {"x": 2})
    assert rows(postgres_uri, "t")["checkpoints"] == 1


class _ClaimedOnFirstWrite(dict[str, Lease]):
    """Every thread a write names is created and claimed in the session store on first sight,
    so each write of LangGraph's suite passes the in-transaction fence with a real lease."""

    def __init__(self, store: PostgresSessionStore) -> None:
        super().__init__()
        self.store = store

    def get(self, thread_id: str, default: Any = None) -> Lease:
        if thread_id not in self:
            self.store.create(thread_id, "g", 1.0)
            self[thread_id] = self.store.claim_start(thread_id, runner="suite", ttl=3600.0, now=2.0,
                                                     input={}, inbox=None)
        return self[thread_id]


def claimed_on_first_write(store: PostgresSessionStore) -> Leases:
    leases = Leases(lambda lease: False)  # never consulted: the check is the write's own
    leases.held = _ClaimedOnFirstWrite(store)
    return leases


def test_the_savers_fenced_in_transaction_pass_langgraphs_conformance_suite(stores: Any) -> None:
    store, checkpoints = stores
    leases = claimed_on_first_write(store)

    @asynccontextmanager
    async def fenced_async() -> AsyncIterator[Any]:
        async with checkpoints.async_saver() as saver:
            yield fence(saver, leases)

    run_langgraph_suite("async saver fenced in transaction", fenced_async)
    sync = fence(checkpoints.saver(), leases)
    run_langgraph_suite("sync saver fenced in transaction", threaded(sync), sync_capabilities(sync))
    assert leases.held, "the suite's writes never reached the fence"
