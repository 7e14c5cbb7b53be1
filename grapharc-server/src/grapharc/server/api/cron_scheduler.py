"""Each ``grapharc serve`` process's cron scheduler: it fires the schedules whose slot has come.

The loop reads the time (``grapharc.server.cron_clock``, the one clock it reads) and the earliest
slot of any schedule (``CronStore.next_due``, a read: an idle look writes nothing). When that slot
has come it asks the store for the schedules due, and for each claims the slot by moving the
schedule's ``next_run_at`` from that slot on to its first slot after *now*
(``CronStore.claim_slot``, one conditional UPDATE): whichever process's scheduler moves it fires the
slot, every other finds it moved. So a slot fires once however many processes serve the store, a
restarted server carries on from the stored next slot, and slots missed while no server ran are one
catch-up run (the next slot is counted from now, not from the missed one), never a burst.

Between looks the loop sleeps until the earliest slot, at most ``MAX_SLEEP_SECONDS``: a schedule
made, changed or deleted through this process wakes it at once (``wake``), a clock that jumps
wakes it (``cron_clock.moved``), and one made or changed through another process serving the same
store is seen within ``MAX_SLEEP_SECONDS`` (its first slot fires up to that late).

Each slot's run, or why it was refused, is a line on the server's stderr. A claimed slot whose run
is then refused (its thread busy under ``reject``, deleted, its input no longer fitting the graph)
is not retried: the schedule waits for its next slot. A
process that dies between claiming a slot and queueing its run loses that slot's run (a slot
fires at most once).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from grapharc.crons.contracts import CronStore
from grapharc.crons.records import CronRecord
from grapharc.crons.schedule import following
from grapharc.errors import GraphARCError
from grapharc.server import cron_clock
from grapharc.stores import offload

MAX_SLEEP_SECONDS = 30.0
"""The longest the scheduler sleeps unwoken: how late it may see another process's new schedule."""
RETRY_SECONDS = 1.0
"""How soon the scheduler looks again after a look failed."""

Fire = Callable[[CronRecord, float], Awaitable[None]]
"""Start the run of a schedule's slot (the schedule as it was when due, the slot's epoch seconds)."""

_log = logging.getLogger("grapharc.server")


class CronScheduler:
    """The loop that fires due slots of ``crons`` through ``fire``, reading time from ``clock`` and
    sleeping at most ``max_sleep`` seconds between looks."""

    def __init__(self, crons: CronStore, fire: Fire, *, clock: cron_clock.Clock = cron_clock.now,
                 max_sleep: float = MAX_SLEEP_SECONDS) -> None:
        self.crons = crons
        self.fire = fire
        self.clock = clock
        self.max_sleep = max_sleep
        self._wake = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        self._unlisten: Callable[[], None] | None = None

    def start(self) -> None:
        """Start the loop on the running event loop, woken whenever the cron clock moves."""
        loop = asyncio.get_running_loop()

        def moved() -> None:
            with contextlib.suppress(RuntimeError):  # the loop already closed: nothing to wake
                loop.call_soon_threadsafe(self._wake.set)

        self._unlisten = cron_clock.listen(moved)
        self._loop = loop.create_task(self._run(), name="crons")

    def wake(self) -> None:
        """Look again now (a schedule was made, changed or deleted here)."""
        self._wake.set()

    async def stop(self) -> None:
        """Stop the loop (a run already queued stays queued)."""
        if self._unlisten is not None:
            self._unlisten()
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop

    async def _run(self) -> None:
        """Look, then sleep until the next slot or a wake. The wait is ``asyncio.timeout``, not
        ``wait_for``, for the reason ``RunWorker._run`` gives."""
        while True:
            self._wake.clear()  # before the look: a wake during it makes the next look at once
            pause = RETRY_SECONDS
            try:
                pause = await self.tick()
            except GraphARCError as exc:  # the store failed this time (unreachable, locked): try again
                _log.warning("the cron scheduler could not read its schedules: %s", exc)
            except Exception:  # the loop outlives any one tick's surprise; the log has the details
                _log.exception("the cron scheduler failed unexpectedly; trying again")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(pause):
                    await self._wake.wait()

    async def tick(self) -> float:
        """Claim and fire every slot due now; the seconds until the next slot (at most ``max_sleep``)."""
        while True:
            now = self.clock()
            slot = await offload.to_thread(self.crons.next_due)
            if slot is None or slot > now:
                return self.max_sleep if slot is None else min(self.max_sleep, slot - now)
            await self._fire_due(now)

    async def _fire_due(self, now: float) -> None:
        """Claim and fire every slot due at ``now``."""
        for cron in await offload.to_thread(self.crons.due, now):
            slot = cron.next_run_at
            if slot is None:
                continue
            after = following(cron.schedule, cron.timezone, cron.end_time, now)
            if await offload.to_thread(self.crons.claim_slot, cron.cron_id, slot, after):
                await self.fire(cron, slot)
