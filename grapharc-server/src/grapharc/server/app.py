"""The HTTP application: health and the plugin inventory, read from core's registries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import FastAPI

from grapharc._version import __version__

if TYPE_CHECKING:
    from grapharc.server.auth import AuthConfig


def create_app(*, sessions: str | None = None, auth: AuthConfig | None = None) -> FastAPI:
    """Build the FastAPI app (a fresh one per call, so tests can hold their own); the approval
    inbox is served when both the ``sessions`` location and the ``auth`` file are given."""
    app = FastAPI(title="GraphARC", version=__version__)
    app.state.auth = auth  # None: nobody signs in (loopback only); API routes check bearer tokens with it
    if sessions is not None and auth is not None:
        from grapharc.server.inbox.routes import inbox_router

        app.include_router(inbox_router(sessions, auth))

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"ok": True, "version": __version__}

    @app.get("/plugins")
    def plugins() -> dict[str, Any]:
        from grapharc.plugins.report import plugin_report

        return plugin_report()

    return app
