"""Runs created with a ``webhook``: the URL checked against the egress rule where the run is asked
for (422 naming the rule), its delivery recorded before the run is queued, and the process's
sender (``grapharc.server.webhooks.sender``) over the webhook store beside the runs.

A hook is posted once its run has ended, whatever the end: ``success``, ``error`` or
``interrupted`` (paused on an approval or interrupt, or cancelled), as LangGraph's server posts one
at the completion of every run. A run deleted before it ended (a ``rollback`` cancel) has no
record to post, and its delivery is failed.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

from grapharc.runs.contracts import RunStore
from grapharc.runs.records import RunRecord
from grapharc.server.api import shapes
from grapharc.server.api.problems import ApiProblem
from grapharc.server.webhooks.egress import WebhookRefusedError
from grapharc.server.webhooks.sender import WebhookSender
from grapharc.server.webhooks.settings import WebhookSettings
from grapharc.stores import offload
from grapharc.stores.masking import masked
from grapharc.stores.uris import open_store, store_uri
from grapharc.webhooks.contracts import WebhookStore
from grapharc.webhooks.errors import WebhookStoreError
from grapharc.webhooks.records import Delivery


class Webhooks:
    """The webhooks of one process: the settings, the store (None when the sessions' scheme has
    none) and the sender over it."""

    def __init__(self, store: WebhookStore | None, runs: RunStore, settings: WebhookSettings,
                 name: str, clock: Callable[[], float]) -> None:
        self.store = store
        self.runs = runs
        self.settings = settings
        self.clock = clock
        self.sender = None if store is None else WebhookSender(store, runs, settings, name, clock, shapes.run)

    def start(self) -> None:
        """Start posting the hooks of ended runs."""
        if self.sender is not None:
            self.sender.start()

    def run_ended(self, run: RunRecord) -> None:
        """``run`` ended in this process: if it has a hook, the sender looks now rather than at its
        next poll (a run without one costs no look: ``RunRecord.webhook``)."""
        if self.sender is not None and run.webhook:
            self.sender.wake()

    async def aclose(self) -> None:
        """Stop the sender and close the store."""
        if self.sender is not None:
            await self.sender.stop()
        if self.store is not None:
            await offload.to_thread(self.store.close)

    async def checked(self, url: str | None) -> str | None:
        """``url`` once the egress rule lets hooks reach it (422 naming the rule otherwise)."""
        if url is None:
            return None
        if self.store is None:
            raise ApiProblem(422, "this server's session store keeps no webhook deliveries, so a run "
                                  f"cannot have a webhook (refused {masked(url)})",
                             hint="serve over sqlite: or postgresql:, or leave webhook out")
        try:
            await offload.to_thread(self.settings.rule.target, url)
        except WebhookRefusedError as exc:
            raise ApiProblem(422, str(exc), hint=exc.hint) from None
        return url

    def stores(self, url: str | None) -> tuple[object, ...]:
        """The stores ``add_run`` changes for a run with a hook to ``url`` (``offload.nearby`` runs it
        in place where they all allow it)."""
        return (self.runs,) if url is None or self.store is None else (self.runs, self.store)

    def add_run(self, run: RunRecord, url: str | None, *, exclusive: bool) -> RunRecord:
        """Queue ``run`` (``RunStore.add``), its delivery to ``url`` recorded first, so it cannot
        end without one; a refused run leaves no delivery behind."""
        if url is None or self.store is None:
            return self.runs.add(run, exclusive=exclusive)
        run = dataclasses.replace(run, webhook=True)
        self.store.expect(Delivery(run_id=run.run_id, thread_id=run.thread_id, url=url,
                                   created_at=self.clock()))
        try:
            return self.runs.add(run, exclusive=exclusive)
        except BaseException:
            self.store.forget(run.run_id)
            raise


def open_webhooks(sessions: str | os.PathLike[str], runs: RunStore, settings: WebhookSettings,
                  name: str, clock: Callable[[], float], *, kept: bool) -> Webhooks:
    """The webhooks of the sessions at ``sessions`` (their store beside the run store); none kept
    unless ``kept`` (their scheme's plugin registers a webhook store)."""
    if not kept:
        return Webhooks(None, runs, settings, name, clock)
    store = open_store(store_uri(sessions, "webhooks"), kind="webhooks")
    if not isinstance(store, WebhookStore):
        raise WebhookStoreError(f"the webhooks store for {masked(str(sessions))} is "
                                f"{type(store).__name__!r}, not a WebhookStore",
                                hint="the distribution that registered its scheme must return one "
                                     "(see grapharc.webhooks.contracts)")
    return Webhooks(store, runs, settings, name, clock)
