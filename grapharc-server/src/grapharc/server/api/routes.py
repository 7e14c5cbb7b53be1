"""Mount the JSON API on an app: its routes, problem documents, body limits, the session context."""

from __future__ import annotations

from fastapi import Depends, FastAPI

from grapharc.server.api import assistants, runs, stateless, threads
from grapharc.server.api.context import ApiContext, caller
from grapharc.server.api.limits import BodyLimits
from grapharc.server.api.problems import install_problem_handlers


def mount_api(app: FastAPI, context: ApiContext) -> None:
    """Serve assistants, threads, their runs and stateless runs over ``context``'s sessions on ``app``."""
    app.state.api = context
    for module in (assistants, threads, runs, stateless):
        app.include_router(module.router, dependencies=[Depends(caller)])
    install_problem_handlers(app)
    app.add_middleware(BodyLimits)
