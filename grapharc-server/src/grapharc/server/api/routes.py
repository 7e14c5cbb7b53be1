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
    ``context``'s sessions on ``app``."""
    app.state.api = context
    for module in (info, assistants, assistant_writes, prune, threads, state_writes, thread_stream, crons,
                   runs, bulk_runs, stateless):
        app.include_router(module.router, dependencies=[Depends(caller)])


def mount_store(app: FastAPI, served: GraphARCStore) -> None:
    """Serve ``served`` at ``/store`` on ``app`` (with an auth file, to the users its grants name)."""
    app.state.store = served
    app.include_router(store.router, dependencies=[Depends(caller)])
