"""Serving the inbox on an app: the pending list and decisions (``routes``), the decided list and
thread pages (``lists``), the live list (``live``), the pages that say why a request was refused,
and the one stylesheet and script the pages load (``static``, as their CSP asks)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from grapharc.server.auth import AuthConfig
from grapharc.server.inbox import lists, live, routes

STATIC = Path(__file__).with_name("static")


def mount_inbox(app: FastAPI, auth: AuthConfig) -> None:
    """Serve the inbox on ``app`` for the users of ``auth``, over the app's sessions
    (``app.state.sessions``); a thread of a graph the app's API registered (``app.state.api``)
    is carried on by its run worker."""
    app.state.pages = routes.Pages(auth)
    app.exception_handler(routes.SignInFirst)(routes.to_signin)
    app.exception_handler(routes.PageRefused)(routes.refused_page)
    for module in (routes, lists, live):
        app.include_router(module.router)
    app.mount(f"{routes.PREFIX}/static", StaticFiles(directory=STATIC), name="inbox-static")
