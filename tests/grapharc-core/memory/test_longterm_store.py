"""GraphARCStore's own duties: async calls leave the event loop free, and the TTL sweeper sweeps."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from grapharc.memory.longterm import GraphARCStore, InMemoryItemStore, StoredItem
from grapharc.testing.item_store_kit import MovableClock


class GatedItems(InMemoryItemStore):
    """An item store whose ``get`` blocks until ``gate`` is opened (or 10 s pass)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.opened_in_time: bool | None = None

    def get(self, *args: Any, **kwargs: Any) -> StoredItem | None:
        self.opened_in_time = self.gate.wait(10)
        return super().get(*args, **kwargs)


def test_an_async_call_runs_the_backend_off_the_event_loop() -> None:
    items = GatedItems()
    store = GraphARCStore(items)
    store.put(("users",), "ada", {"v": 1})

    async def scenario() -> Any:
        pending = asyncio.ensure_future(store.aget(("users",), "ada"))
        await asyncio.sleep(0.05)  # the loop runs on while the backend waits at the gate
        assert not pending.done()
        items.gate.set()
        return await pending

    found = asyncio.run(scenario())
    assert items.opened_in_time is True
    assert found is not None and found.value == {"v": 1}


class CountedSweeps(InMemoryItemStore):
    """An item store that counts the items its sweeps deleted."""

    swept = 0

    def sweep(self) -> int:
        found = super().sweep()
        self.swept += found
        return found


def test_the_ttl_sweeper_deletes_expired_items_until_stopped() -> None:
    clock = MovableClock()
    items = CountedSweeps(clock=clock)
    store = GraphARCStore(items, ttl={"sweep_interval_minutes": 0.001})
    store.put(("t",), "short", {"v": 1}, ttl=1)
    store.put(("t",), "kept", {"v": 2})
    clock.advance(2)
    done = store.start_ttl_sweeper()
    deadline = time.monotonic() + 30
    while items.swept == 0:
        assert time.monotonic() < deadline, "the sweeper never swept"
        time.sleep(0.01)
    assert store.stop_ttl_sweeper(timeout=30)
    assert done.result(timeout=30) is None
    assert [item.key for item in store.search(("t",))] == ["kept"]
