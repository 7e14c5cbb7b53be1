"""Leases, not claims: a runner holds a thread for a short time and keeps renewing it.

A claim is taken in one ``BEGIN IMMEDIATE`` transaction, so of two runners racing
for one thread exactly one wins and the other is told who holds it. While a turn
runs, a heartbeat renews the lease every third of its time to live: on a thread for a
sync turn, on an asyncio task for an async one (no thread per session). A runner that
dies stops renewing; once its lease expires the thread is reclaimable and resumes
from its last checkpoint. A runner whose renewal fails (it stalled past its expiry
and someone took over) stops at its next superstep with ``LeaseLostError``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

from grapharc.session.errors import LeaseLostError
from grapharc.stores import offload


@dataclass(frozen=True, slots=True)
class Lease:
    """A runner's hold on one thread for one turn; ``token`` fences its writes."""

    thread_id: str
    runner: str
    token: str
    ttl: float
    turn: dict[str, Any] = field(default_factory=dict)


class _Beat:
    """What both heartbeats share: the lease, how to renew it, and whether it was lost."""

    def __init__(self, lease: Lease, renew: Callable[[Lease], bool]) -> None:
        self.lease = lease
        self.renew = renew
        self.interval = lease.ttl / 3
        self.lost = False

    def check(self) -> None:
        """Raise ``LeaseLostError`` if a renewal found the lease gone."""
        if self.lost:
            raise LeaseLostError(
                f"runner {self.lease.runner} lost its lease on thread {self.lease.thread_id}; "
                "another runner has taken the thread over",
                hint="this runner stalled past its lease; the new holder carries on")


class Heartbeat(_Beat):
    """Renews a lease from a background thread while a sync turn runs."""

    def __enter__(self) -> Self:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease:{self.lease.thread_id}",
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            if not self.renew(self.lease):
                self.lost = True
                return


class AsyncHeartbeat(_Beat):
    """Renews a lease from an asyncio task while an async turn runs."""

    async def __aenter__(self) -> Self:
        self._task = asyncio.create_task(self._run(), name=f"lease:{self.lease.thread_id}")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if not await offload.to_thread(self.renew, self.lease):
                self.lost = True
                return
