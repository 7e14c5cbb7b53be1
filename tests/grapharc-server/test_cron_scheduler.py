"""The cron scheduler in one process over a SQLite cron store: it sleeps until the next slot (here
an hour at most, so only a wake-up can make a slot fire) and looks again at once when woken, by a
schedule made here or by the cron clock moving on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from grapharc.crons.records import CronRecord
from grapharc.server import cron_clock
from grapharc.server.api.cron_scheduler import CronScheduler
from grapharc.sqlite.crons import SqliteCronStore
from grapharc.testing.cron_store_kit import a_cron

HOUR = 3600.0
HANG_GUARD_SECONDS = 60.0
"""Only a failure's bound: a passing test is woken by events long before."""


class Looks:
    """A cron store whose every look for the next slot sets an event, so a test knows the scheduler
    has looked (and gone to sleep) without waiting on time."""

    def __init__(self, store: SqliteCronStore) -> None:
        self.store = store
        self.looked = asyncio.Event()
        self._loop = asyncio.get_running_loop()

    def next_due(self) -> float | None:
        slot = self.store.next_due()
        self._loop.call_soon_threadsafe(self.looked.set)
        return slot

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


@asynccontextmanager
async def scheduler(tmp_path: Path, clock: Callable[[], float]
                    ) -> AsyncIterator[tuple[CronScheduler, SqliteCronStore, asyncio.Queue[float]]]:
    """A started scheduler reading ``clock`` that has made its first look, its store and the slots
    it fired."""
    store = SqliteCronStore(tmp_path / "runs.db")
    looks = Looks(store)
    fired: asyncio.Queue[float] = asyncio.Queue()

    async def fire(cron: CronRecord, slot: float) -> None:
        fired.put_nowait(slot)

    running = CronScheduler(looks, fire, clock=clock, max_sleep=HOUR)  # type: ignore[arg-type]
    running.start()
    try:
        async with asyncio.timeout(HANG_GUARD_SECONDS):
            await looks.looked.wait()  # the first look is done: the scheduler sleeps
            yield running, store, fired
    finally:
        await running.stop()
        store.close()


def test_a_schedule_made_here_fires_when_the_scheduler_is_woken_not_after_its_sleep(tmp_path: Path) -> None:
    async def scenario() -> float:
        async with scheduler(tmp_path, lambda: 1000.0) as (running, store, fired):
            store.add(a_cron(next_run_at=1000.0))
            running.wake()
            return await fired.get()

    assert asyncio.run(scenario()) == 1000.0


def test_a_moved_clock_wakes_the_scheduler_for_the_slot_it_reached(tmp_path: Path) -> None:
    now = [1000.0]

    async def scenario() -> float:
        async with scheduler(tmp_path, lambda: now[0]) as (_running, store, fired):
            store.add(a_cron(next_run_at=1060.0))
            now[0] = 1060.0
            cron_clock.moved()
            return await fired.get()

    assert asyncio.run(scenario()) == 1060.0


def test_an_idle_scheduler_sleeps_until_the_next_slot_at_most_its_cap(tmp_path: Path) -> None:
    async def scenario() -> tuple[float, float]:
        async with scheduler(tmp_path, lambda: 1000.0) as (running, store, _fired):
            idle = await running.tick()
            store.add(a_cron(next_run_at=1042.0))
            return idle, await running.tick()

    assert asyncio.run(scenario()) == (HOUR, 42.0)
