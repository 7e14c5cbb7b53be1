"""Each ``grapharc serve`` process's cron scheduler: it fires the schedules whose slot has come.

Every ``POLL_SECONDS`` the loop reads the time (``grapharc.server.cron_clock``, the one clock it
reads) and asks the cron store for the schedules due. For each it claims the slot by moving the
schedule's ``next_run_at`` from that slot on to its first slot after *now*
(``CronStore.claim_slot``, one conditional UPDATE): whichever process's scheduler moves it fires the
slot, every other finds it moved. So a slot fires once however many processes serve the store, a
restarted server carries on from the stored next slot, and slots missed while no server ran are one
catch-up run (the next slot is counted from now, not from the missed one), never a burst.

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

POLL_SECONDS = 1.0
"""How often the scheduler looks for due schedules (the finest a slot fires late by)."""

Fire = Callable[[CronRecord, float], Awaitable[None]]
"""Start the run of a schedule's slot (the schedule as it was when due, the slot's epoch seconds)."""

_log = logging.getLogger("grapharc.server")


class CronScheduler:
    """The loop that fires due slots of ``crons`` through ``fire``, reading time from ``clock``."""

    def __init__(self, crons: CronStore, fire: Fire, *, clock: cron_clock.Clock = cron_clock.now,
                 poll: float = POLL_SECONDS) -> None:
        self.crons = crons
        self.fire = fire
        self.clock = clock
        self.poll = poll
        self._loop: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the loop on the running event loop."""
        self._loop = asyncio.get_running_loop().create_task(self._run(), name="crons")

    async def stop(self) -> None:
        """Stop the loop (a run already queued stays queued)."""
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop

    async def _run(self) -> None:
        while True:
            try:
                await self.tick()
            except GraphARCError as exc:  # the store failed this time (unreachable, locked): try again
                _log.warning("the cron scheduler could not read its schedules: %s", exc)
            except Exception:  # the loop outlives any one tick's surprise; the log has the details
                _log.exception("the cron scheduler failed unexpectedly; trying again")
            await asyncio.sleep(self.poll)

    async def tick(self) -> list[tuple[CronRecord, float]]:
        """Claim and fire every slot due now; the schedules and slots this call fired."""
        now = self.clock()
        fired = []
        for cron in await offload.to_thread(self.crons.due, now):
            slot = cron.next_run_at
            if slot is None:
                continue
            after = following(cron.schedule, cron.timezone, cron.end_time, now)
            if await offload.to_thread(self.crons.claim_slot, cron.cron_id, slot, after):
                await self.fire(cron, slot)
                fired.append((cron, slot))
        return fired
