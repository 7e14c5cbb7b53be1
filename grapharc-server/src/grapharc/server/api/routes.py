"""Mount the JSON API on an app: its routes and the session context."""

from __future__ import annotations

from fastapi import Depends, FastAPI

from grapharc.server.api import (
    assistant_writes,
    assistants,
    bulk_runs,
    crons,
    info,
    prune,
    refused,
    runs,
    state_writes,
    stateless,
    thread_stream,
    threads,
)
from grapharc.server.api.context import ApiContext, caller


def mount_api(app: FastAPI, context: ApiContext) -> None:
    """Serve assistants, threads, their runs and stateless runs over ``context``'s sessions on ``app``,
    and answer the LangGraph Platform routes it does not serve with the reason."""
    app.state.api = context
    for module in (info, assistants, assistant_writes, prune, threads, state_writes, thread_stream, crons,
                   runs, bulk_runs, stateless, refused):
        app.include_router(module.router, dependencies=[Depends(caller)])
