"""Mount the JSON API on an app: its routes and the session context, and the long-term store's routes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import Depends, FastAPI

from grapharc.server.api import (
    assistant_writes,
    assistants,
    bulk_runs,
    crons,
    info,
    prune,
    runs,
    state_writes,
    stateless,
    store,
    thread_stream,
    threads,
)
from grapharc.server.api.context import ApiContext, caller

if TYPE_CHECKING:
    from grapharc.memory.longterm import GraphARCStore


def mount_api(app: FastAPI, context: ApiContext) -> None:
    """Serve assistants, threads, their runs, their cron schedules and stateless runs over
    ``context``'s sessions on ``app``.

    The routers' order is the order of ``/openapi.json``, and the order FastAPI tries them in where
    the app's route index (``grapharc.server.route_index``) does not find the route at once, so the
    routers a run's requests need come first. Where the paths of two routers overlap, the first
    answers a method neither takes (405, naming its methods), so these keep their order:
    prune before threads (``/threads/prune``), threads before state_writes
    (``/threads/{id}/state``), crons before runs (``/threads/{id}/runs/crons``), assistants before
    assistant_writes (``/assistants/{id}``)."""
    app.state.api = context
    for module in (prune, threads, crons, runs, info, assistants, assistant_writes, state_writes,
                   thread_stream, bulk_runs, stateless):
        app.include_router(module.router, dependencies=[Depends(caller)])


def mount_store(app: FastAPI, served: GraphARCStore) -> None:
    """Serve ``served`` at ``/store`` on ``app`` (with an auth file, to the users its grants name)."""
    app.state.store = served
    app.include_router(store.router, dependencies=[Depends(caller)])
