"""Each server process's webhook loop: it claims the due deliveries of ended runs and posts them.

When a run with a webhook ends in this process (``wake``), and otherwise every ``POLL_SECONDS``
(for retries coming due and runs that ended in other processes), the loop asks the store whether any delivery
is due (``WebhookStore.has_due``, a read: an idle look writes nothing, and takes no trip to a thread
where the store's reads may run on the event loop); only then does it claim the
deliveries whose run has ended and whose next attempt is due (``WebhookStore.claim_due``: of
several processes exactly one claims each attempt) and post each in a task of its own.

The first attempt fixes the body, the run's record as ``GET /threads/{id}/runs/{run_id}`` answers
it, so every retry sends the same bytes. A 2xx marks
the delivery delivered; a 5xx, a timeout or a connection error puts the next attempt off by the
backoff, until ``attempts`` are used up; a 4xx gives up at once. A process that dies mid-attempt
leaves its claim to run out, and the attempt is made again (delivery is at least once: a receiver
that answered 2xx to a process killed before it recorded so gets the hook again, with the same
``X-GraphARC-Delivery``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

import httpx

from grapharc.errors import GraphARCError
from grapharc.runs.contracts import RunStore
from grapharc.runs.errors import UnknownRunError
from grapharc.runs.records import RunRecord
from grapharc.server.webhooks.attempt import Next, Outcome, post
from grapharc.server.webhooks.settings import WebhookSettings
from grapharc.stores import offload
from grapharc.webhooks.contracts import WebhookStore
from grapharc.webhooks.records import Delivery

POLL_SECONDS = 1.0
"""How often the loop looks unwoken: how late a retry or another process's ended run may be sent."""
CLAIM_MARGIN_SECONDS = 5.0
"""How long past an attempt's own bound its claim holds, before another process may take it."""
BATCH = 32
"""The most deliveries one look claims."""
_log = logging.getLogger("grapharc.server")


class WebhookSender:
    """The loop of one process (``name``) over ``store``, rendering each run with ``render``."""

    def __init__(self, store: WebhookStore, runs: RunStore, settings: WebhookSettings, name: str,
                 clock: Callable[[], float], render: Callable[[RunRecord], dict[str, Any]]) -> None:
        self.store = store
        self.runs = runs
        self.settings = settings
        self.name = name
        self.clock = clock
        self.render = render
        self._sending: set[asyncio.Task[None]] = set()
        self._loop: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._client: httpx.AsyncClient | None = None
        self._reads_on_loop = offload.reads_on_loop(store)

    def start(self) -> None:
        """Start the loop on the running event loop."""
        self._client = httpx.AsyncClient(timeout=self.settings.timeout, follow_redirects=False,
                                         trust_env=False)
        self._loop = asyncio.get_running_loop().create_task(self._run(), name=f"webhooks:{self.name}")

    def wake(self) -> None:
        """Look now (a run with a hook ended here: the hook is due)."""
        self._wake.set()

    async def stop(self) -> None:
        """Stop the loop and the attempts in flight (their claims run out: they are made again)."""
        tasks = [t for t in (self._loop, *self._sending) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()

    async def _run(self) -> None:
        """Look, then sleep until woken or ``POLL_SECONDS`` pass. The wait is ``asyncio.timeout``,
        not ``wait_for``, for the reason ``RunWorker._run`` gives."""
        while True:
            self._wake.clear()  # before the look: a run ending during it makes the next look at once
            try:
                for delivery in await self._look():
                    task = asyncio.get_running_loop().create_task(self._deliver(delivery),
                                                                  name=f"webhook:{delivery.run_id}")
                    self._sending.add(task)
                    task.add_done_callback(self._sending.discard)
            except GraphARCError as exc:  # a store that cannot be reached: say so, try again
                _log.warning("webhooks %s: %s", self.name, exc)
            except Exception:  # the loop outlives any one look's surprise; the log has the details
                _log.exception("webhooks %s: unexpected failure; trying again", self.name)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(POLL_SECONDS):
                    await self._wake.wait()

    async def _look(self) -> list[Delivery]:
        """``_claim`` in a trip to a thread, but where the store's reads may run on the loop and say
        that nothing is due: none, with no trip."""
        if self._reads_on_loop and not self.store.has_due(self.clock()):
            return []
        return await offload.to_thread(self._claim)

    def _claim(self) -> list[Delivery]:
        """The deliveries claimed for this look: none, and nothing written, when none is due."""
        now = self.clock()
        if not self.store.has_due(now):
            return []
        return self.store.claim_due(self.name, now, self.settings.timeout + CLAIM_MARGIN_SECONDS, BATCH)

    async def _deliver(self, delivery: Delivery) -> None:
        """Make one attempt at ``delivery`` and record how it went."""
        assert self._client is not None  # noqa: S101 -- narrows the type: started before any claim
        try:
            body = delivery.body or await offload.to_thread(self._fixed_body, delivery)
            if body is None:
                return
            outcome = await post(self._client, self.settings, delivery.url, delivery.run_id, body.encode())
            await offload.to_thread(self._record, delivery, outcome)
        except GraphARCError as exc:  # the store failed: the claim runs out and the attempt is made again
            _log.warning("webhooks %s: run %s: %s", self.name, delivery.run_id, exc)
        except Exception:  # a task's surprise would otherwise go unseen; its claim runs out as above
            _log.exception("webhooks %s: run %s: unexpected failure; its claim will run out and the attempt "
                           "be made again", self.name, delivery.run_id)

    def _fixed_body(self, delivery: Delivery) -> str | None:
        """The run's record as JSON, kept as the body of every attempt; None (the delivery failed)
        when the run is gone."""
        try:
            run = self.runs.get(delivery.thread_id, delivery.run_id)
        except UnknownRunError as exc:
            self.store.fail(delivery.run_id, self.name, f"its run no longer exists: {exc}")
            return None
        body = json.dumps(self.render(run), ensure_ascii=False)
        self.store.keep_body(delivery.run_id, self.name, body)
        return body

    def _record(self, delivery: Delivery, outcome: Outcome) -> None:
        """Mark the delivery delivered, put off, or failed (the last attempt failed too)."""
        run_id, now = delivery.run_id, self.clock()
        if outcome.next is Next.DONE:
            self.store.delivered(run_id, self.name, now)
            return
        error = outcome.error or "failed"
        if outcome.next is Next.GIVE_UP or delivery.attempts >= self.settings.attempts:
            _log.warning("webhooks %s: run %s: gave up after %d attempt(s): %s", self.name, run_id,
                         delivery.attempts, error)
            self.store.fail(run_id, self.name, f"{error} (attempt {delivery.attempts})")
            return
        self.store.retry(run_id, self.name, f"{error} (attempt {delivery.attempts})",
                         now + self.settings.backoff(delivery.attempts))
